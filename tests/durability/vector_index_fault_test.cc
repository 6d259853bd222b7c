// The saved vector index (HNSW) is written through the FileSystem of the
// Store the SearchIndex was opened on (IndexBackend::file_system()). A save
// that fails at any of its write boundaries (ENOSPC) keeps the index saved
// before usable: in the SearchIndex that tried, and in one opened afterwards.
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "durability/faulty_file_system.h"
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

}  // namespace
}  // namespace sessiondb::testing
