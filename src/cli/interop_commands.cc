// Verbs that move histories in and out: import, export.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_forms.h"
#include "cli/access_denied.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/import_embedding.h"
#include "cli/numeric_options.h"
#include "sessiondb/interop.h"
#include "sessiondb/memory.h"

namespace sessiondb::cli {
namespace {

std::string Joined(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// The names as strings, for OfferValues.
std::vector<std::string> FormatNames(const std::vector<std::string_view>& names) {
  return {names.begin(), names.end()};
}

// The write end of the pipe SIGINT and SIGTERM end a watch through.
int g_stop_pipe_write = -1;

extern "C" void OnStopSignal(int /*signal*/) {
  const char byte = 1;
  (void)!write(g_stop_pipe_write, &byte, 1);
}

// `import --watch DIR`: one line per file change on stderr (with --json, its
// report as a line of JSON on stdout), printed once the import is committed;
// SIGINT and SIGTERM end it after the import under way, with exit code 0.
// True when anything came in.
bool RunWatch(CliContext& ctx, Store& store, const std::string& dir, const ImportOptions& import,
              int64_t max_watched_dirs) {
  int stop[2];
  if (pipe2(stop, O_CLOEXEC | O_NONBLOCK) != 0) {
    ctx.Fail(Status::Io(std::string("cannot make a pipe: ") + std::strerror(errno)));
    return false;
  }
  bool imported = false;
  g_stop_pipe_write = stop[1];
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sa.sa_flags = SA_RESTART;  // the import under way is not interrupted; the watch's poll is
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  WatchOptions options;
  options.import = import;
  options.max_watched_dirs = max_watched_dirs;
  options.stop_fd = stop[0];
  // Beside an embedded store's database; elsewhere for a PostgreSQL one.
  const std::string where = ctx.StorePath();
  if (StoreKindOf(where) == StoreKind::kEmbedded) {
    options.state_dir = where;
  } else {
    const char* state_home = std::getenv("XDG_STATE_HOME");
    const char* home = std::getenv("HOME");
    options.state_dir = state_home && *state_home
                            ? std::string(state_home) + "/sessiondb"
                            : std::string(home ? home : ".") + "/.local/state/sessiondb";
    std::error_code ec;
    std::filesystem::create_directories(options.state_dir, ec);
  }
  options.state_key = where;
  options.on_import = [&ctx, &imported](const WatchedImport& w) {
    if (!w.error.empty()) {
      std::cerr << "left out " << w.file << ": " << w.error << "\n";
      return;
    }
    const ImportReport& r = w.report;
    imported = imported || !r.sessions_written.empty();
    if (r.sessions_written.empty() && r.records_skipped == 0 && r.attachments_not_stored == 0) {
      std::cerr << "read " << w.file << ": nothing new" << std::endl;
      return;
    }
    std::cerr << "imported " << w.file << ":";
    if (!r.sessions_written.empty()) {
      std::cerr << (r.sessions_written.size() == 1 ? " session" : " sessions");
      for (size_t i = 0; i < r.sessions_written.size(); ++i) {
        std::cerr << (i == 0 ? " " : ", ") << r.sessions_written[i];
      }
      std::cerr << ",";
    }
    std::cerr << " " << r.messages_added << " message" << (r.messages_added == 1 ? "" : "s")
              << " added";
    if (r.records_skipped > 0) std::cerr << ", " << r.records_skipped << " skipped";
    if (r.attachments_not_stored > 0) {
      std::cerr << ", " << r.attachments_not_stored << " attachments kept as descriptors";
    }
    std::cerr << "\n";
    for (const SkippedRecord& s : r.skipped) {
      std::cerr << "  skipped " << s.where << ": " << s.reason << "\n";
    }
    std::cerr.flush();
    if (ctx.options.json) {
      Json out = ToJson(r);
      out["file"] = w.file;
      out["sessions"] = r.sessions_written;
      std::cout << out.dump() << std::endl;
    }
  };
  options.on_settled = [&ctx]() -> Status {
    // What came in joins the code memory and the full-text index, as after
    // an import, so search and recall know it while the watch runs.
    CodeMemory* memory = ctx.OpenCodeMemory();
    if (!memory) return Status::Internal("the code memory could not be opened");
    auto scan = memory->LearnFromHistory();
    if (!scan) return scan.error();
    auto indexed = ctx.CatchUpTextIndex();
    if (!indexed) return indexed.error();
    // And its vectors: the watch is background work already. An embedder
    // that fails (an endpoint down) is said once a settle, and the watch goes on.
    SearchIndex* index = ctx.OpenSearchIndex();
    if (index == nullptr) return Status::Internal("the search index could not be opened");
    if (auto embedded = index->Embed(); !embedded) {
      std::cerr << "sessiondb: what came in is not embedded yet: "
                << EscapeForTerminal(embedded.error().message()) << std::endl;
    }
    return Status::Ok();
  };
  std::cerr << "watching " << dir << " (Ctrl-C ends the watch)\n";
  const Status watched = WatchImport(store, dir, options);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  g_stop_pipe_write = -1;
  close(stop[0]);
  close(stop[1]);
  if (!watched.ok()) {
    ctx.Fail(watched);
  } else {
    std::cerr << "the watch of " << dir << " ended\n";
  }
  return imported;
}

void AddImport(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string path, format;
    int64_t max_attachment_bytes = kDefaultImportAttachmentBytes;
    bool watch = false;
    int64_t max_watched_dirs = 10000;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "import", "Bring in histories from other tools (the format is detected from PATH)");
  cmd->add_option("PATH", args->path, "A file or folder to import")->required();
  OfferValues(
      cmd->add_option("--format", args->format, "Force the format: " + Joined(ImportFormats())),
      FormatNames(ImportFormats()))
      ->option_text("FORMAT");
  cmd->add_option("--max-attachment-bytes", args->max_attachment_bytes,
                  "Largest image or file whose bytes are stored, e.g. 1GiB (default 100 MiB); "
                  "a larger one is kept as a descriptor that says why")
      ->transform(CLI::AsSizeValue(true))
      ->option_text("SIZE");
  cmd->add_flag("--watch", args->watch,
                "Keep importing: PATH is a folder of Claude Code or Codex transcripts, "
                "imported as they are written until Ctrl-C");
  cmd->add_option("--max-watched-dirs", args->max_watched_dirs,
                  "With --watch: the most folders followed (default 10000)")
      ->check(NumberIn(1, 1'000'000))
      ->option_text("N");
  cmd->footer(
      "\nImporting the same source twice adds nothing; a source that grew adds what is new.\n"
      "History comes in whole: the per-message image limit does not apply, and an\n"
      "attachment over --max-attachment-bytes keeps its descriptor without its bytes.\n"
      "Records that cannot be used are skipped and listed with the reason.\n"
      "What came in is embedded for vector search: for up to 5 s here, the rest by a\n"
      "`sessiondb reindex` left running in the background.\n"
      "With --watch, PATH is watched (inotify) after a first import of what changed\n"
      "since the last watch: each transcript is imported when it has been quiet for\n"
      "half a second, one line per file on stderr, so the tools' own sweeps of old\n"
      "transcripts lose nothing; a restart reads only the files that changed.\n"
      "\nExamples:\n  sessiondb import ~/.claude/projects\n  sessiondb import ~/.codex/sessions\n"
      "  sessiondb import --watch ~/.claude/projects\n"
      "  sessiondb import chatgpt-export.zip\n  sessiondb import chat.json --format snapshot");
  cmd->callback([&ctx, args] {
    std::optional<ImportFormat> format;
    if (!args->format.empty()) {
      auto parsed = ParseImportFormat(args->format);
      if (!parsed) return ctx.Fail(parsed.error());
      format = *parsed;
    }
    // An import may be the first thing a store holds, so it creates one; but
    // a mistyped --store must not leave an empty store behind, so an embedded
    // store this call created goes again unless something was imported.
    const std::string where = ctx.StorePath();
    std::error_code ec;
    const bool created_here =
        StoreKindOf(where) == StoreKind::kEmbedded && !std::filesystem::exists(where, ec) && !ec;
    struct RemoveIfEmpty {
      CliContext& ctx;
      const std::string& where;
      bool remove = false;
      ~RemoveIfEmpty() {
        if (!remove) return;
        ctx.CloseStore();
        std::error_code ignored;
        std::filesystem::remove_all(where, ignored);
      }
    } cleanup{ctx, where, created_here};
    Store* store = ctx.OpenStore(/*create_if_missing=*/true);
    if (!store) return;
    if (args->watch) {
      const bool imported =
          RunWatch(ctx, *store, args->path,
                   {.format = format, .max_attachment_bytes = args->max_attachment_bytes},
                   args->max_watched_dirs);
      // A store this watch created stays unless the watch failed with nothing in it.
      if (imported || ctx.exit_code() == 0) cleanup.remove = false;
      return;
    }
    Result<ImportReport> report;
    {
      // Scoped: the bar's line is cleared before the summary prints.
      Progress progress(isatty(STDERR_FILENO) != 0, "importing", /*bytes=*/true);
      report = ImportPath(*store, args->path,
                          {.format = format,
                           .progress = std::ref(progress),
                           .max_attachment_bytes = args->max_attachment_bytes});
    }
    if (!report) {
      // A file or folder this user may not read is said to be that.
      if (std::optional<std::string> denied = ReadDenied(args->path)) {
        return ctx.Fail(Status::FailedPrecondition(
            *denied + "; import it as its owner, or have them give this user read access"));
      }
      return ctx.Fail(report.error());
    }
    if (report->sessions_added > 0) cleanup.remove = false;
    // Code writes in what came in (Claude Code, Codex) join the code memory,
    // on either backend: churn and recall know them when this returns.
    std::optional<HistoryScan> learned;
    {
      CodeMemory* memory = ctx.OpenCodeMemory();
      if (!memory) return;
      Progress progress(isatty(STDERR_FILENO) != 0, "code writes in the history");
      auto scan = memory->LearnFromHistory(std::ref(progress));
      if (!scan) return ctx.Fail(scan.error());
      learned = *scan;
    }
    // The import committed its events; the full-text index follows them now,
    // with a bar of its own, so what came in is searchable when this returns.
    Result<int64_t> indexed = ctx.CatchUpTextIndex();
    if (!indexed) return ctx.Fail(indexed.error());
    // And vectors, so vector and hybrid search find it with no reindex first:
    // for a few seconds here, the rest by a background child (import_embedding.h).
    const ImportEmbedding vectors = EmbedImported(ctx);
    if (!vectors.error.empty()) {
      std::cerr << "sessiondb: what came in is not embedded yet ("
                << EscapeForTerminal(vectors.error)
                << "); keyword search finds it, and `sessiondb reindex` or `serve` embeds it\n";
    } else if (vectors.background_pid > 0) {
      std::cerr << "sessiondb: embedding " << vectors.background << " document"
                << (vectors.background == 1 ? "" : "s") << " in the background (pid "
                << vectors.background_pid << ")\n";
    }
    // What a folder import left out whole is said on stderr, one line each,
    // and in the exit code: the rest came in.
    for (const SkippedRecord& s : report->files_skipped) {
      std::cerr << "sessiondb: skipped " << EscapeForTerminal(s.where) << ": "
                << EscapeForTerminal(s.reason) << "\n";
    }
    if (!report->files_skipped.empty()) ctx.set_exit_code(kExitFilesSkipped);
    if (ctx.options.json) {
      Json out = ToJson(*report);
      if (learned) {
        out["code_writes_learned"] = learned->writes_recorded;
        out["file_versions_learned"] = learned->file_versions;
      }
      out["embedded"] = vectors.embedded;
      out["embedding_in_background"] = vectors.background;
      if (vectors.background_pid > 0) out["embedding_pid"] = vectors.background_pid;
      return ctx.PrintJson(out);
    }
    std::cout << "imported " << args->path << " (" << ImportFormatName(report->format)
              << "): " << report->sessions_added << " new session"
              << (report->sessions_added == 1 ? "" : "s") << ", " << report->sessions_extended
              << " extended, " << report->sessions_unchanged << " already here; "
              << report->messages_added << " message" << (report->messages_added == 1 ? "" : "s")
              << ", " << report->images_added << " image" << (report->images_added == 1 ? "" : "s");
    if (!report->files_skipped.empty()) {
      std::cout << "; " << report->files_skipped.size()
                << (report->files_skipped.size() == 1 ? " file" : " files")
                << " skipped (could not be read)";
    }
    std::cout << "\n";
    if (report->records_skipped > 0) {
      std::cout << "skipped " << report->records_skipped << " record"
                << (report->records_skipped == 1 ? "" : "s") << ":\n";
      for (const SkippedRecord& s : report->skipped) {
        std::cout << "  " << s.where << ": " << s.reason << "\n";
      }
      if (report->records_skipped > static_cast<int64_t>(report->skipped.size())) {
        std::cout << "  ... and " << report->records_skipped - std::ssize(report->skipped)
                  << " more (the first " << report->skipped.size() << " are listed)\n";
      }
    }
    if (report->attachments_not_stored > 0) {
      std::cout << "kept " << report->attachments_not_stored
                << (report->attachments_not_stored == 1
                        ? " attachment as a descriptor without its bytes:\n"
                        : " attachments as descriptors without their bytes:\n");
      for (const SkippedRecord& s : report->not_stored) {
        std::cout << "  " << s.where << ": " << s.reason << "\n";
      }
      if (report->attachments_not_stored > std::ssize(report->not_stored)) {
        std::cout << "  ... and " << report->attachments_not_stored - std::ssize(report->not_stored)
                  << " more (the first " << report->not_stored.size() << " are listed)\n";
      }
    }
    if (learned && learned->writes_recorded > 0) {
      std::cout << "code memory: " << learned->writes_recorded << " code write"
                << (learned->writes_recorded == 1 ? "" : "s") << " learned\n";
    }
  });
}

void AddExport(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string format, out;
    std::vector<std::string> sessions;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("export", "Write sessions out in another format");
  OfferValues(cmd->add_option("--format", args->format, Joined(ExportFormats())),
              FormatNames(ExportFormats()))
      ->required()
      ->option_text("FORMAT");
  cmd->add_option("--out", args->out,
                  "A file (snapshot, jsonl) or a folder (ac-dc, agents-kt, markdown)")
      ->required()
      ->option_text("PATH");
  cmd->add_option("--session", args->sessions,
                  "A session to export: an id, a unique prefix, or - for the active one "
                  "(repeatable; default: all)")
      ->option_text("SESSION");
  cmd->add_flag("--force", args->force,
                "Replace files an earlier export wrote (and nobody changed since); "
                "never anything else");
  cmd->footer(
      "\nAn export never writes over a file that is in its way, unless --force is given\n"
      "and the file is one an earlier export wrote, unchanged since: each export\n"
      "leaves a manifest of its files and their SHA-256 beside what it wrote (for\n"
      "--out DIR/NAME, a file or a folder: DIR/.NAME.sessiondb-export.json).\n"
      "\nExamples:\n  sessiondb export --format snapshot --session SID --out chat.json\n"
      "  sessiondb export --format markdown --out transcripts/ --force\n"
      "  sessiondb export --format markdown --out transcripts/\n"
      "  sessiondb export --format jsonl --out all.jsonl");
  cmd->callback([&ctx, args] {
    auto format = ParseExportFormat(args->format);
    if (!format) return ctx.Fail(format.error());
    std::vector<std::string> ids;
    for (const std::string& typed : args->sessions) {
      const std::optional<std::string> id = ctx.SessionId(typed);
      if (!id) return;
      ids.push_back(*id);
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    auto report =
        ExportTo(*store, args->out,
                 {.format = *format, .sessions = ids, .replace_earlier_export = args->force});
    if (!report) {
      if (std::optional<std::string> denied = WriteDenied(args->out)) {
        return ctx.Fail(Status::FailedPrecondition(
            *denied + "; choose an --out this user may write (a folder of your own)"));
      }
      return ctx.Fail(report.error());
    }
    if (ctx.options.json) {
      return ctx.PrintJson({{"sessions", report->sessions},
                            {"messages", report->messages},
                            {"images", report->images},
                            {"files", report->files}});
    }
    auto count = [](int64_t n, const char* noun) {
      return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
    };
    std::cout << "exported " << count(report->sessions, "session") << ", "
              << count(report->messages, "message") << ", " << count(report->images, "image")
              << " to " << args->out << "\n";
  });
}

}  // namespace

void AddInteropCommands(CLI::App& app, CliContext& ctx) {
  AddImport(app, ctx);
  AddExport(app, ctx);
}

}  // namespace sessiondb::cli
