// Verbs that look after the store: gc, verify (and verify --erased, whose
// check is forget_commands'), stats, copy.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/numeric_options.h"
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
      ->check(FractionIn(0, 1e9))
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
  auto erased = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "verify",
      "Check the database's pages and re-hash every blob; list what is damaged (exit 8 if any)");
  cmd->add_option("--erased", *erased,
                  "Instead: check an erasure receipt against the store (exit 0 when all it "
                  "names is erased, 1 listing what is left)")
      ->option_text("RECEIPT");
  cmd->footer(
      "\nAn embedded store runs SQLite's integrity check on every page of its database and,\n"
      "when that finds damage, names the sessions that can no longer be read whole.\n"
      "\nExamples:\n  sessiondb verify || echo \"store needs attention\"\n"
      "  sessiondb verify --erased receipt.json");
  cmd->callback([&ctx, erased] {
    if (!erased->empty()) return VerifyErasureReceipt(ctx, *erased);
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    Result<VerifyReport> report;
    {
      Progress progress(isatty(STDERR_FILENO) != 0, "verifying blobs");
      report = store->Verify([&progress](int64_t done, int64_t total) { progress(done, total); });
    }
    if (!report) return ctx.Fail(report.error());
    if (!report->clean()) ctx.set_exit_code(kExitVerifyFailed);
    if (ctx.options.json) {
      Json j = ToJson(*report);
      j["database_check"] = report->database_check;
      j["database_problems"] = report->database_problems;
      Json damaged = Json::array();
      for (const auto& d : report->damaged_sessions) {
        damaged.push_back({{"id", d.id}, {"error", d.error}});
      }
      j["damaged_sessions"] = std::move(damaged);
      return ctx.PrintJson(j);
    }
    const bool database_ok = report->database_problems.empty() && report->damaged_sessions.empty();
    std::cout << "database: " << (database_ok ? "intact" : "DAMAGED") << " ("
              << report->database_check << ")\n";
    for (const auto& line : report->database_problems) std::cout << "  problem  " << line << "\n";
    for (const auto& d : report->damaged_sessions) {
      std::cout << "  damaged session  " << d.id << "  (" << d.error << ")\n";
    }
    if (!database_ok && report->damaged_sessions.empty()) {
      std::cout << "  every session still reads back whole; the damage is in an index or in "
                   "free space\n";
    }
    std::cout << "checked " << report->blobs_checked << " blobs ("
              << FormatBytes(report->bytes_checked) << ")";
    if (report->missing.empty() && report->corrupt.empty()) {
      std::cout << ": all present and intact\n";
    } else {
      std::cout << ": " << report->missing.size() << " missing, " << report->corrupt.size()
                << " corrupt\n";
      for (const auto& sha : report->missing) std::cout << "  missing  " << sha << "\n";
      for (const auto& sha : report->corrupt) std::cout << "  corrupt  " << sha << "\n";
      std::cout << "Messages that refer to these still load, with the part marked MISSING.\n";
    }
    if (!database_ok) {
      std::cout << "Back up the store's folder first, then copy out what still reads "
                   "(sessiondb export, or sqlite3's .recover).\n";
    }
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
