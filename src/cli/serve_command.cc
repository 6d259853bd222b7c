// `sessiondb serve`: the HTTP API, live events and the web history browser
// over the store (docs/http-api.md, docs/web.md).
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/numeric_options.h"
#include "cli/periodic_thread.h"
#include "cli/shell_words.h"
#include "cli/sync_schedule.h"
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

// Applies the store's retention policy (docs/retention.md) on a thread of
// its own: once as the server starts, then every `every` until it ends. Each
// real run is in the ledger (the store records it); a failed one is logged
// on stderr and the next one tried, never fatal to the server.
class RetentionSchedule {
 public:
  RetentionSchedule(Store& store, std::chrono::minutes every)
      : store_(store), every_(every), ticks_(every, [this] { RunOnce(); }) {}

 private:
  // Applies the policy when a dry run finds something to do: every applied
  // run is in the ledger, and a store with nothing to forget is not written
  // at every tick (nor a read-only or damaged one at all).
  void RunOnce() {
    auto dry = store_.ApplyRetention(/*dry_run=*/true);
    if (dry && dry->archived.empty() && dry->trashed.empty() && dry->erased.empty() &&
        dry->kept_for_forks.empty()) {
      return;
    }
    auto run = store_.ApplyRetention(/*dry_run=*/false);
    if (!run) {
      std::cerr << "sessiondb: the retention run failed: "
                << EscapeForTerminal(run.error().ToString()) << "; next try in " << every_.count()
                << " minutes\n";
      return;
    }
    if (run->archived.empty() && run->trashed.empty() && run->erased.empty()) return;
    std::cerr << "sessiondb: retention archived " << run->archived.size() << ", trashed "
              << run->trashed.size() << ", erased " << run->erased.size()
              << " session(s) (ledger entry " << run->ledger_id << ")\n";
  }

  Store& store_;
  const std::chrono::minutes every_;
  PeriodicThread ticks_;  // last: it starts once the rest is made
};

// The folders of its user's Claude Code and Codex history that exist: the
// page offers to import them (server::HistoryImports). Nothing is imported
// unasked: a person decides what goes into their store.
std::vector<server::HistorySource> AgentHistoryFolders() {
  std::vector<server::HistorySource> found;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return found;
  struct Known {
    const char* agent;
    const char* folder;
    const char* format;
  };
  for (const Known& known : {Known{"Claude Code", "/.claude/projects", "claude-code"},
                             Known{"Codex", "/.codex/sessions", "codex"}}) {
    const std::string path = std::string(home) + known.folder;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) found.push_back({known.agent, path, known.format});
  }
  return found;
}

// Says, for an empty store, where its user's agent history is and how to
// import it: in the page, or with the command.
void SuggestImports(const CliContext& ctx, const std::vector<server::HistorySource>& sources) {
  const std::string command = SelfCommandWord() + " --store " +
                              ShellQuote(AbsoluteStoreLocation(ctx.StorePath())) +
                              (ctx.options.namespace_name.empty()
                                   ? ""
                                   : " --namespace " + ShellQuote(ctx.options.namespace_name));
  for (const server::HistorySource& source : sources) {
    std::cerr << "sessiondb: the store is empty, and " << source.agent << " history is in "
              << source.folder << "; the page offers to import it, or run:\n  " << command
              << " import " << ShellQuote(source.folder) << "\n";
  }
}

// The longest token file read; a token is a line, not a document.
constexpr size_t kMaxTokenFileBytes = 4096;

// The token in the file at `path`: its first line, without the line ending.
// The file must be a regular file owned by this user and unreadable by
// anyone else, or the token it keeps is no secret: kInvalidArgument names
// the `chmod 600` that fixes it. kNotFound when it does not exist.
Result<std::string> ReadTokenFile(const std::string& path) {
  const std::string where = "--token-file " + path;
  // O_NONBLOCK: a FIFO in its place must not hang the server before it starts.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return Err(Status::NotFound(where + ": no such file"));
    return Err(Status::InvalidArgument(where + ": " + std::strerror(error)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) return Err(Status::Io(where + ": " + std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) {
    return Err(Status::InvalidArgument(where + ": not a regular file; put the token alone in a "
                                               "file only you can read (chmod 600)"));
  }
  if (st.st_uid != geteuid()) {
    return Err(Status::InvalidArgument(where + ": owned by another user (uid " +
                                       std::to_string(st.st_uid) +
                                       "), who can read or change the token; use a file of "
                                       "your own, chmod 600"));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Err(Status::InvalidArgument(where + ": mode " + mode +
                                       " lets other users read or change the token; run `chmod "
                                       "600 " +
                                       path + "` first"));
  }
  std::string text(kMaxTokenFileBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err(Status::Io(where + ": " + std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxTokenFileBytes) {
    return Err(Status::InvalidArgument(where + ": larger than " +
                                       std::to_string(kMaxTokenFileBytes) +
                                       " bytes; the file holds the token alone, on one line"));
  }
  text.resize(got);
  if (const size_t end = text.find_first_of("\r\n"); end != std::string::npos) {
    if (text.find_first_not_of("\r\n", end) != std::string::npos) {
      return Err(Status::InvalidArgument(
          where + ": more than one line; the file holds the token alone, on one line"));
    }
    text.resize(end);
  }
  if (text.empty()) return Err(Status::InvalidArgument(where + ": the file is empty"));
  return text;
}

}  // namespace

void AddServeCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    server::ServerOptions options;
    bool demo = false;
    bool no_embed = false;
    std::string inline_token;  // refused: see --token below
    std::string token_file;
    int64_t retain_every_minutes = 60;
    std::string sync_to;
    int64_t sync_every_seconds = 30;
    std::string prices;
  };
  auto args = std::make_shared<Args>();
  server::ServerOptions& o = args->options;
  auto* cmd = app.add_subcommand(
      "serve", "Serve the store over HTTP: the JSON API (/v1), live events, the web browser (/)");
  cmd->add_option("--host", o.host,
                  "Address to listen on (default 127.0.0.1; any other needs a token)")
      ->option_text("ADDR");
  cmd->add_option("--port", o.port, "Port (default 7411; 0 picks a free one)")
      ->check(NumberIn(0, 65535))
      ->option_text("N");
  // Parsed only to be refused with a message that names the safe ways: a
  // token in the arguments is in /proc/PID/cmdline for every local user.
  CLI::Option* inline_token = cmd->add_option("--token", args->inline_token)->group("");
  cmd->add_option("--token-file", args->token_file,
                  "Require the token in this file (Authorization: Bearer); the file must be "
                  "yours and chmod 600. Default: $SESSIONDB_TOKEN")
      ->option_text("PATH");
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
  cmd->add_option("--retain-every", args->retain_every_minutes,
                  "Apply the retention policy at start and then every N minutes (default 60; 0: "
                  "never; `sessiondb retain` shows the policy)")
      ->check(NumberIn(0, 525600))
      ->option_text("MINUTES");
  cmd->add_option("--sync-to", args->sync_to,
                  "Sync the store with this one (a directory or postgresql:// URI) at start and "
                  "then every --sync-every seconds (docs/sync.md)")
      ->option_text("STORE");
  cmd->add_option("--sync-every", args->sync_every_seconds,
                  "Seconds between two syncs of --sync-to (default 30)")
      ->check(NumberIn(1, 86400))
      ->option_text("SECONDS");
  cmd->add_flag("--no-embed", args->no_embed,
                "Do not embed new documents in the background (vector search then sees what "
                "`sessiondb reindex` embedded)");
  cmd->add_option("--prices", args->prices,
                  "A price file whose entries win over the shipped prices for the usage the "
                  "API and the page show (docs/usage.md; default $SESSIONDB_PRICES)")
      ->type_name("FILE");
  cmd->add_flag("--demo", args->demo,
                "Seed a small demo history first, only when the store has no sessions at all "
                "and no Claude Code or Codex history is in $HOME to offer instead (marked "
                "\"demo\": true; `sessiondb demo --remove` removes it)");
  cmd->footer(
      "\nOpen the printed address in a browser to read and search the history. Apps use the\n"
      "JSON API under /v1 (docs/http-api.md). Ctrl-C stops the server; open drafts are saved.\n"
      "On an empty store, if ~/.claude/projects or ~/.codex/sessions exist, it prints the\n"
      "`sessiondb import` command for each; it never imports by itself.\n"
      "\nExamples:\n  sessiondb serve --demo\n  sessiondb serve --store ~/chats --port 0\n"
      "  sessiondb serve --host 0.0.0.0 --token-file ~/.config/sessiondb/token --allow-dir "
      "~/exports");
  cmd->callback([&ctx, args, inline_token] {
    server::ServerOptions options = args->options;
    options.background_embedding = !args->no_embed;
    if (inline_token->count() > 0) {
      return ctx.Fail(Status::InvalidArgument(
          "--token puts the token in the command line, which every local user can read "
          "(ps, /proc/PID/cmdline); give it in $SESSIONDB_TOKEN, or in a file only you can "
          "read with --token-file PATH (chmod 600)"));
    }
    if (!args->token_file.empty()) {
      auto token = ReadTokenFile(args->token_file);
      if (!token) return ctx.Fail(token.error());
      options.token = std::move(*token);
    } else if (const char* token = std::getenv("SESSIONDB_TOKEN")) {
      options.token = token;
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/true);
    if (!store) return;
    if (!args->prices.empty()) {
      // Read once now, so a malformed file stops the server with its reason
      // (a query of no session: nothing else is read); each usage request
      // then reads it through $SESSIONDB_PRICES, set before any thread starts.
      UsageQuery check{.session_ids = {"-"}, .prices_path = args->prices};
      if (auto read = store->GetUsageSummary(check); !read) return ctx.Fail(read.error());
      setenv("SESSIONDB_PRICES", args->prices.c_str(), 1);
    }
    auto any = store->ListSessions({.limit = 1, .archived = ArchiveFilter::kAll});
    if (!any) return ctx.Fail(any.error());
    options.history_sources = AgentHistoryFolders();
    if (any->sessions.empty()) SuggestImports(ctx, options.history_sources);
    if (args->demo && any->sessions.empty() && !options.history_sources.empty()) {
      // The user's own history is worth more than a demo: the page offers it.
      std::cerr << "sessiondb: no demo history: the page offers your own to import instead\n";
    } else if (args->demo) {
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
    if (!server) {
      ctx.Fail(server.error());
      // The only busy thing at start is the port (docs/cli.md): a value of
      // --port to change, like a usage error, not a store to wait for.
      if (server.error().code() == StatusCode::kBusy) ctx.set_exit_code(kExitUsage);
      return;
    }
    std::cout << "sessiondb: serving " << ctx.StorePath() << " at " << (*server)->url()
              << std::endl;
    std::cerr << "open that address in a browser; Ctrl-C stops the server\n";
    std::unique_ptr<RetentionSchedule> retention;
    if (args->retain_every_minutes > 0) {
      retention = std::make_unique<RetentionSchedule>(
          *store, std::chrono::minutes(args->retain_every_minutes));
    }
    std::unique_ptr<SyncSchedule> sync;
    if (!args->sync_to.empty()) {
      sync = SyncSchedule::Start(*store, args->sync_to,
                                 OtherStoreOptions(ctx, /*create_if_missing=*/false, ""),
                                 std::chrono::seconds(args->sync_every_seconds));
    }
    std::thread watcher([&server, stop_signals] {
      int signal_number = 0;
      sigwait(&stop_signals, &signal_number);
      (*server)->Stop();
    });
    Status served = (*server)->Run();
    // Wake the watcher if Run ended by itself, so it can be joined. SIGTERM
    // is blocked and sigwait()ed by the watcher: it ends that wait, not a thread.
    pthread_kill(watcher.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread)
    watcher.join();
    sync.reset();
    retention.reset();
    if (!served.ok()) return ctx.Fail(served);
  });
}

}  // namespace sessiondb::cli
