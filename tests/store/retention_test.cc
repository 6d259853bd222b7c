// Retention policies: the policy kept and checked, each rule, pinned
// sessions, per-project rules, keep_newest, forks never orphaned, a dry run
// that changes nothing and a real run recorded in the ledger.
#include <algorithm>

#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr int64_t kDay = int64_t{24} * 3600 * 1000;

class Retention : public BackendTest {
 protected:
  // A session of `project` (empty: none) last active `idle_days` ago.
  std::string SessionIdle(const std::string& id, int64_t idle_days, const std::string& project = "",
                          bool pinned = false) {
    const int64_t saved = now_ms_;
    now_ms_ -= idle_days * kDay;
    std::string meta = "{";
    if (!project.empty()) meta += "\"project\":\"" + project + "\"";
    if (pinned) meta += std::string(project.empty() ? "" : ",") + "\"pinned\":true";
    meta += "}";
    auto s = store_->CreateSession({.id = id, .metadata_json = meta});
    EXPECT_TRUE(s) << s.error().ToString();
    now_ms_ = saved;
    return id;
  }

  void SetPolicy(const RetentionPolicy& p) {
    Status s = store_->SetRetentionPolicy(p);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  RetentionRun Run(bool dry_run) {
    auto run = store_->ApplyRetention(dry_run);
    EXPECT_TRUE(run) << run.error().ToString();
    return run ? *run : RetentionRun{};
  }

  static std::vector<std::string> Sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  }

  // Ids listed, as `options` asks, every page.
  std::vector<std::string> Listed(ListOptions options) {
    std::vector<std::string> out;
    options.limit = 1000;
    auto page = store_->ListSessions(options);
    EXPECT_TRUE(page) << page.error().ToString();
    if (page) {
      for (auto& s : page->sessions) out.push_back(s.id);
    }
    return Sorted(out);
  }
  std::vector<std::string> Live() { return Listed({.archived = ArchiveFilter::kAll}); }
  std::vector<std::string> Archived() { return Listed({.archived = ArchiveFilter::kArchived}); }
  std::vector<std::string> Trashed() { return Listed({.trash = true}); }
};
SESSIONDB_FOR_EACH_BACKEND(Retention);

using Ids = std::vector<std::string>;

TEST_P(Retention, AStoreWithNoPolicyHasTheDefaultOne) {
  auto p = store_->GetRetentionPolicy();
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(*p, RetentionPolicy{});
  EXPECT_EQ(p->trash_grace_days, 30);
  EXPECT_TRUE(p->rules.empty());
}

TEST_P(Retention, APolicyIsKeptAcrossReopensWithItsProjectsMadeNormal) {
  RetentionPolicy p{.trash_grace_days = 7,
                    .rules = {{.project = "", .trash_after_idle_days = 30},
                              {.project = "/src/app/./",
                               .keep_newest = 3,
                               .archive_after_idle_days = 2,
                               .erase_archived_after_idle_days = 90}}};
  SetPolicy(p);
  Reopen();
  auto back = store_->GetRetentionPolicy();
  ASSERT_TRUE(back) << back.error().ToString();
  p.rules[1].project = "/src/app";
  EXPECT_EQ(*back, p);
}

TEST_P(Retention, NegativeNumbersAndTwoRulesOfOneProjectAreRefusedAndNothingIsStored) {
  SetPolicy({.trash_grace_days = 5});
  const std::vector<RetentionPolicy> bad = {
      {.trash_grace_days = -1},
      {.rules = {{.trash_after_idle_days = -2}}},
      {.rules = {{.keep_newest = -1}}},
      {.rules = {{.archive_after_idle_days = -1}}},
      {.rules = {{.erase_archived_after_idle_days = -1}}},
      {.rules = {{.project = "/a", .keep_newest = 1}, {.project = "/a/", .keep_newest = 2}}},
      {.rules = {{.keep_newest = 1}, {.keep_newest = 2}}},
      {.trash_grace_days = int64_t{1} << 50},
  };
  for (const RetentionPolicy& p : bad) {
    EXPECT_EQ(store_->SetRetentionPolicy(p).code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(store_->GetRetentionPolicy()->trash_grace_days, 5);
  EXPECT_TRUE(store_->GetRetentionPolicy()->rules.empty());
}

TEST_P(Retention, TrashAfterIdleTrashesOnlySessionsIdleLonger) {
  SessionIdle("old", 31);
  SessionIdle("new", 29);
  SetPolicy({.rules = {{.trash_after_idle_days = 30}}});
  RetentionRun run = Run(false);
  EXPECT_FALSE(run.dry_run);
  EXPECT_EQ(run.trashed, Ids{"old"});
  EXPECT_TRUE(run.archived.empty());
  EXPECT_EQ(Live(), Ids{"new"});
  EXPECT_EQ(Trashed(), Ids{"old"});
  // Restorable: the policy trashes, it does not erase.
  ASSERT_TRUE(store_->RestoreFromTrash("old"));
}

TEST_P(Retention, ArchiveAfterIdleArchivesAndLeavesTheRestAlone) {
  SessionIdle("idle", 8);
  SessionIdle("busy", 1);
  SetPolicy({.rules = {{.archive_after_idle_days = 7}}});
  RetentionRun run = Run(false);
  EXPECT_EQ(run.archived, Ids{"idle"});
  EXPECT_EQ(Archived(), Ids{"idle"});
  EXPECT_EQ(Live(), (Ids{"busy", "idle"}));
  // Archived already: a second run has nothing to do.
  RetentionRun again = Run(false);
  EXPECT_TRUE(again.archived.empty());
}

TEST_P(Retention, EraseArchivedAfterIdleErasesOnlyArchivedSessionsForGood) {
  SessionIdle("archived-old", 100);
  SessionIdle("archived-new", 10);
  SessionIdle("active-old", 100);
  ASSERT_TRUE(store_->SetArchived("archived-old", true).ok());
  ASSERT_TRUE(store_->SetArchived("archived-new", true).ok());
  SetPolicy({.rules = {{.erase_archived_after_idle_days = 90}}});
  RetentionRun run = Run(false);
  EXPECT_EQ(run.erased, Ids{"archived-old"});
  EXPECT_FALSE(run.receipt_id.empty());
  EXPECT_EQ(store_->GetSession("archived-old").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->RestoreFromTrash("archived-old").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(Live(), (Ids{"active-old", "archived-new"}));
}

TEST_P(Retention, KeepNewestTrashesAllButTheNMostRecentlyUpdated) {
  for (int i = 0; i < 5; ++i) SessionIdle("s" + std::to_string(i), 5 - i);  // s4 newest
  SetPolicy({.rules = {{.keep_newest = 2}}});
  RetentionRun run = Run(false);
  EXPECT_EQ(Sorted(run.trashed), (Ids{"s0", "s1", "s2"}));
  EXPECT_EQ(Live(), (Ids{"s3", "s4"}));
}

TEST_P(Retention, PinnedSessionsAreExemptFromEveryRuleAndFromKeepNewest) {
  SessionIdle("pinned-old", 400, "", /*pinned=*/true);
  SessionIdle("plain-old", 400);
  SessionIdle("pinned-archived", 400, "/src/app", /*pinned=*/true);
  ASSERT_TRUE(store_->SetArchived("pinned-archived", true).ok());
  SessionIdle("fresh", 0);
  SetPolicy(
      {.rules = {
           {.trash_after_idle_days = 30, .keep_newest = 1, .erase_archived_after_idle_days = 1},
           {.project = "/src/app", .erase_archived_after_idle_days = 1}}});
  RetentionRun run = Run(false);
  EXPECT_EQ(run.trashed, Ids{"plain-old"});
  EXPECT_TRUE(run.erased.empty());
  EXPECT_EQ(Live(), (Ids{"fresh", "pinned-archived", "pinned-old"}));
}

TEST_P(Retention, EachSessionIsHandledByTheRuleOfItsLongestMatchingProject) {
  SessionIdle("app", 20, "/src/app");
  SessionIdle("app-lib", 20, "/src/app/lib");
  SessionIdle("apple", 20, "/src/apple");  // not inside /src/app
  SessionIdle("none", 20);
  SetPolicy({.rules = {{.project = "", .trash_after_idle_days = 100},
                       {.project = "/src/app", .archive_after_idle_days = 10},
                       {.project = "/src/app/lib", .trash_after_idle_days = 10}}});
  RetentionRun run = Run(false);
  EXPECT_EQ(run.archived, Ids{"app"});
  EXPECT_EQ(run.trashed, Ids{"app-lib"});
  EXPECT_EQ(Archived(), Ids{"app"});
  EXPECT_EQ(Trashed(), Ids{"app-lib"});
  EXPECT_EQ(Live(), (Ids{"app", "apple", "none"}));
}

TEST_P(Retention, ASessionNoRuleHoldsIsLeftAlone) {
  SessionIdle("elsewhere", 500, "/other");
  SetPolicy({.rules = {{.project = "/src", .trash_after_idle_days = 1}}});
  RetentionRun run = Run(false);
  EXPECT_TRUE(run.trashed.empty());
  EXPECT_EQ(Live(), Ids{"elsewhere"});
}

TEST_P(Retention, ADryRunSaysWhatItWouldDoAndChangesNothing) {
  SessionIdle("to-archive", 8);
  SessionIdle("to-trash", 40);
  SessionIdle("to-erase", 100);
  ASSERT_TRUE(store_->SetArchived("to-erase", true).ok());
  SetPolicy({.rules = {{.trash_after_idle_days = 30,
                        .archive_after_idle_days = 7,
                        .erase_archived_after_idle_days = 90}}});
  auto ledger_before = store_->ReadLedger({});
  ASSERT_TRUE(ledger_before) << ledger_before.error().ToString();

  RetentionRun run = Run(true);
  EXPECT_TRUE(run.dry_run);
  EXPECT_EQ(run.archived, Ids{"to-archive"});
  EXPECT_EQ(run.trashed, Ids{"to-trash"});
  EXPECT_EQ(run.erased, Ids{"to-erase"});
  EXPECT_EQ(run.ledger_id, 0);
  EXPECT_TRUE(run.receipt_id.empty());

  EXPECT_EQ(Live(), (Ids{"to-archive", "to-erase", "to-trash"}));
  EXPECT_EQ(Archived(), Ids{"to-erase"});
  EXPECT_TRUE(Trashed().empty());
  EXPECT_EQ(store_->ReadLedger({})->size(), ledger_before->size());
}

TEST_P(Retention, ARealRunIsRecordedInTheLedgerAsThePolicysWithItsCounts) {
  SessionIdle("a", 8);
  SessionIdle("b", 40);
  SetPolicy({.rules = {{.trash_after_idle_days = 30, .archive_after_idle_days = 7}}});
  RetentionRun run = Run(false);
  ASSERT_GT(run.ledger_id, 0);
  auto ledger = store_->ReadLedger({.limit = 1});
  ASSERT_TRUE(ledger) << ledger.error().ToString();
  ASSERT_EQ(ledger->size(), 1u);
  const LedgerEntry& e = ledger->front();
  EXPECT_EQ(e.id, run.ledger_id);
  EXPECT_EQ(e.action, "retain");
  EXPECT_EQ(e.actor, "policy");
  EXPECT_EQ(e.ts_ms, now_ms_);  // the store's clock
  using Counts = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(e.counts,
            (Counts{{"archived", 1}, {"trashed", 1}, {"erased", 0}, {"kept_for_forks", 0}}));
}

TEST_P(Retention, ARealRunWithNothingToDoChangesNothingAndIsRecorded) {
  SessionIdle("recent", 1);
  SetPolicy({.rules = {{.trash_after_idle_days = 30}}});
  RetentionRun run = Run(false);
  EXPECT_FALSE(run.dry_run);
  EXPECT_GT(run.ledger_id, 0);
  auto ledger = store_->ReadLedger({});
  ASSERT_TRUE(ledger) << ledger.error().ToString();
  ASSERT_EQ(ledger->size(), 1u);
  EXPECT_EQ(ledger->front().id, run.ledger_id);
  EXPECT_EQ(ledger->front().action, "retain");
  using Counts = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(ledger->front().counts,
            (Counts{{"archived", 0}, {"trashed", 0}, {"erased", 0}, {"kept_for_forks", 0}}));
  EXPECT_EQ(Live(), Ids{"recent"});
}

TEST_P(Retention, TheTrashIsEmptiedOnlyPastItsGrace) {
  SessionIdle("long-ago", 0);
  SessionIdle("lately", 0);
  ASSERT_TRUE(store_->TrashSession("long-ago").ok());
  now_ms_ += 20 * kDay;
  ASSERT_TRUE(store_->TrashSession("lately").ok());
  now_ms_ += 11 * kDay;  // long-ago: 31 days in the trash; lately: 11
  SetPolicy({.trash_grace_days = 30});

  RetentionRun dry = Run(true);
  EXPECT_EQ(dry.erased, Ids{"long-ago"});
  EXPECT_EQ(Trashed(), (Ids{"lately", "long-ago"}));

  RetentionRun run = Run(false);
  EXPECT_EQ(run.erased, Ids{"long-ago"});
  EXPECT_FALSE(run.receipt_id.empty());
  EXPECT_EQ(Trashed(), Ids{"lately"});
  EXPECT_EQ(store_->RestoreFromTrash("long-ago").error().code(), StatusCode::kNotFound);
}

TEST_P(Retention, AnArchivedParentIsNotErasedWhileAForkTheRuleKeepsStillReadsIt) {
  SessionIdle("parent", 100);
  now_ms_ -= 100 * kDay;
  AppendText("parent", "the fork reads this");
  auto fork = store_->ForkSession("parent", 1, {.id = "fork"});
  ASSERT_TRUE(fork) << fork.error().ToString();
  now_ms_ += 100 * kDay;
  ASSERT_TRUE(store_->SetArchived("parent", true).ok());
  AppendText("fork", "still in use");  // the fork is busy and not archived
  SetPolicy({.rules = {{.erase_archived_after_idle_days = 1}}});

  RetentionRun dry = Run(true);
  EXPECT_TRUE(dry.erased.empty());
  EXPECT_EQ(dry.kept_for_forks, Ids{"parent"});
  RetentionRun run = Run(false);
  EXPECT_TRUE(run.erased.empty());
  EXPECT_EQ(run.kept_for_forks, Ids{"parent"});
  EXPECT_TRUE(store_->GetSession("parent"));
  auto read = store_->ReadMessages("fork");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read->size(), 2u);
}

}  // namespace
}  // namespace sessiondb::testing
