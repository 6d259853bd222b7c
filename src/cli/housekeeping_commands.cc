// Verbs that look after the store: gc, verify, stats.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"

namespace sessiondb::cli {
namespace {

using nlohmann::json;

void AddGc(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool dry_run = false;
    double grace_minutes = 10;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("gc", "Delete blobs (images, files) that no message references");
  cmd->add_flag("--dry-run", args->dry_run, "Report what would be deleted, delete nothing");
  cmd->add_option("--grace-minutes", args->grace_minutes,
                  "Keep unreferenced blobs younger than this (appends in flight)")
      ->capture_default_str();
  cmd->callback([&ctx, args] {
    if (args->grace_minutes < 0) {
      return ctx.Fail(Status::InvalidArgument("--grace-minutes must be 0 or more"));
    }
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    auto report = store->CollectGarbage(
        {.grace_ms = static_cast<int64_t>(args->grace_minutes * 60'000), .dry_run = args->dry_run});
    if (!report) return ctx.Fail(report.error());
    if (ctx.options.json) {
      return ctx.PrintJson({{"blobs_scanned", report->blobs_scanned},
                            {"blobs_deleted", report->blobs_deleted},
                            {"bytes_freed", report->bytes_freed},
                            {"blobs_in_grace", report->blobs_in_grace},
                            {"dry_run", args->dry_run}});
    }
    std::cout << (args->dry_run ? "would delete " : "deleted ") << report->blobs_deleted << " of "
              << report->blobs_scanned << " blobs, " << FormatBytes(report->bytes_freed)
              << (args->dry_run ? " would be" : "") << " freed";
    if (report->blobs_in_grace > 0) {
      std::cout << "; " << report->blobs_in_grace << " unreferenced blobs are younger than the "
                << "grace period and were kept";
    }
    std::cout << "\n";
  });
}

void AddVerify(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("verify", "Re-hash every blob; report missing and corrupt ones");
  cmd->callback([&ctx] {
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    const bool show_progress = isatty(STDERR_FILENO);
    auto report = store->Verify([show_progress](int64_t done, int64_t total) {
      if (show_progress && (done % 16 == 0 || done == total)) {
        std::cerr << "\rverifying blobs: " << done << "/" << total << std::flush;
        if (done == total) std::cerr << "\n";
      }
    });
    if (!report) return ctx.Fail(report.error());
    if (!report->clean()) ctx.exit_code = kExitVerifyFailed;
    if (ctx.options.json) {
      return ctx.PrintJson({{"blobs_checked", report->blobs_checked},
                            {"bytes_checked", report->bytes_checked},
                            {"missing", report->missing},
                            {"corrupt", report->corrupt},
                            {"clean", report->clean()}});
    }
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
    std::cout << "Messages that refer to these load with the part marked missing.\n";
  });
}

void AddStats(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("stats", "Counts and storage size of the store");
  cmd->callback([&ctx] {
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    auto stats = store->Stats();
    if (!stats) return ctx.Fail(stats.error());
    if (ctx.options.json) {
      return ctx.PrintJson({{"store", ctx.StorePath()},
                            {"sessions", stats->sessions},
                            {"archived_sessions", stats->archived_sessions},
                            {"messages", stats->messages},
                            {"blobs", stats->blobs},
                            {"blob_bytes", stats->blob_bytes},
                            {"database_bytes", stats->database_bytes},
                            {"total_bytes", stats->total_bytes}});
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
