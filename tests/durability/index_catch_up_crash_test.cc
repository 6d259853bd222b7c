// The full-text index follows the log: writes commit their events, and the
// index takes them past its watermark later, each batch in one transaction
// with the watermark. These tests kill processes while the index catches up
// and while an import runs, then check that once it catches up the index
// holds every event exactly once: FTS5's own integrity check (index against
// its content), one index row per document, and every message found once by
// a word only it holds.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "durability/killed_child.h"
#include "sessiondb/interop.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/sqlite/sqlite_db.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// FTS5's integrity check with rank 1 compares the index with its content
// (the indexed documents): a document indexed twice, or one missing, fails
// it. Also: one index row per document up to the watermark. Through the
// engine's own connection class, which registers the functions the content
// view calls.
void ExpectIndexWhole(const std::string& store_dir) {
  auto db = sqlite::Database::Open((fs::path(store_dir) / kEmbeddedDatabaseFile).string(), 10'000);
  ASSERT_TRUE(db) << db.error().ToString();
  Status check =
      (*db)->Exec("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)");
  EXPECT_TRUE(check.ok()) << check.ToString();
  auto indexed = (*db)->QueryInt("SELECT count(*) FROM search_fts_docsize");
  auto documents = (*db)->QueryInt(
      "SELECT count(*) FROM search_docs WHERE doc_id <= (SELECT fts_through FROM search_progress)");
  ASSERT_TRUE(indexed && documents);
  EXPECT_EQ(indexed->value_or(-1), documents->value_or(-2));
}

// How many hits a keyword search for `word` gives, without catching up.
int64_t KeywordHits(SearchIndex& index, const std::string& word) {
  auto r =
      index.Search({.query = word, .mode = SearchMode::kKeyword, .limit = 10, .catch_up_limit = 0});
  EXPECT_TRUE(r) << r.error().ToString();
  return r ? static_cast<int64_t>(r->hits.size()) : -1;
}

std::string Word(int round, int i) { return "w" + std::to_string(round) + "x" + std::to_string(i); }

// Runs in the child: appends batches of messages, each holding a word of its
// own, and catches the index up a few documents at a time between them, until
// killed. Reports each batch's last word number on `ack_fd` once committed.
[[noreturn]] void AppendAndIndexUntilKilled(const std::string& dir, int ack_fd, int round) {
  auto store = Store::Open(dir, {.durability = Durability::kProcessCrashSafe});
  if (!store) _exit(2);
  auto index = SearchIndex::Open(**store);
  if (!index) _exit(3);
  for (int batch = 0;; ++batch) {
    std::vector<Message> messages;
    for (int i = 0; i < 20; ++i) {
      Message m;
      m.parts.push_back(Part::Text("note " + Word(round, batch * 20 + i)));
      messages.push_back(std::move(m));
    }
    if (!(*store)->AppendBatch("s", messages)) _exit(4);
    const std::string ack = std::to_string(batch * 20 + 19) + "\n";
    if (write(ack_fd, ack.data(), ack.size()) != static_cast<ssize_t>(ack.size())) _exit(5);
    // Small steps, so the kill often lands inside one.
    if (!(*index)->IndexPending(7)) _exit(6);
  }
}

TEST(IndexCatchUpCrash, KilledWhileIndexingTheIndexCatchesUpWithEveryEventOnce) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  {
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "s"}));
  }
  std::mt19937 rng(20261127);
  std::uniform_int_distribution<int> delay_us(20'000, 150'000);
  std::vector<int> acknowledged;  // per round: the last word number acknowledged, -1 for none
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const KilledChild child =
        RunChildAndKill([&](int ack_fd) { AppendAndIndexUntilKilled(store_dir, ack_fd, round); },
                        std::chrono::microseconds(delay_us(rng)));
    ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;
    int last = -1;
    std::istringstream in(child.acks);
    for (int n; in >> n;) last = n;
    acknowledged.push_back(last);
    // After every kill the index as it stands is whole: no batch half done.
    ExpectIndexWhole(store_dir);
  }

  auto store = Store::Open(store_dir);
  ASSERT_TRUE(store);
  auto index = SearchIndex::Open(**store);
  ASSERT_TRUE(index);
  auto left = (*index)->IndexPending();
  ASSERT_TRUE(left) << left.error().ToString();
  EXPECT_EQ(*left, 0);
  ExpectIndexWhole(store_dir);
  int checked = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i <= acknowledged[static_cast<size_t>(round)]; ++i, ++checked) {
      ASSERT_EQ(KeywordHits(**index, Word(round, i)), 1) << Word(round, i);
    }
  }
  EXPECT_GT(checked, 100) << "the children were killed before they wrote much";
}

// A Claude Code projects folder of `sessions` transcripts of `turns` messages,
// each message holding a word of its own ("imp<session>x<turn>").
std::string WriteClaudeProjects(const std::string& root, int sessions, int turns) {
  const fs::path folder = fs::path(root) / "-home-dev-app";
  fs::create_directories(folder);
  for (int s = 0; s < sessions; ++s) {
    char sid[64];
    std::snprintf(sid, sizeof sid, "bbbbbbbb-0000-4000-8000-%012d", s);
    std::ofstream out(folder / (std::string(sid) + ".jsonl"));
    for (int t = 0; t < turns; ++t) {
      char uuid[64], parent[64];
      std::snprintf(uuid, sizeof uuid, "cccccccc-%04d-4000-8000-%012d", s, t);
      std::snprintf(parent, sizeof parent, "cccccccc-%04d-4000-8000-%012d", s, t - 1);
      const std::string word = "imp" + std::to_string(s) + "x" + std::to_string(t);
      const bool user = t % 2 == 0;
      json message =
          user
              ? json{{"role", "user"}, {"content", "please look at " + word}}
              : json{{"id", "msg_" + word},
                     {"type", "message"},
                     {"role", "assistant"},
                     {"model", "claude-sonnet-4"},
                     {"content", json::array({{{"type", "text"}, {"text", "looked at " + word}}})}};
      json record = {{"parentUuid", t == 0 ? json(nullptr) : json(parent)},
                     {"isSidechain", false},
                     {"cwd", "/home/dev/app"},
                     {"sessionId", sid},
                     {"type", user ? "user" : "assistant"},
                     {"message", message},
                     {"uuid", uuid},
                     {"timestamp", "2026-01-01T10:00:00.000Z"}};
      out << record.dump() << "\n";
    }
  }
  return root;
}

TEST(IndexCatchUpCrash, ImportKilledMidwayThenRunAgainIsSearchableOnceEach) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  constexpr int kSessions = 150, kTurns = 100;
  const std::string projects = WriteClaudeProjects(dir.Sub("projects"), kSessions, kTurns);
  { ASSERT_TRUE(Store::Open(store_dir)); }
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> delay_us(30'000, 250'000);
  int killed = 0;
  for (int round = 0; round < 4; ++round) {
    const KilledChild child = RunChildAndKill(
        [&](int) {
          auto store = Store::Open(store_dir);
          if (!store) _exit(2);
          auto report = ImportPath(**store, projects, {});
          if (!report) _exit(3);
          auto index = SearchIndex::Open(**store);
          if (!index || !(*index)->IndexPending()) _exit(4);
          _exit(0);
        },
        std::chrono::microseconds(delay_us(rng)));
    // It may have finished: then this round imported it all.
    if (!child.killed) {
      ASSERT_EQ(child.exit_status, 0);
    }
    killed += child.killed ? 1 : 0;
    ExpectIndexWhole(store_dir);
  }
  EXPECT_GT(killed, 0) << "every import finished before its kill: nothing was tested mid-way";
  // The user runs the import again: what the killed runs left is kept, the
  // rest comes in, and the index catches up.
  auto store = Store::Open(store_dir);
  ASSERT_TRUE(store);
  auto report = ImportPath(**store, projects, {});
  ASSERT_TRUE(report) << report.error().ToString();
  auto index = SearchIndex::Open(**store);
  ASSERT_TRUE(index);
  auto left = (*index)->IndexPending();
  ASSERT_TRUE(left);
  EXPECT_EQ(*left, 0);
  ExpectIndexWhole(store_dir);
  for (int s = 0; s < kSessions; ++s) {
    for (int t = 0; t < kTurns; ++t) {
      const std::string word = "imp" + std::to_string(s) + "x" + std::to_string(t);
      ASSERT_EQ(KeywordHits(**index, word), 1) << word;
    }
  }
}

}  // namespace
}  // namespace sessiondb::testing
