#include "cli/command_line.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/numeric_options.h"
#include "cli/usage_error.h"
#include "cli/verb_suggestion.h"

#ifndef SESSIONDB_VERSION
#error "SESSIONDB_VERSION comes from CMake's project(... VERSION ...)"
#endif

namespace sessiondb::cli {
namespace {

constexpr const char* kFooter = R"(
Examples:
  sessiondb init
  SID=$(sessiondb new --title "Bug triage" --meta project=/src/app)
  sessiondb append "$SID" "What is this?" --image shot.png
  git diff | sessiondb append "$SID" --role user
  sessiondb append "$SID" --role assistant "A stack trace." --model gpt-4o
  sessiondb show "$SID" --last 10
  sessiondb show "$SID" --json --data-uris > chat.json
  FORK=$(sessiondb fork "$SID" --at 4) && sessiondb append "$FORK" "Try again"
  sessiondb compact "$SID" --from 1 --to 40 --summary-file summary.md --model gpt-5
  sessiondb project "$SID" --format anthropic
  sessiondb ls --all --meta project=/src/app
  sessiondb archive "$SID" && sessiondb purge --older-than 30
  sessiondb gc --dry-run && sessiondb verify
  sessiondb --store postgresql://me@db.internal/chats?namespace=team-a ls
  sessiondb import ~/.claude/projects && sessiondb export --format markdown --out md/
  sessiondb copy --from ~/.local/share/sessiondb --to postgresql://me@db.internal/chats
  sessiondb sync postgresql://me@db.internal/chats

Store location: --store DIR|URI, else $SESSIONDB_STORE, else $XDG_DATA_HOME/sessiondb,
else $HOME/.local/share/sessiondb. A postgresql:// URI names a shared PostgreSQL
store. Global options may also follow the verb.

Exit codes: 0 ok, 1 usage, 2 invalid argument, 3 not found, 4 already exists,
5 busy, 6 storage error (corruption, I/O), 7 failed precondition (e.g. a store
from a newer sessiondb, permission denied), 8 verify found problems, 9 an import
of a folder skipped files it could not read (the rest came in).
Run `sessiondb VERB --help` for a verb's options and an example.)";

// True if --json appears among the arguments, so that a command line that
// does not parse still answers a script in JSON.
bool JsonRequested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (std::strcmp(argv[i], "--json") == 0) return true;
  }
  return false;
}

void AddGlobalOptions(CLI::App& app, GlobalOptions& options) {
  app.add_option("--store", options.store,
                 "Store directory or postgresql:// URI; default $SESSIONDB_STORE, else "
                 "$XDG_DATA_HOME/sessiondb, else ~/.local/share/sessiondb")
      ->option_text("DIR|URI");
  app.add_option("--namespace", options.namespace_name,
                 "PostgreSQL stores: the namespace (user, team, project) to work in; "
                 "default $SESSIONDB_NAMESPACE, else the URI's, else \"default\"")
      ->option_text("NAME");
  app.add_flag("--json", options.json, "Print one JSON document on stdout instead of text");
  app.add_flag("--no-pager", options.no_pager,
               "Do not page long output on a terminal ($SESSIONDB_PAGER, $PAGER, less -FRX)");
  app.add_flag("--fast", options.fast,
               "Do not fsync before an append returns: survives a crash of the process, "
               "not a power loss");
  app.add_option("--max-image-bytes", options.max_image_bytes,
                 "Largest image accepted, e.g. 20MiB (default 5 MiB)")
      ->transform(CLI::AsSizeValue(true))
      ->option_text("SIZE");
  app.add_option("--max-file-bytes", options.max_file_bytes,
                 "Largest non-image attachment accepted, e.g. 1GiB (default 100 MiB)")
      ->transform(CLI::AsSizeValue(true))
      ->option_text("SIZE");
  app.add_option("--max-images", options.max_images, "Most images per message (default 5)")
      ->check(NumberIn(0, std::numeric_limits<int32_t>::max()))
      ->option_text("N");
  app.add_option("--key-file", options.key_file,
                 "Encrypted stores: the file holding the master key or passphrase (mode 0600); "
                 "default $SESSIONDB_KEY_FILE. A new store made with a key is encrypted "
                 "(docs/encryption.md)")
      ->option_text("FILE");
}

// `sessiondb version`: the same line as --version, or {"version": "..."}.
void AddVersionCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("version", "Print the version of sessiondb");
  cmd->footer("\nExample:\n  sessiondb version --json");
  cmd->callback([&ctx] {
    if (ctx.options.json) return ctx.PrintJson({{"version", SESSIONDB_VERSION}});
    std::cout << "sessiondb " << SESSIONDB_VERSION << "\n";
  });
}

// The first word of the command line that is neither a global option nor
// the value of one (the verb, or what was typed for it), or the first word
// before it that looks like an option but is no global option; nullopt when
// there is neither.
struct FirstWord {
  std::string word;
  bool unknown_option = false;
};
std::optional<FirstWord> FirstWordOf(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      return i + 1 < argc ? std::optional<FirstWord>(FirstWord{argv[i + 1]}) : std::nullopt;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      const std::string name = arg.substr(0, arg.find('='));
      const CLI::Option* option = app.get_option_no_throw(name);
      if (option == nullptr) return FirstWord{name, /*unknown_option=*/true};
      if (name.size() == arg.size() && option->get_items_expected_min() > 0) ++i;  // its value
      continue;
    }
    return FirstWord{arg};
  }
  return std::nullopt;
}

// Says so, git's way, when the verb is not one of ours or an option before
// it is no global option; true if it did.
bool RejectBeforeTheVerb(const CLI::App& app, int argc, char** argv, bool json) {
  const std::optional<FirstWord> first = FirstWordOf(app, argc, argv);
  if (!first) return false;
  if (first->unknown_option) {
    const UsageError error = UnknownGlobalOption(app, first->word);
    std::cerr << EscapeForTerminal(error.text);
    if (json) PrintJson({{"error", {{"code", "usage"}, {"message", error.message}}}});
    return true;
  }
  const std::string& typed = first->word;
  std::vector<std::string> verbs;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == typed) return false;
    verbs.push_back(sub->get_name());
  }
  const std::string message = UnknownVerbMessage(typed, SimilarNames(typed, verbs));
  std::cerr << EscapeForTerminal(message);
  if (json) {
    PrintJson({{"error",
                {{"code", "usage"}, {"message", "'" + typed + "' is not a sessiondb command"}}}});
  }
  return true;
}

// The global options as a footer for every verb's --help: CLI11 shows a
// subcommand's own options only, and these work after the verb too.
std::string GlobalOptionsFooter(const CLI::App& app) {
  std::string out = "\nGlobal options (before or after the verb; see `sessiondb --help`):\n";
  for (const CLI::Option* option : app.get_options()) {
    if (option->check_name("--help") || option->check_name("--version")) continue;
    const std::string name = option->get_name(false, true);
    std::string left = "  " + name;
    if (!option->get_option_text().empty()) left += " " + option->get_option_text();
    if (left.size() < 26) left.resize(26, ' ');
    out += left + " " + option->get_description() + "\n";
  }
  return out;
}

// Appends the global options to the help of `cmd` and of every verb below it.
void AddGlobalOptionsToHelp(CLI::App& cmd, const std::string& footer) {
  for (CLI::App* sub : cmd.get_subcommands({})) {
    sub->footer(sub->get_footer() + "\n" + footer);
    AddGlobalOptionsToHelp(*sub, footer);
  }
}

// Every verb but those of AddSessionCommands and AddMessageCommands.
void AddVerbsBeyondSessionsAndMessages(CLI::App& app, CliContext& ctx) {
  AddHarnessCommands(app, ctx);
  AddUsageCommand(app, ctx);
  AddInteropCommands(app, ctx);
  AddHousekeepingCommands(app, ctx);
  AddForgetCommands(app, ctx);
  AddKeyCommands(app, ctx);
  AddSearchCommands(app, ctx);
  AddMemoryCommands(app, ctx);
  AddCheckpointCommands(app, ctx);
  AddSyncCommand(app, ctx);
  AddServeCommand(app, ctx);
  AddMcpCommand(app, ctx);
  AddDemoCommand(app, ctx);
  AddOpenCommand(app, ctx);
  AddVersionCommand(app, ctx);
}

}  // namespace

std::optional<int> RunCommandLine(CliContext& ctx, int argc, char** argv,
                                  const std::vector<std::string>* only_verbs) {
  ctx.SetCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  CLI::App app{"sessiondb: an embedded database for LLM chat sessions and their images",
               "sessiondb"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("sessiondb ") + SESSIONDB_VERSION,
                       "Print the version and exit");
  app.fallthrough();  // `sessiondb show SID --json` works as well as `sessiondb --json show SID`
  AddGlobalOptions(app, ctx.options);
  AddSessionCommands(app, ctx);
  AddMessageCommands(app, ctx);
  // A read the resident server answers (served_reads.h) needs its own verb
  // only: the rest would be built on every call for nothing.
  if (only_verbs == nullptr) AddVerbsBeyondSessionsAndMessages(app, ctx);

  // Set after the verbs exist: CLI11 gives a new subcommand its parent's
  // footer, and the root's examples are no verb's.
  AddGlobalOptionsToHelp(app, GlobalOptionsFooter(app));
  RequireStrictNumbers(app);
  app.footer(kFooter);
  // The shells' completions ask the program (dist/completions/).
  if (argc > 1 && std::strcmp(argv[1], "__complete") == 0) {
    if (only_verbs != nullptr) return std::nullopt;
    return CompleteCommandLine(app, ctx, std::vector<std::string>(argv + 2, argv + argc));
  }
  if (only_verbs != nullptr) {
    const std::optional<FirstWord> first = FirstWordOf(app, argc, argv);
    if (!first || first->unknown_option ||
        std::find(only_verbs->begin(), only_verbs->end(), first->word) == only_verbs->end()) {
      return std::nullopt;
    }
  }
  if (RejectBeforeTheVerb(app, argc, argv, JsonRequested(argc, argv))) return kExitUsage;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const UsageError error = DescribeParseError(app, e);
    if (JsonRequested(argc, argv)) {
      PrintJson({{"error",
                  {{"code", error.invalid_argument ? "invalid_argument" : "usage"},
                   {"message", error.message}}}});
    }
    // What the user typed is quoted in the message: escaped, as all output is.
    std::cerr << EscapeForTerminal(error.text);
    return error.invalid_argument ? kExitInvalidArgument : kExitUsage;
  } catch (const std::exception& e) {
    // The library returns errors as values; this is a bug or an allocation failure.
    ctx.Fail(sessiondb::Status::Internal(e.what()));
  }
  return ctx.ExitCodeAfterFlush();
}

}  // namespace sessiondb::cli
