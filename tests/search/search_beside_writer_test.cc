// A search never waits for a writer. Found from outside (issue 33): while
// another process held the store's write lock, a search waited the whole
// busy timeout (60 s) to catch the full-text index up, then answered. Now it
// only tries the lock: it answers at once as of the index's watermark, says
// how many documents it did not see and why, and the first search after the
// lock is free catches up.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "held_write_lock.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

// The bound is for correctness, not speed: a wait for the lock lasts the
// busy timeout (60 s); an answer that does not wait takes milliseconds.
constexpr auto kAtOnce = std::chrono::seconds(5);

SearchResults KeywordSearch(Store& store, const std::string& query) {
  SearchOptions options;
  options.embedder.from_environment = false;
  auto index = SearchIndex::Open(store, options);
  EXPECT_TRUE(index) << index.error().ToString();
  if (!index) return {};
  auto r = (*index)->Search({.query = query, .mode = SearchMode::kKeyword});
  EXPECT_TRUE(r) << r.error().ToString();
  return r ? *r : SearchResults{};
}

class StoreWithOneIndexedMessage : public ::testing::Test {
 protected:
  // A store with one indexed message about wombats.
  void SetUp() override {
    auto store = Store::Open(dir_);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s1"}));
    Message m;
    m.parts = {Part::Text("the first wombat")};
    ASSERT_TRUE((*store)->Append("s1", m));
    ASSERT_EQ(KeywordSearch(**store, "wombat").pending_documents, 0);
  }

  TempDir tmp_;
  const std::string dir_ = tmp_.Sub("store");
};

// The lock held by another process, in each of the two ways it can be.
class SearchBesideWriter : public StoreWithOneIndexedMessage,
                           public ::testing::WithParamInterface<HeldWriteLock::How> {};
using SearchBesideWriterOfTheSameProcess = StoreWithOneIndexedMessage;

TEST_P(SearchBesideWriter, ASearchAnswersAtOnceAsOfTheIndexAndSaysWhatIsPending) {
  HeldWriteLock writer(dir_, "s1", "the second wombat", GetParam());
  ASSERT_TRUE(writer.holding());

  const auto start = std::chrono::steady_clock::now();
  {
    auto store = Store::Open(dir_);  // the default busy timeout: 60 s
    ASSERT_TRUE(store) << store.error().ToString();
    SearchResults r = KeywordSearch(**store, "wombat");
    ASSERT_EQ(r.hits.size(), 1u);  // what the index held
    EXPECT_EQ(r.hits[0].seq, 1);
    EXPECT_EQ(r.pending_documents, 1);
    EXPECT_NE(r.note.find("1 document not yet indexed"), std::string::npos) << r.note;
    EXPECT_NE(r.note.find("write lock"), std::string::npos) << r.note;
  }  // closing does not wait for the lock either
  EXPECT_LT(std::chrono::steady_clock::now() - start, kAtOnce);

  EXPECT_EQ(writer.Release(), 0);
  auto store = Store::Open(dir_);
  ASSERT_TRUE(store) << store.error().ToString();
  SearchResults r = KeywordSearch(**store, "wombat");
  EXPECT_EQ(r.hits.size(), 2u);
  EXPECT_EQ(r.pending_documents, 0);
  EXPECT_EQ(r.note, "");
  // Nothing else changed: the log holds both messages, once each.
  auto events = (*store)->ReadEvents("s1");
  ASSERT_TRUE(events) << events.error().ToString();
  EXPECT_EQ(events->size(), 2u);
}

// The same search in a process where another connection of its own holds the
// lock, as a server's import would: it must not wait either.
TEST_F(SearchBesideWriterOfTheSameProcess, DoesNotHoldASearchUp) {
  auto store = Store::Open(dir_);
  ASSERT_TRUE(store) << store.error().ToString();
  Message m;
  m.parts = {Part::Text("a wombat appended here")};
  ASSERT_TRUE((*store)->Append("s1", m));
  auto db = sqlite::Database::Open(dir_ + "/" + std::string(kEmbeddedDatabaseFile), 1000);
  ASSERT_TRUE(db) << db.error().ToString();
  auto txn = sqlite::Transaction::Begin(db->get());
  ASSERT_TRUE(txn) << txn.error().ToString();
  const auto start = std::chrono::steady_clock::now();
  SearchResults r = KeywordSearch(**store, "wombat");
  EXPECT_LT(std::chrono::steady_clock::now() - start, kAtOnce);
  EXPECT_EQ(r.hits.size(), 1u);
  EXPECT_EQ(r.pending_documents, 1);
}

INSTANTIATE_TEST_SUITE_P(Holders, SearchBesideWriter,
                         ::testing::Values(HeldWriteLock::How::kWriterLockAndSqlite,
                                           HeldWriteLock::How::kSqliteAlone),
                         [](const auto& info) {
                           return info.param == HeldWriteLock::How::kWriterLockAndSqlite
                                      ? std::string("WriterLockAndSqlite")
                                      : std::string("SqliteAlone");
                         });

}  // namespace
}  // namespace sessiondb::testing
