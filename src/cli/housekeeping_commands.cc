// Verbs that look after the store: gc, verify (and verify --erased, whose
// check is forget_commands'), stats, copy, redact.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

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
    std::string from_key_file;
    std::string to_key_file;
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
  cmd->add_option("--from-key-file", args->from_key_file,
                  "The key of an encrypted --from store (default: --key-file)")
      ->option_text("FILE");
  cmd->add_option("--to-key-file", args->to_key_file,
                  "The key of an encrypted --to store; a new store made with it is encrypted "
                  "(default: --key-file)")
      ->option_text("FILE");
  cmd->footer(
      "\nSessions already in the destination with the same length are skipped, so an\n"
      "interrupted copy resumes when run again. A session there with a different log\n"
      "is a conflict (exit 4); nothing is overwritten. --namespace applies to both.\n"
      "Between an encrypted and a plaintext store, give the encrypted side's key with\n"
      "--from-key-file or --to-key-file (docs/encryption.md).\n"
      "\nExamples:\n"
      "  sessiondb copy --from ~/.local/share/sessiondb --to postgresql://me@db/chats\n"
      "  sessiondb copy --from postgresql://me@db/chats?namespace=team-a --to ./backup");
  cmd->callback([&ctx, args] {
    StoreOptions from_options = ctx.MakeStoreOptions(/*create_if_missing=*/false);
    if (!args->from_key_file.empty()) from_options.key_file = args->from_key_file;
    StoreOptions to_options = ctx.MakeStoreOptions(/*create_if_missing=*/true);
    if (!args->to_key_file.empty()) to_options.key_file = args->to_key_file;
    auto from = Store::Open(args->from, from_options);
    if (!from) return ctx.Fail(from.error());
    auto to = Store::Open(args->to, to_options);
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
                            {"messages_copied", report->messages_copied},
                            {"file_versions_copied", report->file_versions_copied}});
    }
    std::cout << "copied " << report->sessions_copied << " sessions (" << report->messages_copied
              << " messages)";
    if (report->file_versions_copied > 0) {
      std::cout << " and " << report->file_versions_copied << " file versions";
    }
    if (report->sessions_skipped > 0) {
      std::cout << "; " << report->sessions_skipped << " were there already";
    }
    std::cout << "\n";
  });
}

// Secrets never stored (docs/retention.md): the store's setting, and the
// scan and rewrite of secrets stored before redaction (or while it was off).
void AddRedact(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool scan = false;
    bool apply = false;
    bool on = false;
    bool off = false;
    std::vector<std::string> allow;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "redact", "Secrets never stored: list or rewrite stored secrets; turn redaction on or off");
  auto* scan =
      cmd->add_flag("--scan", args->scan, "List where stored secrets are (kind, session, seq)");
  auto* apply =
      cmd->add_flag("--apply", args->apply,
                    "Rewrite those events with markers, re-index them and erase the old text");
  auto* on = cmd->add_flag("--on", args->on, "Redact secrets before they are stored (the default)");
  auto* off = cmd->add_flag("--off", args->off, "Store secrets as written (for this store)");
  auto* allow = cmd->add_option("--allow", args->allow,
                                "Let this exact value, or every secret of this kind, through "
                                "(repeatable; adds to the store's allow-list)")
                    ->option_text("VALUE");
  scan->excludes(apply)->excludes(on)->excludes(off)->excludes(allow);
  apply->excludes(on)->excludes(off)->excludes(allow);
  on->excludes(off);
  cmd->footer(
      "\nThe secret itself is never printed. Images and files are not scanned.\n"
      "\nExamples:\n  sessiondb redact --scan\n  sessiondb redact --apply\n"
      "  sessiondb redact --allow github-token\n  sessiondb redact --off");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    if (args->on || args->off || !args->allow.empty()) {
      auto settings = store->GetRedactionSettings();
      if (!settings) return ctx.Fail(settings.error());
      if (args->on || args->off) settings->enabled = args->on;
      for (const std::string& a : args->allow) {
        if (std::find(settings->allow.begin(), settings->allow.end(), a) == settings->allow.end()) {
          settings->allow.push_back(a);
        }
      }
      if (Status s = store->SetRedactionSettings(*settings); !s.ok()) return ctx.Fail(s);
      if (ctx.options.json) {
        return ctx.PrintJson(
            Json{{"enabled", settings->enabled}, {"allow", settings->allow.size()}});
      }
      std::cout << "redaction is " << (settings->enabled ? "on" : "off") << "; "
                << settings->allow.size() << " allowed value"
                << (settings->allow.size() == 1 ? "" : "s") << " or kind"
                << (settings->allow.size() == 1 ? "" : "s") << "\n";
      return;
    }
    if (args->apply) {
      auto report = store->RedactStoredSecrets();
      if (!report) return ctx.Fail(report.error());
      if (ctx.options.json) {
        return ctx.PrintJson(Json{{"secrets_redacted", report->secrets_redacted},
                                  {"events_rewritten", report->events_rewritten},
                                  {"sessions_rewritten", report->sessions_rewritten}});
      }
      std::cout << "redacted " << report->secrets_redacted << " secret"
                << (report->secrets_redacted == 1 ? "" : "s") << " in " << report->events_rewritten
                << " event" << (report->events_rewritten == 1 ? "" : "s") << " and "
                << report->sessions_rewritten << " session title"
                << (report->sessions_rewritten == 1 ? "" : "s") << "\n";
      return;
    }
    // --scan, and the verb alone: where the secrets are.
    auto found = store->ScanSecrets();
    if (!found) return ctx.Fail(found.error());
    if (ctx.options.json) {
      Json list = Json::array();
      for (const StoredSecret& s : *found) {
        list.push_back(Json{{"kind", s.kind}, {"session_id", s.session_id}, {"seq", s.seq}});
      }
      return ctx.PrintJson(list);
    }
    for (const StoredSecret& s : *found) {
      std::cout << s.kind << "\t" << s.session_id << "\t" << s.seq << "\n";
    }
    std::cout << found->size() << " stored secret" << (found->size() == 1 ? "" : "s")
              << (found->empty() ? "" : "; `sessiondb redact --apply` rewrites them") << "\n";
  });
}

}  // namespace

void AddHousekeepingCommands(CLI::App& app, CliContext& ctx) {
  AddGc(app, ctx);
  AddVerify(app, ctx);
  AddStats(app, ctx);
  AddCopy(app, ctx);
  AddRedact(app, ctx);
}

}  // namespace sessiondb::cli
