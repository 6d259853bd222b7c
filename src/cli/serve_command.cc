// `sessiondb serve`: the HTTP API, live events and the web history browser
// over the store (docs/http-api.md, docs/web.md).
#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/shell_words.h"
#include "server/demo_history.h"
#include "server/http_server.h"

namespace sessiondb::cli {

namespace {

// Blocks SIGINT and SIGTERM in this thread and every thread it starts later,
// so that only the watcher receives them (with sigwait) and can stop the
// server from an ordinary thread.
sigset_t BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that went away is an error value, not a death
  return set;
}

// Says, on stderr, where the agents' own histories are when the store has
// none yet, with the command that imports each. Nothing is imported here: a
// person decides what goes into their store.
void SuggestImports(const CliContext& ctx) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return;
  const std::string command = SelfCommandWord() + " --store " +
                              ShellQuote(AbsoluteStoreLocation(ctx.StorePath())) +
                              (ctx.options.namespace_name.empty()
                                   ? ""
                                   : " --namespace " + ShellQuote(ctx.options.namespace_name));
  struct Source {
    const char* agent;
    const char* folder;
  };
  for (const Source& source :
       {Source{"Claude Code", "/.claude/projects"}, Source{"Codex", "/.codex/sessions"}}) {
    const std::string folder = std::string(home) + source.folder;
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec)) continue;
    std::cerr << "sessiondb: the store is empty, and " << source.agent << " history is in "
              << folder << "; to import it, run:\n  " << command << " import " << ShellQuote(folder)
              << "\n";
  }
}

}  // namespace

void AddServeCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    server::ServerOptions options;
    bool demo = false;
    bool no_embed = false;
  };
  auto args = std::make_shared<Args>();
  server::ServerOptions& o = args->options;
  auto* cmd = app.add_subcommand(
      "serve", "Serve the store over HTTP: the JSON API (/v1), live events, the web browser (/)");
  cmd->add_option("--host", o.host,
                  "Address to listen on (default 127.0.0.1; any other needs a token)")
      ->option_text("ADDR");
  cmd->add_option("--port", o.port, "Port (default 7411; 0 picks a free one)")
      ->check(CLI::Range(0, 65535))
      ->option_text("N");
  cmd->add_option("--token", o.token,
                  "Require this token (Authorization: Bearer); default $SESSIONDB_TOKEN")
      ->option_text("TOKEN");
  cmd->add_option("--allow-dir", o.allowed_dirs,
                  "A folder whose files /v1/import/path and /v1/export may use (repeatable; "
                  "default none)")
      ->option_text("DIR");
  cmd->add_option("--cors-origin", o.cors_origins,
                  "An origin allowed to call the API from a browser (repeatable; default none: "
                  "CORS off)")
      ->option_text("ORIGIN");
  cmd->add_option("--max-body", o.max_body_bytes,
                  "Largest request body, e.g. 256MiB (default 64 MiB)")
      ->transform(CLI::AsSizeValue(true))
      ->option_text("SIZE");
  cmd->add_option("--allow-host", o.allowed_hosts,
                  "A Host name requests may carry besides localhost, IP addresses and --host "
                  "(e.g. a reverse proxy's); repeatable")
      ->option_text("NAME");
  cmd->add_option("--threads", o.threads, "Requests handled at once; more wait (default 64)")
      ->option_text("N");
  cmd->add_option("--max-streams", o.max_streams, "Live event streams open at once (default 16)")
      ->option_text("N");
  cmd->add_option("--max-connections", o.max_connections,
                  "Connections open at once, each with its thread (default 1024)")
      ->option_text("N");
  cmd->add_option("--max-per-ip", o.max_connections_per_ip,
                  "Connections open at once from one client address (default 256)")
      ->option_text("N");
  cmd->add_option("--header-timeout", o.header_timeout_seconds,
                  "Seconds a client has to send a request's headers (default 10)")
      ->option_text("SECONDS");
  cmd->add_flag("--no-embed", args->no_embed,
                "Do not embed new documents in the background (vector search then sees what "
                "`sessiondb reindex` embedded)");
  cmd->add_flag("--demo", args->demo,
                "Seed a small demo history first, only when the store has no sessions at all "
                "(marked \"demo\": true; `sessiondb demo --remove` removes it)");
  cmd->footer(
      "\nOpen the printed address in a browser to read and search the history. Apps use the\n"
      "JSON API under /v1 (docs/http-api.md). Ctrl-C stops the server; open drafts are saved.\n"
      "On an empty store, if ~/.claude/projects or ~/.codex/sessions exist, it prints the\n"
      "`sessiondb import` command for each; it never imports by itself.\n"
      "\nExamples:\n  sessiondb serve --demo\n  sessiondb serve --store ~/chats --port 0\n"
      "  SESSIONDB_TOKEN=s3cret sessiondb serve --host 0.0.0.0 --allow-dir ~/exports");
  cmd->callback([&ctx, args] {
    server::ServerOptions options = args->options;
    options.background_embedding = !args->no_embed;
    if (options.token.empty()) {
      if (const char* token = std::getenv("SESSIONDB_TOKEN")) options.token = token;
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/true);
    if (!store) return;
    auto any = store->ListSessions({.limit = 1, .archived = ArchiveFilter::kAll});
    if (!any) return ctx.Fail(any.error());
    if (any->sessions.empty()) SuggestImports(ctx);
    if (args->demo) {
      // Only into a store with no sessions at all; each demo session is marked.
      auto seeded = server::SeedDemoHistory(*store);
      if (!seeded) return ctx.Fail(seeded.error());
      if (*seeded > 0) {
        std::cerr << "sessiondb: seeded " << *seeded << " demo sessions (marked \"demo\": true; "
                  << "`sessiondb demo --remove` takes them out)\n";
      }
    }
    const sigset_t stop_signals = BlockStopSignals();
    auto server = server::HttpServer::Start(*store, ctx.StorePath(), options);
    if (!server) return ctx.Fail(server.error());
    std::cout << "sessiondb: serving " << ctx.StorePath() << " at " << (*server)->url()
              << std::endl;
    std::cerr << "open that address in a browser; Ctrl-C stops the server\n";
    std::thread watcher([&server, stop_signals] {
      int signal_number = 0;
      sigwait(&stop_signals, &signal_number);
      (*server)->Stop();
    });
    Status served = (*server)->Run();
    // Wake the watcher if Run ended by itself, so it can be joined.
    pthread_kill(watcher.native_handle(), SIGTERM);
    watcher.join();
    if (!served.ok()) return ctx.Fail(served);
  });
}

}  // namespace sessiondb::cli
