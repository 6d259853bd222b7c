// EmbeddingWorker on both backends: new documents get vectors in the
// background, a search never writes one, a waiting caller sees its own
// writes, and an embedder that is down is reported, not retried in a loop.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "sessiondb/search.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

SearchOptions BuiltInEmbedder() {
  SearchOptions options;
  options.embedder.from_environment = false;  // the built-in embedder, whatever the machine
  return options;
}

class EmbeddingWorkerTest : public BackendTest {
 protected:
  std::unique_ptr<SearchIndex> Index() {
    auto index = SearchIndex::Open(*store_, BuiltInEmbedder());
    EXPECT_TRUE(index) << index.error().ToString();
    return index ? std::move(*index) : nullptr;
  }
};

TEST_P(EmbeddingWorkerTest, SearchesOnlyReadAndTheWorkerCatchesUp) {
  const std::string s = NewSessionId();
  for (int i = 0; i < 5; ++i) AppendText(s, "the gyroscope drifts, note " + std::to_string(i));
  auto index = Index();
  ASSERT_NE(index, nullptr);

  // Neither mode of search embeds anything on the way.
  for (SearchMode mode : {SearchMode::kVector, SearchMode::kHybrid, SearchMode::kVector}) {
    auto r = index->Search({.query = "gyroscope", .mode = mode});
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->pending_embeddings, 5);
    for (const SearchHit& h : r->hits) EXPECT_EQ(h.vector_rank, 0);
  }
  EXPECT_EQ(*index->VectorCount(), 0);

  auto worker = EmbeddingWorker::Start(*store_, BuiltInEmbedder(), /*poll_ms=*/60'000);
  ASSERT_TRUE(worker) << worker.error().ToString();
  EXPECT_TRUE((*worker)->WaitUntilCaughtUp(1000, 20'000));
  EXPECT_EQ(*index->VectorCount(), 5);
  EXPECT_EQ((*worker)->progress().embedded, 5);
  EXPECT_EQ((*worker)->progress().pending, 0);

  // A write after it started: the long poll would not see it for a minute,
  // a caller waiting for its own write is not kept waiting that long.
  AppendText(s, "a compass needle points north");
  EXPECT_TRUE((*worker)->WaitUntilCaughtUp(1000, 20'000));
  auto r = index->Search({.query = "compass needle", .mode = SearchMode::kVector});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->pending_embeddings, 0);
  ASSERT_FALSE(r->hits.empty());
  EXPECT_EQ(r->hits[0].seq, 6);
  EXPECT_GE(r->hits[0].vector_rank, 1);
}

TEST_P(EmbeddingWorkerTest, ALongBacklogIsNotWaitedFor) {
  const std::string s = NewSessionId();
  for (int i = 0; i < 40; ++i) AppendText(s, "message number " + std::to_string(i));
  auto worker = EmbeddingWorker::Start(*store_, BuiltInEmbedder(), /*poll_ms=*/60'000);
  ASSERT_TRUE(worker) << worker.error().ToString();
  // It may already be done (40 documents are quick); if not, a caller
  // allowing a backlog of 10 at most does not wait for 40.
  const bool caught_up = (*worker)->WaitUntilCaughtUp(10, 20'000);
  EXPECT_EQ(caught_up, (*worker)->progress().pending == 0);
  EXPECT_TRUE((*worker)->WaitUntilCaughtUp(1000, 20'000));
  EXPECT_EQ((*worker)->progress().embedded, 40);
}

TEST_P(EmbeddingWorkerTest, AnEmbedderThatIsDownIsReportedNotLooped) {
  const std::string s = NewSessionId();
  AppendText(s, "something to embed");
  SearchOptions options;
  options.embedder.url = "http://127.0.0.1:9/v1/embeddings";  // discard port: nobody answers
  options.embedder.model = "nobody";
  auto worker = EmbeddingWorker::Start(*store_, options, /*poll_ms=*/60'000);
  ASSERT_TRUE(worker) << worker.error().ToString();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE((*worker)->WaitUntilCaughtUp(1000, 20'000));
  // It gave up with the error instead of waiting out the 20 s.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  const EmbeddingProgress p = (*worker)->progress();
  EXPECT_FALSE(p.last_error.empty());
  EXPECT_EQ(p.embedded, 0);
  EXPECT_EQ(p.pending, 1);
  // The store still serves: appends and keyword search work.
  AppendText(s, "another message");
  auto index = Index();
  ASSERT_NE(index, nullptr);
  auto r = index->Search({.query = "another", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->hits.size(), 1u);
}

SESSIONDB_FOR_EACH_BACKEND(EmbeddingWorkerTest);

}  // namespace
}  // namespace sessiondb::testing
