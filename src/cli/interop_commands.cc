// Verbs that move histories in and out: import, export.
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_forms.h"
#include "cli/commands.h"
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

void AddImport(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string path, format;
    int64_t max_attachment_bytes = kDefaultImportAttachmentBytes;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "import", "Bring in histories from other tools (the format is detected from PATH)");
  cmd->add_option("PATH", args->path, "A file or folder to import")->required();
  cmd->add_option("--format", args->format, "Force the format: " + Joined(ImportFormats()))
      ->option_text("FORMAT");
  cmd->add_option("--max-attachment-bytes", args->max_attachment_bytes,
                  "Largest image or file whose bytes are stored, e.g. 1GiB (default 100 MiB); "
                  "a larger one is kept as a descriptor that says why")
      ->transform(CLI::AsSizeValue(true))
      ->option_text("SIZE");
  cmd->footer(
      "\nImporting the same source twice adds nothing; a source that grew adds what is new.\n"
      "History comes in whole: the per-message image limit does not apply, and an\n"
      "attachment over --max-attachment-bytes keeps its descriptor without its bytes.\n"
      "Records that cannot be used are skipped and listed with the reason.\n"
      "\nExamples:\n  sessiondb import ~/.claude/projects\n  sessiondb import ~/.codex/sessions\n"
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
    Result<ImportReport> report;
    {
      // Scoped: the bar's line is cleared before the summary prints.
      Progress progress(isatty(STDERR_FILENO) != 0, "importing", /*bytes=*/true);
      report = ImportPath(*store, args->path,
                          {.format = format,
                           .progress = std::ref(progress),
                           .max_attachment_bytes = args->max_attachment_bytes});
    }
    if (!report) return ctx.Fail(report.error());
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
    if (ctx.options.json) {
      Json out = ToJson(*report);
      if (learned) out["code_writes_learned"] = learned->writes_recorded;
      return ctx.PrintJson(out);
    }
    std::cout << "imported " << args->path << " (" << ImportFormatName(report->format)
              << "): " << report->sessions_added << " new session"
              << (report->sessions_added == 1 ? "" : "s") << ", " << report->sessions_extended
              << " extended, " << report->sessions_unchanged << " already here; "
              << report->messages_added << " message" << (report->messages_added == 1 ? "" : "s")
              << ", " << report->images_added << " image" << (report->images_added == 1 ? "" : "s")
              << "\n";
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
  cmd->add_option("--format", args->format, Joined(ExportFormats()))
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
    if (!report) return ctx.Fail(report.error());
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
