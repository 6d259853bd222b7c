// Verbs that look after the store: gc, verify, stats.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/json_output.h"
#include "core/text_rules.h"

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

// Draws "verifying blobs: 120/4000" on a terminal, at most ten times a second.
class VerifyProgress {
 public:
  explicit VerifyProgress(bool enabled) : enabled_(enabled) {}
  ~VerifyProgress() {
    if (drawn_) std::cerr << "\r\033[K" << std::flush;  // leave the line clean
  }
  void operator()(int64_t done, int64_t total) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && done != total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    drawn_ = true;
    std::cerr << "\rverifying blobs: " << done;
    if (total > 0) std::cerr << "/" << total;
    std::cerr << std::flush;
  }

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

void AddVerify(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand(
      "verify", "Re-hash every blob; list missing and corrupt ones (exit 8 if any)");
  cmd->footer("\nExample:\n  sessiondb verify || echo \"store needs attention\"");
  cmd->callback([&ctx] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    Result<VerifyReport> report;
    {
      VerifyProgress progress(isatty(STDERR_FILENO) != 0);
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

}  // namespace

void AddHousekeepingCommands(CLI::App& app, CliContext& ctx) {
  AddGc(app, ctx);
  AddVerify(app, ctx);
  AddStats(app, ctx);
}

}  // namespace sessiondb::cli
