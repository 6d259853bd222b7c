// `sessiondb sync OTHER`: two-way sync of the store with another
// (docs/sync.md), and the schedule `serve --sync-to` runs it on.
#include <unistd.h>

#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/periodic_thread.h"
#include "cli/sync_schedule.h"
#include "store/store_sync.h"

namespace sessiondb::cli {

namespace {

Json ChangesJson(const SyncChanges& c) {
  return Json{{"sessions_created", c.sessions_created},
              {"events_copied", c.events_copied},
              {"messages_copied", c.messages_copied},
              {"trashed", c.trashed},
              {"restored", c.restored},
              {"erased", c.erased},
              {"updated", c.updated},
              {"file_versions_copied", c.file_versions_copied}};
}

// "12 messages in 3 new sessions, 1 trashed" (or "nothing").
std::string ChangesText(const SyncChanges& c) {
  std::string out;
  auto add = [&out](int64_t n, const std::string& what) {
    if (n == 0) return;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(c.events_copied, c.events_copied == 1 ? "event" : "events");
  add(c.sessions_created, c.sessions_created == 1 ? "new session" : "new sessions");
  add(c.trashed, "trashed");
  add(c.restored, "restored from the trash");
  add(c.erased, "erased");
  add(c.updated, "renamed or (un)archived");
  add(c.file_versions_copied, c.file_versions_copied == 1 ? "file version" : "file versions");
  return out.empty() ? "nothing" : out;
}

class ThreadSyncSchedule final : public SyncSchedule {
 public:
  ThreadSyncSchedule(Store& store, std::string other, StoreOptions other_options,
                     std::chrono::seconds every)
      : store_(store),
        other_(std::move(other)),
        other_options_(std::move(other_options)),
        every_(every),
        ticks_(every, [this] { RunOnce(); }) {}

 private:
  void RunOnce() {
    auto other = Store::Open(other_, other_options_);
    Result<SyncReport> report =
        other ? SyncStores(store_, **other) : Result<SyncReport>(Err(other.error()));
    if (!report) {
      std::cerr << "sessiondb: the sync with the other store failed: "
                << EscapeForTerminal(report.error().ToString()) << "; next try in "
                << every_.count() << " s\n";
      return;
    }
    if (report->unchanged()) return;
    std::cerr << "sessiondb: synced: here " << ChangesText(report->into_a) << "; there "
              << ChangesText(report->into_b) << "\n";
  }

  Store& store_;
  const std::string other_;
  const StoreOptions other_options_;
  const std::chrono::seconds every_;
  PeriodicThread ticks_;  // last: it starts once the rest is made
};

}  // namespace

std::unique_ptr<SyncSchedule> SyncSchedule::Start(Store& store, std::string other,
                                                  StoreOptions other_options,
                                                  std::chrono::seconds every) {
  return std::make_unique<ThreadSyncSchedule>(store, std::move(other), std::move(other_options),
                                              every);
}

StoreOptions OtherStoreOptions(const CliContext& ctx, bool create_if_missing,
                               const std::string& key_file) {
  StoreOptions options = ctx.MakeStoreOptions(create_if_missing);
  // The other store's namespace is its URI's: --namespace names this one's.
  options.namespace_name.clear();
  options.key_file = key_file;
  return options;
}

void AddSyncCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string other;
    std::string other_key_file;
    bool create = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "sync", "Bring this store and another (a directory or postgresql:// URI) up to date");
  cmd->add_option("OTHER", args->other, "The other store: a directory or postgresql:// URI")
      ->required();
  cmd->add_option("--other-key-file", args->other_key_file,
                  "The key of the other store when it is encrypted (docs/encryption.md)")
      ->option_text("FILE");
  cmd->add_flag("--create", args->create, "Create the other store when it does not exist");
  cmd->footer(
      "\nBoth ways in one run: each store gets the sessions and events the other lacks\n"
      "(only those), and the trash, erasures, rewinds, renames and archive flags travel.\n"
      "A session appended to on both sides since the last sync comes back as a fork of\n"
      "it (nothing is lost). Running it again copies nothing; a killed run continues\n"
      "when run again. See docs/sync.md. `serve --sync-to URI` keeps doing it.\n"
      "\nExamples:\n  sessiondb sync postgresql://me@db.internal/chats\n"
      "  sessiondb --store ~/chats sync /mnt/usb/chats --json");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    auto other =
        Store::Open(args->other, OtherStoreOptions(ctx, args->create, args->other_key_file));
    if (!other) return ctx.Fail(other.error());
    Result<SyncReport> report;
    {
      Progress progress(isatty(STDERR_FILENO) != 0, "syncing sessions");
      report = SyncStores(*store, **other, {},
                          [&progress](int64_t done, int64_t total) { progress(done, total); });
    }
    if (!report) return ctx.Fail(report.error());
    for (const std::string& why : report->skipped) {
      std::cerr << "sessiondb: skipped " << ctx.ForTerminal(why) << "\n";
    }
    if (ctx.options.json) {
      return ctx.PrintJson({{"sessions_examined", report->sessions_examined},
                            {"here", ChangesJson(report->into_a)},
                            {"there", ChangesJson(report->into_b)},
                            {"forks_made", report->forks_made},
                            {"skipped", report->skipped},
                            {"unchanged", report->unchanged()}});
    }
    std::cout << "synced " << report->sessions_examined << " sessions: here "
              << ChangesText(report->into_a) << "; there " << ChangesText(report->into_b);
    if (report->forks_made > 0) {
      std::cout << "; " << report->forks_made << " diverged session(s) became forks";
    }
    std::cout << "\n";
  });
}

}  // namespace sessiondb::cli
