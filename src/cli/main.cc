// The `sessiondb` command: parses the global options and dispatches to a verb.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"

namespace {

constexpr const char* kFooter = R"(
Store location: --store DIR, else $SESSIONDB_STORE, else $XDG_DATA_HOME/sessiondb,
else ~/.local/share/sessiondb.

Examples:
  sessiondb init
  sessiondb new --title "Bug triage" --meta project=/src/app
  sessiondb append SID "What is in this screenshot?" --image shot.png
  echo "Summarise the log" | sessiondb append SID --role user
  sessiondb show SID --last 10
  sessiondb show SID --json --data-uris
  sessiondb ls --all --json
  sessiondb archive SID && sessiondb purge --older-than 30
  sessiondb gc --dry-run && sessiondb verify

Exit codes: 0 ok, 1 usage, 2 invalid argument, 3 not found, 4 already exists,
5 busy, 6 storage error, 7 store from a newer version, 8 verify found problems.
Run `sessiondb VERB --help` for a verb's options.)";

}  // namespace

int main(int argc, char** argv) {
  using namespace sessiondb::cli;
  CliContext ctx;
  CLI::App app{"sessiondb: an embedded database for LLM conversations and their images"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--store", ctx.options.store, "Store directory");
  app.add_flag("--json", ctx.options.json, "Print machine-readable JSON");
  app.add_flag("--fast", ctx.options.fast,
               "Do not fsync before returning (survives a process crash, not power loss)");
  app.add_option("--max-image-bytes", ctx.options.max_image_bytes,
                 "Largest image accepted, in bytes (default 5 MiB)");
  app.add_option("--max-images", ctx.options.max_images,
                 "Most images accepted per message (default 5)");
  AddSessionCommands(app, ctx);
  AddMessageCommands(app, ctx);
  AddHousekeepingCommands(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return ctx.exit_code;
}
