// Verbs that look after the store: gc, verify, stats, copy.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "api/json_forms.h"
#include "core/text_rules.h"
#include "store/store_copy.h"

namespace sessiondb::cli {
namespace {

void AddGc(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool dry_run = false;
    double grace_minutes = 10;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("gc", "Delete blobs (images, files) that no message refers to");
  cmd->add_flag("--dry-run", args->dry_run, "Report what would be deleted; delete nothing");
  cmd->add_option("--grace-minutes", args->grace_minutes,
                  "Keep unreferenced blobs younger than this, so appends in flight keep theirs "
                  "(default 10)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("N");
  cmd->footer("\nExamples:\n  sessiondb gc --dry-run\n  sessiondb gc --grace-minutes 0");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    // A century is "keep everything" already; larger values would overflow.
    constexpr double kMaxGraceMinutes = 100.0 * 366 * 24 * 60;
    const double minutes = std::min(args->grace_minutes, kMaxGraceMinutes);
    auto report = store->CollectGarbage(
        {.grace_ms = static_cast<int64_t>(minutes * 60'000), .dry_run = args->dry_run});
    if (!report) return ctx.Fail(report.error());
    if (ctx.options.json) {
      Json j = ToJson(*report);
      j["dry_run"] = args->dry_run;
      return ctx.PrintJson(j);
    }
    std::cout << (args->dry_run ? "would delete " : "deleted ") << report->blobs_deleted << " of "
              << report->blobs_scanned << " blobs, " << FormatBytes(report->bytes_freed)
              << (args->dry_run ? " would be" : "") << " freed\n";
    if (report->blobs_in_grace > 0) {
      std::cout << report->blobs_in_grace << " unreferenced blob"
                << (report->blobs_in_grace == 1 ? " is" : "s are")
                << " younger than the grace period and kept (--grace-minutes)\n";
    }
  });
}

void AddVerify(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "verify", "Re-hash every blob; list missing and corrupt ones (exit 8 if any)");
  cmd->footer("\nExample:\n  sessiondb verify || echo \"store needs attention\"");
  cmd->callback([&ctx] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    Result<VerifyReport> report;
    {
      Progress progress(isatty(STDERR_FILENO) != 0, "verifying blobs");
      report = store->Verify([&progress](int64_t done, int64_t total) { progress(done, total); });
    }
    if (!report) return ctx.Fail(report.error());
    if (!report->clean()) ctx.set_exit_code(kExitVerifyFailed);
    if (ctx.options.json) return ctx.PrintJson(ToJson(*report));
    std::cout << "checked " << report->blobs_checked << " blobs ("
              << FormatBytes(report->bytes_checked) << ")";
    if (report->clean()) {
      std::cout << ": all present and intact\n";
      return;
    }
    std::cout << ": " << report->missing.size() << " missing, " << report->corrupt.size()
              << " corrupt\n";
    for (const auto& sha : report->missing) std::cout << "  missing  " << sha << "\n";
    for (const auto& sha : report->corrupt) std::cout << "  corrupt  " << sha << "\n";
    std::cout << "Messages that refer to these still load, with the part marked MISSING.\n";
  });
}

void AddStats(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("stats", "Counts and bytes on disk of the store");
  cmd->footer("\nExample:\n  sessiondb stats --json");
  cmd->callback([&ctx] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    auto stats = store->Stats();
    if (!stats) return ctx.Fail(stats.error());
    if (ctx.options.json) {
      Json j = ToJson(*stats);
      j["store"] = ctx.StorePath();
      return ctx.PrintJson(j);
    }
    std::cout << "store     " << ctx.StorePath() << "\n"
              << "sessions  " << stats->sessions << " (" << stats->archived_sessions
              << " archived)\n"
              << "messages  " << stats->messages << "\n"
              << "blobs     " << stats->blobs << " (" << FormatBytes(stats->blob_bytes) << ")\n"
              << "database  " << FormatBytes(stats->database_bytes) << "\n"
              << "total     " << FormatBytes(stats->total_bytes) << "\n";
  });
}

void AddCopy(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string from;
    std::string to;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "copy", "Copy every session, message and blob of one store into another (any backends)");
  cmd->add_option("--from", args->from, "The store to copy (a directory or postgresql:// URI)")
      ->required()
      ->option_text("STORE");
  cmd->add_option("--to", args->to, "The store to copy into; created if missing")
      ->required()
      ->option_text("STORE");
  cmd->footer(
      "\nSessions already in the destination with the same length are skipped, so an\n"
      "interrupted copy resumes when run again. A session there with a different log\n"
      "is a conflict (exit 4); nothing is overwritten. --namespace applies to both.\n"
      "\nExamples:\n"
      "  sessiondb copy --from ~/.local/share/sessiondb --to postgresql://me@db/chats\n"
      "  sessiondb copy --from postgresql://me@db/chats?namespace=team-a --to ./backup");
  cmd->callback([&ctx, args] {
    auto from = Store::Open(args->from, ctx.MakeStoreOptions(/*create_if_missing=*/false));
    if (!from) return ctx.Fail(from.error());
    auto to = Store::Open(args->to, ctx.MakeStoreOptions(/*create_if_missing=*/true));
    if (!to) return ctx.Fail(to.error());
    Result<CopyReport> report;
    {
      Progress progress(isatty(STDERR_FILENO) != 0, "copying sessions");
      report = CopyStore(**from, **to,
                         [&progress](int64_t done, int64_t total) { progress(done, total); });
    }
    if (!report) return ctx.Fail(report.error());
    if (ctx.options.json) {
      return ctx.PrintJson({{"sessions_copied", report->sessions_copied},
                            {"sessions_skipped", report->sessions_skipped},
                            {"messages_copied", report->messages_copied}});
    }
    std::cout << "copied " << report->sessions_copied << " sessions (" << report->messages_copied
              << " messages)";
    if (report->sessions_skipped > 0) {
      std::cout << "; " << report->sessions_skipped << " were there already";
    }
    std::cout << "\n";
  });
}

}  // namespace

void AddHousekeepingCommands(CLI::App& app, CliContext& ctx) {
  AddGc(app, ctx);
  AddVerify(app, ctx);
  AddStats(app, ctx);
  AddCopy(app, ctx);
}

}  // namespace sessiondb::cli
