// The saved vector index (HNSW) is written through the FileSystem of the
// Store the SearchIndex was opened on (IndexBackend::file_system()). A save
// that fails at any of its write boundaries (ENOSPC) keeps the index saved
// before usable: in the SearchIndex that tried, and in one opened afterwards.
// A saved index damaged where no check at open looks (its level-0 block,
// mapped and read as searches walk it) costs speed, never the answer.
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "durability/faulty_file_system.h"
#include "search/mapped_hnsw.h"
#include "search/vector_index.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

// The ids of a vector search for `query`, best first.
std::vector<std::string> VectorHits(SearchIndex& index, const std::string& query) {
  auto r = index.Search({.query = query, .mode = SearchMode::kVector, .limit = 10});
  EXPECT_TRUE(r) << r.error().ToString();
  std::vector<std::string> ids;
  if (r) {
    for (const SearchHit& h : r->hits) ids.push_back(h.event_id);
  }
  return ids;
}

TEST(VectorIndexFault, AFailedSaveKeepsTheIndexSavedBefore) {
  TempDir dir;
  FaultyFileSystem faulty(0, Fault::kNoSpace);
  StoreOptions options;
  options.file_system = &faulty;
  auto store = Store::Open(dir.Sub("store"), options);
  ASSERT_TRUE(store) << store.error().ToString();
  ASSERT_TRUE((*store)->CreateSession({.id = "chat"}));
  auto add = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      ASSERT_TRUE((*store)->Append(
          "chat", Message{.parts = {Part::Text("note " + std::to_string(i) + " about topic " +
                                               std::to_string(i % 7))}}));
    }
  };
  add(0, 40);
  const SearchOptions search_options{.embedder = {.from_environment = false},
                                     .approximate_threshold = 1};
  auto index = SearchIndex::Open(**store, search_options);
  ASSERT_TRUE(index) << index.error().ToString();
  ASSERT_TRUE((*index)->Embed());
  ASSERT_TRUE((*index)->BuildVectorIndex().ok());
  const std::string saved = dir.Sub("store") + "/index/" + [&] {
    std::string n;
    for (char c : (*index)->EmbeddingModel()) {
      n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    return n;
  }() + ".hnsw";
  ASSERT_TRUE(fs::exists(saved)) << saved;
  add(40, 60);
  ASSERT_TRUE((*index)->Embed());
  const std::vector<std::string> before = VectorHits(**index, "topic 3");
  ASSERT_FALSE(before.empty());

  int64_t failures = 0;
  for (int64_t k = 1;; ++k) {
    SCOPED_TRACE("fault at boundary " + std::to_string(k) + " of the save");
    faulty.FailAfter(k);
    Status s = (*index)->BuildVectorIndex();
    if (s.ok()) break;  // past the save's last boundary
    ++failures;
    EXPECT_NE(s.message().find("(injected)"), std::string::npos) << s.ToString();
    // The index that failed to save still answers, as before.
    EXPECT_EQ(VectorHits(**index, "topic 3"), before);
    // The saved file is a whole index, and one opened now answers the same.
    EXPECT_TRUE(search::HnswIndex::Load(saved, 384)) << saved;
    auto reopened = SearchIndex::Open(**store, search_options);
    ASSERT_TRUE(reopened) << reopened.error().ToString();
    EXPECT_EQ(VectorHits(**reopened, "topic 3"), before);
    faulty.FailAfter(0);
  }
  EXPECT_GE(failures, 5) << "create, append, sync, close, rename at least";
}

TEST(VectorIndexFault, ADamagedMappedIndexFallsBackToTheExactScan) {
  TempDir dir;
  auto store = Store::Open(dir.Sub("store"));
  ASSERT_TRUE(store) << store.error().ToString();
  ASSERT_TRUE((*store)->CreateSession({.id = "chat"}));
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE((*store)->Append(
        "chat", Message{.parts = {Part::Text("note " + std::to_string(i) + " about topic " +
                                             std::to_string(i % 7))}}));
  }
  SearchOptions approximate{.embedder = {.from_environment = false}, .approximate_threshold = 1};
  SearchOptions exact = approximate;
  exact.approximate_threshold = 1'000'000;
  auto index = SearchIndex::Open(**store, approximate);
  ASSERT_TRUE(index) << index.error().ToString();
  ASSERT_TRUE((*index)->Embed());
  ASSERT_TRUE((*index)->BuildVectorIndex().ok());
  auto scan = SearchIndex::Open(**store, exact);
  ASSERT_TRUE(scan);
  const std::vector<std::string> truth = VectorHits(**scan, "topic 3");
  ASSERT_FALSE(truth.empty());

  // Every level-0 list's first neighbour pointed past the end: the mapped
  // search fails on its first step (checked in hnsw_file_test.cc).
  const std::string saved = dir.Sub("store") + "/index/hash_384_v1.hnsw";
  std::string bytes;
  {
    std::ifstream in(saved, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  search::HnswFileHeader h;
  ASSERT_GE(bytes.size(), sizeof(h)) << saved;
  std::memcpy(&h, bytes.data(), sizeof(h));
  ASSERT_EQ(h.count, 60u);
  for (uint64_t e = 0; e < h.count; ++e) {
    const uint32_t outside = 1'000'000;
    std::memcpy(bytes.data() + h.level0_offset + e * h.element_bytes + 4, &outside, 4);
  }
  std::ofstream(saved, std::ios::binary | std::ios::trunc) << bytes;
  auto opened = search::HnswIndex::Load(saved, 384);
  ASSERT_TRUE(opened) << "level 0 is not read at open";

  auto reopened = SearchIndex::Open(**store, approximate);
  ASSERT_TRUE(reopened);
  EXPECT_EQ(VectorHits(**reopened, "topic 3"), truth);
  EXPECT_EQ(VectorHits(**reopened, "topic 3"), truth);  // and again, without the file
}

}  // namespace
}  // namespace sessiondb::testing
