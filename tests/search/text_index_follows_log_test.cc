// The full-text index follows the log (schema version 5 of the embedded
// store): a write records its document and commits; the index takes the
// documents past its watermark later. A search catches up first (its caller
// sees what it just wrote), or answers as of the watermark and says how much
// it did not see; deletes, prunes and rewrites of documents not yet indexed
// never touch (and so never corrupt) the index; a store from schema version 4
// keeps its index. PostgreSQL indexes inside its writers' transactions, so
// nothing is ever pending there; the read-your-writes test runs on both.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/sqlite/sqlite_db.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class TextIndexFollowsLog : public BackendTest {
 protected:
  std::unique_ptr<SearchIndex> Index() {
    SearchOptions options;
    options.embedder.from_environment = false;
    auto index = SearchIndex::Open(*store_, options);
    EXPECT_TRUE(index) << index.error().message();
    return index ? std::move(*index) : nullptr;
  }

  static SearchResults Keyword(SearchIndex& index, const std::string& q, int64_t catch_up) {
    auto r = index.Search(
        {.query = q, .mode = SearchMode::kKeyword, .limit = 50, .catch_up_limit = catch_up});
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : SearchResults{};
  }

  // FTS5's check of the index against the documents it holds (a document
  // indexed twice or missing fails it); embedded stores only. Through the
  // engine's own connection class, which registers the functions the
  // content view calls.
  void ExpectIndexMatchesContent() {
    if (!embedded()) return;
    auto db = sqlite::Database::Open(StoreDir() + "/" + std::string(kEmbeddedDatabaseFile), 10'000);
    ASSERT_TRUE(db) << db.error().ToString();
    Status check =
        (*db)->Exec("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)");
    EXPECT_TRUE(check.ok()) << check.ToString();
  }
};

TEST_P(TextIndexFollowsLog, ASearchFindsWhatItsCallerJustAppended) {
  auto index = Index();
  ASSERT_TRUE(index);
  const std::string s = NewSessionId();
  for (int i = 0; i < 30; ++i) {
    AppendText(s, "entry number " + std::to_string(i) + " about quokkas" + std::to_string(i));
    SearchResults r = Keyword(*index, "quokkas" + std::to_string(i), 50'000);
    ASSERT_EQ(r.hits.size(), 1u) << i;
    EXPECT_EQ(r.hits[0].seq, i + 1);
    EXPECT_EQ(r.pending_documents, 0);
  }
  ExpectIndexMatchesContent();
}

TEST_P(TextIndexFollowsLog, WithoutCatchUpASearchAnswersAsOfTheWatermarkAndSaysSo) {
  auto index = Index();
  ASSERT_TRUE(index);
  const std::string s = NewSessionId();
  AppendText(s, "the pangolin came first");
  ASSERT_EQ(Keyword(*index, "pangolin", 50'000).hits.size(), 1u);
  AppendText(s, "a second pangolin");
  AppendText(s, "and a third pangolin");
  SearchResults stale = Keyword(*index, "pangolin", 0);
  if (!embedded()) {  // indexed in the writer's transaction
    EXPECT_EQ(stale.hits.size(), 3u);
    EXPECT_EQ(stale.pending_documents, 0);
    return;
  }
  EXPECT_EQ(stale.hits.size(), 1u);
  EXPECT_EQ(stale.pending_documents, 2);
  auto pending = index->PendingDocuments();
  ASSERT_TRUE(pending);
  EXPECT_EQ(*pending, 2);
  // A limit below what is pending: the search does not index part of it.
  EXPECT_EQ(Keyword(*index, "pangolin", 1).hits.size(), 1u);
  auto left = index->IndexPending();
  ASSERT_TRUE(left) << left.error().ToString();
  EXPECT_EQ(*left, 0);
  EXPECT_EQ(Keyword(*index, "pangolin", 0).hits.size(), 3u);
  ExpectIndexMatchesContent();
}

TEST_P(TextIndexFollowsLog, RemovingOrPruningDocumentsNotYetIndexedLeavesTheIndexWhole) {
  auto index = Index();
  ASSERT_TRUE(index);
  const std::string kept = NewSessionId("kept");
  AppendText(kept, "an indexed narwhal");
  ASSERT_EQ(Keyword(*index, "narwhal", 50'000).hits.size(), 1u);
  // Written, then deleted or pruned before the index saw them.
  const std::string gone = NewSessionId("gone");
  AppendText(gone, "a doomed narwhal");
  const std::string pruned = NewSessionId("pruned");
  AppendText(pruned, "a pruned narwhal");
  AppendText(pruned, "more words");
  auto compaction = store_->Compact(pruned, {.from_seq = 1, .to_seq = 2, .summary = "summary"});
  ASSERT_TRUE(compaction) << compaction.error().ToString();
  ASSERT_TRUE(store_->DeleteSession(gone).ok());
  ASSERT_TRUE(store_->PruneCompaction(pruned, compaction->seq));
  ExpectIndexMatchesContent();
  auto left = index->IndexPending();
  ASSERT_TRUE(left);
  EXPECT_EQ(*left, 0);
  ExpectIndexMatchesContent();
  SearchResults r = Keyword(*index, "narwhal", 0);
  ASSERT_EQ(r.hits.size(), 1u);
  EXPECT_EQ(r.hits[0].session_id, kept);
  // The other way round: indexed first, then removed.
  AppendText(kept, "a second narwhal");
  ASSERT_EQ(Keyword(*index, "narwhal", 50'000).hits.size(), 2u);
  ASSERT_TRUE(store_->DeleteSession(kept).ok());
  EXPECT_EQ(Keyword(*index, "narwhal", 50'000).hits.size(), 0u);
  ExpectIndexMatchesContent();
}

TEST_P(TextIndexFollowsLog, TwoCatchUpsAtOnceIndexEachDocumentOnce) {
  const std::string s = NewSessionId();
  std::vector<Message> batch;
  for (int i = 0; i < 3000; ++i) {
    Message m;
    m.parts.push_back(Part::Text("tapir" + std::to_string(i) + " walks"));
    batch.push_back(std::move(m));
  }
  ASSERT_TRUE(store_->AppendBatch(s, batch));
  auto a = Index();
  auto b = Index();
  ASSERT_TRUE(a && b);
  std::thread other([&] { EXPECT_TRUE(b->IndexPending(-1)); });
  auto left = a->IndexPending(-1);
  other.join();
  ASSERT_TRUE(left);
  auto pending = a->PendingDocuments();
  ASSERT_TRUE(pending);
  EXPECT_EQ(*pending, 0);
  ExpectIndexMatchesContent();
  EXPECT_EQ(Keyword(*a, "walks", 0).keyword_matches, 3000);
  for (int i : {0, 1499, 2999}) {
    EXPECT_EQ(Keyword(*a, "tapir" + std::to_string(i), 0).hits.size(), 1u) << i;
  }
}

// A catch-up asked for everything (an import's end, reindex) takes large
// batches, and FTS5 keeps each one in memory until it commits: so each
// becomes one segment, which FTS5 would otherwise write (and later merge
// again and again) per 4,096 documents and per MiB of terms.
TEST_P(TextIndexFollowsLog, ABulkCatchUpWritesEachLargeBatchAsOneSegment) {
  if (!embedded()) return;  // PostgreSQL indexes inside its writers' transactions
  const std::string s = NewSessionId();
  constexpr int kDocuments = 70'000;  // two bulk batches
  for (int first = 0; first < kDocuments; first += 1000) {
    std::vector<Message> batch;
    for (int i = first; i < first + 1000; ++i) {
      Message m;
      // Ten words each: some 3 MiB of terms per batch, past FTS5's default
      // 1 MiB.
      std::string text = "okapi" + std::to_string(i);
      for (int w = 0; w < 10; ++w) text += " w" + std::to_string((i * 31 + w * 7) % 5000);
      m.parts.push_back(Part::Text(text));
      batch.push_back(std::move(m));
    }
    ASSERT_TRUE(store_->AppendBatch(s, batch));
  }
  auto index = Index();
  ASSERT_TRUE(index);
  auto left = index->IndexPending(-1);
  ASSERT_TRUE(left) << left.error().ToString();
  EXPECT_EQ(*left, 0);
  ExpectIndexMatchesContent();
  auto db = sqlite::Database::Open(StoreDir() + "/" + std::string(kEmbeddedDatabaseFile), 10'000);
  ASSERT_TRUE(db) << db.error().ToString();
  auto segments = (*db)->QueryInt("SELECT count(DISTINCT segid) FROM search_fts_idx");
  ASSERT_TRUE(segments) << segments.error().ToString();
  EXPECT_EQ(segments->value_or(0), 2);
  for (int i : {0, 65'535, 65'536, kDocuments - 1}) {
    EXPECT_EQ(Keyword(*index, "okapi" + std::to_string(i), 0).hits.size(), 1u) << i;
  }
}

SESSIONDB_FOR_EACH_BACKEND(TextIndexFollowsLog);

// A read-only store cannot be indexed: its searches answer as of the
// watermark, say how many documents they did not see, and write nothing. The
// writer indexes what it wrote when it closes, so the reader then finds it.
class TextIndexReadOnly : public EmbeddedStoreTest {};

TEST_F(TextIndexReadOnly, SearchAnswersAsOfTheWatermarkUntilTheWriterCloses) {
  const std::string s = NewSessionId();
  AppendText(s, "the first capybara");
  {
    auto index = SearchIndex::Open(*store_);
    ASSERT_TRUE(index);
    ASSERT_TRUE((*index)->IndexPending());
  }
  AppendText(s, "the second capybara");
  {
    StoreOptions read_only = Options();
    read_only.read_only = true;
    auto reader = Store::Open(Location(), read_only);
    ASSERT_TRUE(reader) << reader.error().ToString();
    auto index = SearchIndex::Open(**reader);
    ASSERT_TRUE(index) << index.error().ToString();
    auto r = (*index)->Search({.query = "capybara", .mode = SearchMode::kKeyword});
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->hits.size(), 1u);
    EXPECT_EQ(r->pending_documents, 1);
    auto left = (*index)->IndexPending();
    ASSERT_FALSE(left);
    EXPECT_EQ(left.error().code(), StatusCode::kFailedPrecondition);
  }
  Reopen();  // the writer closes, then a new one opens
  auto index = SearchIndex::Open(*store_);
  ASSERT_TRUE(index);
  auto pending = (*index)->PendingDocuments();
  ASSERT_TRUE(pending);
  EXPECT_EQ(*pending, 0);
  auto r =
      (*index)->Search({.query = "capybara", .mode = SearchMode::kKeyword, .catch_up_limit = 0});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->hits.size(), 2u);
}

}  // namespace
}  // namespace sessiondb::testing
