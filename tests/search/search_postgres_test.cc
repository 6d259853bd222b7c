// SearchIndex and CodeMemory on PostgreSQL as a team shares it: opened by
// the store's URI like any store path, and two namespaces of one database
// that never see each other's hits, snippets, vector hits, recalls, churn or
// hook keys, though the GIN index and its statistics span both
// (docs/postgres.md). Everything else about search and memory runs on both
// backends in search_index_test.cc and code_memory_test.cc.
#include <gtest/gtest.h>

#include <set>

#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

Message Text(std::string text) {
  Message m;
  m.role = Role::kUser;
  m.parts.push_back(Part::Text(std::move(text)));
  return m;
}

SearchOptions BuiltinEmbedder() {
  SearchOptions options;
  options.embedder.from_environment = false;  // the built-in embedder, whatever the machine
  return options;
}

class SearchOnPostgres : public PostgresStoreTest {
 protected:
  // The test database's URI with `?namespace=` (or `&namespace=`) added, as
  // a user names a namespace.
  std::string UriOfNamespace(const std::string& ns) const {
    const std::string& uri = pg_->uri();
    return uri + (uri.find('?') == std::string::npos ? "?" : "&") + "namespace=" + ns;
  }

  std::vector<std::pair<std::string, int64_t>> Where(const SearchResults& r) {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const SearchHit& h : r.hits) out.emplace_back(h.session_id, h.seq);
    return out;
  }
};

TEST_F(SearchOnPostgres, OpensAndSearchesAStoreByItsUri) {
  NewSessionId("chat");
  AppendText("chat", "the flamingo migration plan");
  auto index = SearchIndex::Open(pg_->uri(), BuiltinEmbedder());
  ASSERT_TRUE(index) << index.error().message();
  auto found = (*index)->Search({.query = "flamingo", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].session_id, "chat");
  EXPECT_EQ(found->hits[0].seq, 1);

  // The code memory opens by URI too, and its writes are search documents.
  auto memory = CodeMemory::Open(pg_->uri());
  ASSERT_TRUE(memory) << memory.error().message();
  auto write = (*memory)->RecordWrite(
      {.file_path = "/zoo/flamingo.py", .new_code = "def flamingo():\n    return 1\n"});
  ASSERT_TRUE(write) << write.error().message();
  ASSERT_TRUE(write->recorded);
  auto code = (*index)->Search(
      {.query = "flamingo", .mode = SearchMode::kKeyword, .filter = {.events = false}});
  ASSERT_TRUE(code) << code.error().message();
  ASSERT_EQ(code->hits.size(), 1u);
  EXPECT_EQ(code->hits[0].kind, HitKind::kCodeWrite);
  EXPECT_EQ(code->hits[0].file_path, "/zoo/flamingo.py");
}

TEST_F(SearchOnPostgres, TwoNamespacesOfOneDatabaseNeverSeeEachOthersIndex) {
  // One namespace named in the URI, the other in StoreOptions: both ways.
  auto a_store = Store::Open(UriOfNamespace("team-a"), Options());
  ASSERT_TRUE(a_store) << a_store.error().message();
  StoreOptions b_options = Options();
  b_options.namespace_name = "team-b";
  auto b_store = Store::Open(pg_->uri(), b_options);
  ASSERT_TRUE(b_store) << b_store.error().message();
  // The same session id in both, and words in common.
  for (Store* s : {a_store->get(), b_store->get()}) ASSERT_TRUE(s->CreateSession({.id = "same"}));
  ASSERT_TRUE((*a_store)->Append("same", Text("the classified falcon plans for the launch")));
  ASSERT_TRUE((*a_store)->Append("same", Text("the falcon launch moved to friday")));
  ASSERT_TRUE((*b_store)->Append("same", Text("public falcon brochure")));

  auto a = SearchIndex::Open(**a_store, BuiltinEmbedder());
  auto b = SearchIndex::Open(**b_store, BuiltinEmbedder());
  ASSERT_TRUE(a && b);
  auto a_memory = CodeMemory::Open(**a_store);
  auto b_memory = CodeMemory::Open(**b_store);
  ASSERT_TRUE(a_memory && b_memory);
  ASSERT_TRUE((*a_memory)->RecordWrite(
      {.file_path = "/src/falcon.py", .new_code = "def classified_falcon():\n    return 1\n"}));
  ASSERT_TRUE((*a_memory)->RecordWrite(
      {.file_path = "/src/falcon.py", .new_code = "def classified_falcon():\n    return 2\n"}));

  auto keyword = [](SearchIndex& index, const std::string& q) {
    auto r = index.Search({.query = q, .mode = SearchMode::kKeyword});
    EXPECT_TRUE(r) << q << ": " << r.error().message();
    return r ? *r : SearchResults{};
  };
  // Hits and their snippets: b finds its own message only.
  EXPECT_TRUE(keyword(**b, "classified").hits.empty());
  SearchResults b_falcon = keyword(**b, "falcon");
  EXPECT_EQ(b_falcon.keyword_matches, 1);
  EXPECT_EQ(Where(b_falcon), (std::vector<std::pair<std::string, int64_t>>{{"same", 1}}));
  ASSERT_EQ(b_falcon.hits.size(), 1u);
  EXPECT_EQ(b_falcon.hits[0].snippet.find("classified"), std::string::npos);
  EXPECT_NE(b_falcon.hits[0].snippet.find("brochure"), std::string::npos)
      << b_falcon.hits[0].snippet;
  // a finds its two messages and two code writes (by their path), none of b's.
  SearchResults a_falcon = keyword(**a, "falcon");
  EXPECT_EQ(a_falcon.keyword_matches, 4);
  EXPECT_EQ(Where(keyword(**a, "plans")),
            (std::vector<std::pair<std::string, int64_t>>{{"same", 1}}));
  EXPECT_TRUE(keyword(**b, "plans").hits.empty());
  for (const SearchHit& h : a_falcon.hits) {
    EXPECT_EQ(h.snippet.find("brochure"), std::string::npos) << h.snippet;
  }
  EXPECT_TRUE(keyword(**a, "brochure").hits.empty());

  // Vectors: each namespace embeds and finds only its own documents.
  EXPECT_EQ(*(*a)->PendingEmbeddings(), 4);
  EXPECT_EQ(*(*b)->PendingEmbeddings(), 1);
  auto b_embedded = (*b)->Embed();
  ASSERT_TRUE(b_embedded) << b_embedded.error().message();
  EXPECT_EQ(b_embedded->embedded, 1);
  EXPECT_EQ(*(*a)->PendingEmbeddings(), 4);
  auto a_embedded = (*a)->Embed();
  ASSERT_TRUE(a_embedded) << a_embedded.error().message();
  EXPECT_EQ(a_embedded->embedded, 4);
  EXPECT_EQ(*(*b)->PendingEmbeddings(), 0);
  auto b_vector = (*b)->Search(
      {.query = "classified falcon plans launch", .mode = SearchMode::kVector, .limit = 20});
  ASSERT_TRUE(b_vector) << b_vector.error().message();
  EXPECT_EQ(Where(*b_vector), (std::vector<std::pair<std::string, int64_t>>{{"same", 1}}));
  for (const SearchHit& h : b_vector->hits) {
    EXPECT_EQ(h.kind, HitKind::kMessage);
    EXPECT_EQ(h.snippet.find("classified"), std::string::npos) << h.snippet;
  }
  auto a_vector =
      (*a)->Search({.query = "public falcon brochure", .mode = SearchMode::kVector, .limit = 20});
  ASSERT_TRUE(a_vector) << a_vector.error().message();
  EXPECT_EQ(a_vector->hits.size(), 4u);
  for (const SearchHit& h : a_vector->hits) {
    EXPECT_EQ(h.snippet.find("brochure"), std::string::npos) << h.snippet;
  }

  // Recall: a's code is recalled in a only.
  const std::string similar = "def classified_falcon():\n    pass\n";
  auto b_recall = (*b_memory)->Recall("/new/falcon.py", similar, 3);
  ASSERT_TRUE(b_recall) << b_recall.error().message();
  EXPECT_TRUE(b_recall->empty());
  auto a_recall = (*a_memory)->Recall("/new/falcon.py", similar, 3);
  ASSERT_TRUE(a_recall) << a_recall.error().message();
  ASSERT_EQ(a_recall->size(), 1u);
  EXPECT_EQ((*a_recall)[0].file_path, "/src/falcon.py");

  // Churn: a's two edits count in a only.
  EXPECT_EQ((*a_memory)->FileChurn("/src/falcon.py")->edits_30d, 2);
  EXPECT_EQ((*b_memory)->FileChurn("/src/falcon.py")->edits_30d, 0);
  EXPECT_EQ((*a_memory)->Hotspots({})->size(), 1u);
  EXPECT_TRUE((*b_memory)->Hotspots({})->empty());

  // The hook's seen keys: the same key is new once in each namespace.
  EXPECT_TRUE(*(*a_memory)->FirstSighting("content\n/src/falcon.py\nabc"));
  EXPECT_TRUE(*(*b_memory)->FirstSighting("content\n/src/falcon.py\nabc"));
  EXPECT_FALSE(*(*a_memory)->FirstSighting("content\n/src/falcon.py\nabc"));
  EXPECT_FALSE(*(*b_memory)->FirstSighting("content\n/src/falcon.py\nabc"));

  // b rebuilding its keyword index leaves a's alone.
  ASSERT_TRUE((*b)->RebuildKeywordIndex().ok());
  EXPECT_EQ(keyword(**a, "falcon").keyword_matches, 4);
  EXPECT_EQ(keyword(**b, "falcon").keyword_matches, 1);
}

}  // namespace
}  // namespace sessiondb::testing
