// Vectors on PostgreSQL without loading them all (issue 37): the HNSW graph
// is cached per machine (store/postgres/pg_vector_cache.h), a fresh index maps
// it and scans only the vectors written after it, and what the database
// clears or erases never comes back from the cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "search/embedding_store.h"
#include "search/vector_codec.h"
#include "search/vector_index.h"
#include "sessiondb/forget.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/index_backend.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

SearchOptions Approximate() {
  SearchOptions options;
  options.embedder.from_environment = false;  // the built-in embedder
  options.approximate_threshold = 100;        // these small corpora count as large
  return options;
}

// A sentence of its own per i: distinct words, so its vector finds it.
std::string Sentence(int i) {
  static const char* kWords[] = {"alpha",  "bravo",  "cobalt", "delta",   "ember",   "fjord",
                                 "garnet", "harbor", "indigo", "juniper", "kestrel", "lumen",
                                 "mosaic", "nectar", "onyx",   "prism",   "quartz",  "raven"};
  std::string s = "note" + std::to_string(i);
  for (int k = 0; k < 6; ++k) s += std::string(" ") + kWords[(i * 7 + k * 5 + i / 18) % 18];
  return s;
}

class PgVectors : public PostgresStoreTest {
 protected:
  void SetUp() override {
    PostgresStoreTest::SetUp();
    ::setenv("SESSIONDB_CACHE_DIR", dir_.Sub("cache").c_str(), 1);
  }

  void Fill(const std::string& session, int from, int to) {
    NewSessionId(session);
    std::vector<Message> batch;
    for (int i = from; i < to; ++i) {
      Message m;
      m.role = Role::kUser;
      m.parts.push_back(Part::Text(Sentence(i)));
      batch.push_back(std::move(m));
    }
    ASSERT_TRUE(store_->AppendBatch(session, batch));
  }

  std::unique_ptr<SearchIndex> Index() {
    auto index = SearchIndex::Open(*store_, Approximate());
    EXPECT_TRUE(index) << index.error().ToString();
    return index ? std::move(*index) : nullptr;
  }

  std::string FilesDirectory() {
    auto backend = store_->OpenIndexBackend();
    EXPECT_TRUE(backend) << backend.error().ToString();
    return backend ? (*backend)->FilesDirectory() : "";
  }

  std::string Model() { return Index()->EmbeddingModel(); }

  // The graph file in the cache folder ("" when none).
  std::string GraphFile() {
    const std::string dir = FilesDirectory();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".hnsw") return e.path().string();
    }
    return "";
  }

  // The seq of the first vector hit of `query` (0 when none).
  int64_t FirstVectorHit(SearchIndex& index, const std::string& query) {
    auto r = index.Search({.query = query, .mode = SearchMode::kVector, .limit = 1});
    EXPECT_TRUE(r) << r.error().ToString();
    return r && !r->hits.empty() ? r->hits[0].seq : 0;
  }
};

TEST_F(PgVectors, AFreshIndexAnswersCoveredDocumentsFromTheCachedGraph) {
  Fill("s", 0, 500);
  auto index = Index();
  ASSERT_TRUE(index->Embed());
  ASSERT_TRUE(index->BuildVectorIndex().ok());
  const std::string dir = FilesDirectory();
  ASSERT_FALSE(dir.empty());
  EXPECT_EQ(dir.rfind(dir_.Sub("cache") + "/pg-", 0), 0u) << dir;
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  ASSERT_FALSE(GraphFile().empty());
  // The coverage is this machine's: the database holds only the epoch.
  const std::string shared = pg_->Query("SELECT value FROM index_meta WHERE key LIKE 'hnsw:%'");
  EXPECT_EQ(shared.rfind("cache-epoch ", 0), 0u) << shared;
  auto backend = store_->OpenIndexBackend();
  auto cover = (*backend)->GetMeta("hnsw:" + Model());
  ASSERT_TRUE(cover && *cover);
  EXPECT_EQ((*cover)->substr((*cover)->find(' ') + 1, 3), "500");  // count

  // Documents written after the build: the tail, scanned exactly.
  Fill("t", 500, 510);
  ASSERT_TRUE(index->Embed());
  // Behind the store's back, the covered vectors leave the database: a
  // fresh index that still finds those documents found them in the graph.
  pg_->Query(
      "DELETE FROM embeddings WHERE doc_id IN (SELECT doc_id FROM search_docs"
      " WHERE session_id = 's')");
  auto fresh = Index();
  EXPECT_EQ(FirstVectorHit(*fresh, Sentence(123)), 124);
  EXPECT_EQ(FirstVectorHit(*fresh, Sentence(321)), 322);
  auto tail = fresh->Search({.query = Sentence(505), .mode = SearchMode::kVector, .limit = 1});
  ASSERT_TRUE(tail && tail->hits.size() == 1);
  EXPECT_EQ(tail->hits[0].session_id, "t");
  EXPECT_EQ(tail->hits[0].seq, 6);
}

TEST_F(PgVectors, TheCachedGraphFindsNineteenInTwentyOfTheExactNeighbours) {
  // 20,000 vectors, written as reindex would (PutVectors).
  constexpr int kCount = 20'000;
  NewSessionId("r");
  for (int from = 0; from < kCount; from += 2000) {
    std::vector<Message> batch(2000);
    for (int i = 0; i < 2000; ++i) {
      batch[i].role = Role::kUser;
      batch[i].parts.push_back(Part::Text("r" + std::to_string(from + i)));
    }
    ASSERT_TRUE(store_->AppendBatch("r", batch));
  }
  const std::string model = Model();
  auto backend = store_->OpenIndexBackend();
  ASSERT_TRUE(backend);
  // Clustered, as an embedder of meaning makes them (docs/benchmarks.md,
  // "Vectors on clustered embeddings"): 200 centres, noise of norm ~0.5.
  std::mt19937 rng(37);
  std::normal_distribution<float> normal;
  auto unit = [](std::vector<float> v) {
    float norm = 0;
    for (float x : v) norm += x * x;
    for (float& x : v) x /= std::sqrt(norm);
    return v;
  };
  std::vector<std::vector<float>> centres(200, std::vector<float>(384));
  for (auto& c : centres) {
    for (float& x : c) x = normal(rng);
    c = unit(c);
  }
  auto random_unit = [&] {
    std::vector<float> v = centres[rng() % centres.size()];
    for (float& x : v) x += 0.5f / std::sqrt(384.0f) * normal(rng);
    return unit(v);
  };
  while (true) {
    auto docs = (*backend)->PendingDocuments(model, 4096);
    ASSERT_TRUE(docs);
    if (docs->empty()) break;
    std::vector<store::EncodedVector> vectors;
    for (const auto& d : *docs) vectors.push_back({d.doc_id, search::EncodeVector(random_unit())});
    ASSERT_TRUE((*backend)->PutVectors(model, vectors).ok());
  }
  ASSERT_TRUE(Index()->BuildVectorIndex().ok());

  std::unique_ptr<search::VectorSet> exact;
  ASSERT_TRUE(search::LoadVectors(backend->get(), model, 0, &exact));
  auto graph = search::HnswIndex::Load(GraphFile(), 384);
  ASSERT_TRUE(graph) << graph.error().ToString();
  EXPECT_TRUE((*graph)->mapped());
  EXPECT_EQ((*graph)->size(), static_cast<size_t>(kCount));
  double recall = 0;
  for (int q = 0; q < 100; ++q) {
    const std::vector<float> query = random_unit();
    auto approx = (*graph)->Search(query, 10, SearchOptions{}.hnsw_ef);
    ASSERT_TRUE(approx);
    recall += search::RecallAtK(exact->Search(query, 10), *approx) / 100;
  }
  EXPECT_GE(recall, 0.95);
}

TEST_F(PgVectors, ClearedOrErasedVectorsNeverComeBackFromTheCache) {
  Fill("s", 0, 300);
  Fill("gone", 300, 320);
  auto index = Index();
  ASSERT_TRUE(index->Embed());
  ASSERT_TRUE(index->BuildVectorIndex().ok());
  ASSERT_FALSE(GraphFile().empty());

  // An erased session's documents are gone: the graph's hits for them are
  // dropped, never shown.
  EraseRequest erase;
  erase.session_ids = {"gone"};
  ASSERT_TRUE(store_->Erase(erase));
  auto fresh = Index();
  auto hits = fresh->Search({.query = Sentence(310), .mode = SearchMode::kVector, .limit = 20});
  ASSERT_TRUE(hits);
  for (const SearchHit& h : hits->hits) EXPECT_NE(h.session_id, "gone");

  // Another machine clears the vectors: the epoch goes with them, and the
  // next search here empties this machine's folder and scans exactly.
  pg_->Query("DELETE FROM embeddings; DELETE FROM index_meta WHERE key LIKE 'hnsw:%'");
  auto after = Index();
  auto none = after->Search({.query = Sentence(12), .mode = SearchMode::kVector, .limit = 5});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->hits.empty());
  EXPECT_EQ(GraphFile(), "");
  // Embedded again, the exact scan finds the document.
  ASSERT_TRUE(after->Embed());
  EXPECT_EQ(FirstVectorHit(*after, Sentence(12)), 13);
}

TEST_F(PgVectors, EachNamespaceAndDatabaseHasACacheFolderOfItsOwn) {
  const std::string first = FilesDirectory();
  StoreOptions other = Options();
  other.namespace_name = "team-b";
  auto b = Store::Open(pg_->uri(), other);
  ASSERT_TRUE(b) << b.error().ToString();
  auto b_backend = (*b)->OpenIndexBackend();
  ASSERT_TRUE(b_backend);
  const std::string second = (*b_backend)->FilesDirectory();
  EXPECT_NE(first, second);
  EXPECT_EQ(fs::path(first).parent_path(), fs::path(second).parent_path());
  // The same namespace opened again finds the same folder.
  EXPECT_EQ(FilesDirectory(), first);
  PgTestDatabase other_database;
  auto c = Store::Open(other_database.uri(), Options());
  ASSERT_TRUE(c) << c.error().ToString();
  auto c_backend = (*c)->OpenIndexBackend();
  ASSERT_TRUE(c_backend);
  EXPECT_NE((*c_backend)->FilesDirectory(), first);
}

TEST_F(PgVectors, ACorruptCachedGraphFallsBackToTheExactScan) {
  Fill("s", 0, 300);
  auto index = Index();
  ASSERT_TRUE(index->Embed());
  auto exact = index->Search({.query = Sentence(77), .mode = SearchMode::kVector, .limit = 10});
  ASSERT_TRUE(exact);
  ASSERT_TRUE(index->BuildVectorIndex().ok());
  const std::string graph = GraphFile();
  ASSERT_FALSE(graph.empty());
  const auto size = fs::file_size(graph);
  {
    std::ofstream out(graph, std::ios::binary | std::ios::trunc);
    out << std::string(size, 'x');
  }
  auto fresh = Index();
  auto found = fresh->Search({.query = Sentence(77), .mode = SearchMode::kVector, .limit = 10});
  ASSERT_TRUE(found) << found.error().ToString();
  ASSERT_EQ(found->hits.size(), exact->hits.size());
  for (size_t i = 0; i < found->hits.size(); ++i) {
    EXPECT_EQ(found->hits[i].seq, exact->hits[i].seq);
  }
}

}  // namespace
}  // namespace sessiondb::testing
