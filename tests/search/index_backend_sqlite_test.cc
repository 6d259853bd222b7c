// The embedded store's IndexBackend (store/sqlite/sqlite_index) and what is
// built on it through a Store: the FTS5 renderer of a TextQuery, tool calls
// read a page of messages at a time, vector catch-up, and SearchIndex and
// CodeMemory opened on a Store object, read-only stores included. (Learning
// from a history longer than a page runs on both backends in
// tests/memory/learn_from_history_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "search/query_syntax.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/index_backend.h"
#include "store/page_check.h"
#include "store/sqlite/fts5_query.h"
#include "test_support.h"

namespace sessiondb {
namespace {

using testing::TempDir;

Message WriteCall(const std::string& path, const std::string& code) {
  Message m;
  m.role = Role::kAssistant;
  m.parts.push_back(Part::ToolCall("t-" + path, "Write",
                                   nlohmann::json{{"file_path", path}, {"content", code}}.dump()));
  return m;
}

Message Text(const std::string& text) {
  Message m;
  m.role = Role::kUser;
  m.parts.push_back(Part::Text(text));
  return m;
}

class SqliteIndexBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::Open(dir_.Sub("store"), {.durability = Durability::kProcessCrashSafe});
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
    ASSERT_TRUE(store_->CreateSession({.id = "s", .metadata_json = R"({"cwd":"/repo"})"}));
    auto backend = store_->OpenIndexBackend();
    ASSERT_TRUE(backend) << backend.error().message();
    backend_ = std::move(*backend);
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<store::IndexBackend> backend_;
};

TEST(Fts5Expression, QuotesDoubledEmptyPhrasesSkippedEmptyGroupsMatchNothing) {
  using store::TextPhrase;
  using store::TextQuery;
  EXPECT_EQ(sqlite::Fts5Expression(TextQuery{}), "");
  // A quote in a word (never from SplitWords, but the interface allows it)
  // cannot close the phrase early.
  EXPECT_EQ(sqlite::Fts5Expression(TextQuery{.all_of = {{TextPhrase{.words = {"a\"b"}}}}}),
            "\"a\"\"b\"");
  // Phrases without words are dropped; a group left with none matches nothing.
  EXPECT_EQ(sqlite::Fts5Expression(
                TextQuery{.all_of = {{TextPhrase{}, TextPhrase{.words = {"x"}, .prefix = true}}}}),
            "\"x\"*");
  EXPECT_EQ(sqlite::Fts5Expression(
                TextQuery{.all_of = {{TextPhrase{.words = {"x"}}}, {TextPhrase{.words = {""}}}}}),
            "");
  EXPECT_EQ(
      sqlite::Fts5Expression(TextQuery{.all_of = {{TextPhrase{.words = {"x"}}}},
                                       .none_of = {TextPhrase{}, TextPhrase{.words = {"y", "z"}}}}),
      "\"x\" NOT \"y z\"");
}

TEST_F(SqliteIndexBackendTest, ExpressionIsTheFts5RendererAndFilesLiveUnderIndex) {
  EXPECT_EQ(backend_->Expression(search::ParseUserQuery("cat OR dog fish").query),
            "((\"cat\" OR \"dog\") AND \"fish\")");
  EXPECT_EQ(backend_->FilesDirectory(),
            (std::filesystem::path(dir_.Sub("store")) / "index").string());
}

TEST_F(SqliteIndexBackendTest, ToolCallsComeAPageOfMessagesAtATimeInDocumentOrder) {
  // Messages without calls do not count toward a page, so they cannot make
  // a page come back empty before the calls after them.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->Append("s", Text("no \"tool_call\" here")));
  Message two;
  two.role = Role::kAssistant;
  two.parts.push_back(Part::ToolCall("a", "Write", R"({"file_path":"/a","content":"x"})"));
  two.parts.push_back(Part::ToolCall("b", "Edit", R"({"file_path":"/b"})"));
  ASSERT_TRUE(store_->Append("s", two));
  ASSERT_TRUE(store_->Append("s", WriteCall("/c", "y")));

  auto first = backend_->ToolCallsAfter(0, 1);
  ASSERT_TRUE(first) << first.error().message();
  // One message's worth: both of its calls, in their order.
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].name, "Write");
  EXPECT_EQ((*first)[1].name, "Edit");
  EXPECT_EQ((*first)[0].doc_id, (*first)[1].doc_id);
  EXPECT_EQ((*first)[0].session_id, "s");
  EXPECT_EQ((*first)[0].project, "/repo");  // no "project": the session's cwd
  EXPECT_EQ(nlohmann::json::parse((*first)[0].arguments)["file_path"], "/a");

  auto second = backend_->ToolCallsAfter((*first)[0].doc_id, 1);
  ASSERT_TRUE(second);
  ASSERT_EQ(second->size(), 1u);
  EXPECT_GT((*second)[0].doc_id, (*first)[0].doc_id);
  auto newest = backend_->NewestDocument();
  ASSERT_TRUE(newest);
  EXPECT_EQ(*newest, (*second)[0].doc_id);

  auto none = backend_->ToolCallsAfter((*second)[0].doc_id, 1);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(SqliteIndexBackendTest, PendingDocumentsAdvanceAsVectorsArePut) {
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store_->Append("s", Text("text " + std::to_string(i))));
  auto pending = backend_->CountPendingEmbeddings("m");
  ASSERT_TRUE(pending);
  EXPECT_EQ(*pending, 3);
  auto docs = backend_->PendingDocuments("m", 2);
  ASSERT_TRUE(docs);
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_LT((*docs)[0].doc_id, (*docs)[1].doc_id);
  EXPECT_NE((*docs)[0].text.find("text 0"), std::string::npos);

  // The second one stands for a document with no text: kept, not counted.
  std::vector<store::EncodedVector> put = {{(*docs)[0].doc_id, "vec"}, {(*docs)[1].doc_id, ""}};
  ASSERT_TRUE(backend_->PutVectors("m", put).ok());
  pending = backend_->CountPendingEmbeddings("m");
  ASSERT_TRUE(pending);
  EXPECT_EQ(*pending, 1);
  auto rest = backend_->PendingDocuments("m", 10);
  ASSERT_TRUE(rest);
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_GT((*rest)[0].doc_id, (*docs)[1].doc_id);
  auto count = backend_->VectorCount("m");
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, 1);

  // A document that is gone gets no vector.
  ASSERT_TRUE(backend_->PutVectors("m", std::vector<store::EncodedVector>{{999'999, "v"}}).ok());
  count = backend_->VectorCount("m");
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, 1);

  std::vector<int64_t> seen;
  auto last = backend_->ScanVectors("m", 0, [&](int64_t id, std::string_view v) {
    seen.push_back(id);
    EXPECT_EQ(v, "vec");
  });
  ASSERT_TRUE(last);
  EXPECT_EQ(seen, (std::vector<int64_t>{(*docs)[0].doc_id}));
  EXPECT_EQ(*last, (*docs)[0].doc_id);

  ASSERT_TRUE(backend_->SetMeta("hnsw:m", "1 1 3").ok());
  ASSERT_TRUE(backend_->ClearVectors().ok());
  count = backend_->VectorCount("m");
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, 0);
  auto meta = backend_->GetMeta("hnsw:m");
  ASSERT_TRUE(meta);
  EXPECT_FALSE(meta->has_value());
}

TEST_F(SqliteIndexBackendTest, CandidatesPassingAFilterAreThoseTheWholeListHolds) {
  ASSERT_TRUE(store_->CreateSession({.id = "t", .metadata_json = R"({"cwd":"/elsewhere"})"}));
  Message answer = Text("s answer");
  answer.role = Role::kAssistant;
  ASSERT_TRUE(store_->Append("s", Text("s question")));
  ASSERT_TRUE(store_->Append("s", answer));
  ASSERT_TRUE(store_->Append("t", Text("t question")));
  auto docs = backend_->PendingDocuments("m", 10);
  ASSERT_TRUE(docs);
  ASSERT_EQ(docs->size(), 3u);
  std::vector<int64_t> ids;
  for (const store::DocumentText& d : *docs) ids.push_back(d.doc_id);
  const int64_t unknown = ids.back() + 1000;
  // Named twice, unknown, in any order: each filter's answer is the
  // candidates its whole list holds, ascending, once each.
  const std::vector<int64_t> candidates = {ids[2], unknown, ids[0], ids[1], ids[0]};
  const std::vector<SearchFilter> filters = {{.session_id = "s"},
                                             {.role = Role::kUser},
                                             {.role = Role::kAssistant},
                                             {.project = "/repo/"},
                                             {.code_writes = false}};
  for (const SearchFilter& f : filters) {
    auto whole = backend_->DocsPassingFilter(f);
    ASSERT_TRUE(whole) << whole.error().message();
    auto among = backend_->CandidatesPassingFilter(f, candidates);
    ASSERT_TRUE(among) << among.error().message();
    EXPECT_EQ(*among, whole->doc_ids);
    auto part = backend_->CandidatesPassingFilter(f, std::vector<int64_t>{ids[1], unknown});
    ASSERT_TRUE(part) << part.error().message();
    const bool holds = std::binary_search(whole->doc_ids.begin(), whole->doc_ids.end(), ids[1]);
    EXPECT_EQ(*part, holds ? std::vector<int64_t>{ids[1]} : std::vector<int64_t>{});
  }
  auto user = backend_->CandidatesPassingFilter({.role = Role::kUser}, candidates);
  ASSERT_TRUE(user);
  EXPECT_EQ(*user, (std::vector<int64_t>{ids[0], ids[2]}));
  // The session is deleted: none of its documents pass any filter.
  ASSERT_TRUE(store_->DeleteSession("t").ok());
  auto after = backend_->CandidatesPassingFilter({.role = Role::kUser}, candidates);
  ASSERT_TRUE(after);
  EXPECT_EQ(*after, (std::vector<int64_t>{ids[0]}));
}

// A page's snippets are read in one walk of the matches (MatchSnippets):
// each is MatchSnippet's to the byte, whether the walk reaches it, stops
// past a thousand matches and looks it up afresh, or finds it gone.
TEST_F(SqliteIndexBackendTest, APageGetsEachSnippetMatchSnippetGives) {
  std::vector<Message> batch;
  for (int i = 0; i < 3000; ++i) {
    std::string text = "walrus entry " + std::to_string(i) + " of the   long\nwinter log";
    if (i % 700 == 0) text += " with a narwhal sighting";
    batch.push_back(Text(text));
  }
  ASSERT_TRUE(store_->AppendBatch("s", batch));
  ASSERT_TRUE(store_->Append("s", Text("no such animal here")));
  ASSERT_TRUE(store_->Append("s", WriteCall("/walrus.py", "walrus = 1  # walrus counter")));
  ASSERT_TRUE(store::CatchUpTextIndex(*backend_, -1, nullptr));
  store::TextQuery walrus;
  walrus.all_of.push_back({store::TextPhrase{.words = {"walrus"}}});
  auto ranking = backend_->RankKeyword(walrus, SearchFilter{}, 100000);
  ASSERT_TRUE(ranking) << ranking.error().message();
  ASSERT_EQ(ranking->matches, 3001);  // the messages and the code write
  std::vector<int64_t> matching;
  for (const store::RankedDoc& d : ranking->docs) matching.push_back(d.doc_id);
  std::sort(matching.begin(), matching.end(), std::greater<>());
  // The newest (the code write), two neighbours, two hits more than a
  // thousand matches apart, the oldest, one asked twice, out of order; a
  // document that does not match and one that does not exist; one asked
  // for its text.
  const int64_t unknown = matching.front() + 100;
  auto no_match = backend_->RankKeyword(
      store::TextQuery{.all_of = {{store::TextPhrase{.words = {"animal"}}}}}, SearchFilter{}, 10);
  ASSERT_TRUE(no_match);
  ASSERT_EQ(no_match->docs.size(), 1u);
  const std::vector<store::IndexBackend::PageRequest> page = {
      {matching[1500], true}, {matching[0], true},
      {matching[1], true},    {no_match->docs[0].doc_id, true},
      {matching[2], true},    {matching[2999], true},
      {matching[3000], true}, {matching[1500], true},
      {unknown, true},        {matching[40], false},
      {matching[2200], true}};
  auto loaded = backend_->LoadPage(walrus, page);
  ASSERT_TRUE(loaded) << loaded.error().message();
  testing::ExpectPageAsEachDocument(*backend_, walrus, page, *loaded);
  int snippets = 0;
  for (const store::IndexBackend::PageDocument& d : *loaded) {
    snippets += d.snippet.text.empty() ? 0 : 1;
  }
  // Every wanted match got its snippet, the one that does not match none.
  EXPECT_EQ(snippets, 8);
  EXPECT_TRUE((*loaded)[3].present);
  EXPECT_TRUE((*loaded)[3].snippet.text.empty());
  EXPECT_FALSE((*loaded)[8].present);
}

// HoldsWord answers from FTS5 alone, stemmed as the index matches, and a
// word only a deleted session holds is not held.
TEST_F(SqliteIndexBackendTest, AWordIsHeldWhenADocumentOfALiveSessionHoldsIt) {
  ASSERT_TRUE(store_->CreateSession({.id = "t"}));
  ASSERT_TRUE(store_->Append("s", Text("the otters were swimming")));
  ASSERT_TRUE(store_->Append("t", Text("a lone pelican")));
  ASSERT_TRUE(store::CatchUpTextIndex(*backend_, -1, nullptr));
  for (const char* word : {"otters", "otter", "swim", "pelican"}) {
    auto held = backend_->HoldsWord(word);
    ASSERT_TRUE(held) << held.error().message();
    EXPECT_TRUE(*held) << word;
  }
  for (const char* word : {"walrus", "pelicans_x", ""}) {
    auto held = backend_->HoldsWord(word);
    ASSERT_TRUE(held) << held.error().message();
    EXPECT_FALSE(*held) << word;
  }
  // A fork keeps the deleted session's events, and the index its words,
  // which no search shows.
  ASSERT_TRUE(store_->ForkSession("t", 1, {.id = "t-fork"}));
  ASSERT_TRUE(store_->DeleteSession("t").ok());
  ASSERT_TRUE(store::CatchUpTextIndex(*backend_, -1, nullptr));
  auto held = backend_->HoldsWord("pelican");
  ASSERT_TRUE(held) << held.error().message();
  EXPECT_FALSE(*held);
  held = backend_->HoldsWord("otters");
  ASSERT_TRUE(held);
  EXPECT_TRUE(*held);
}

TEST_F(SqliteIndexBackendTest, SearchAndMemoryOpenOnAStoreObject) {
  ASSERT_TRUE(store_->Append("s", Text("the quarterly flamingo report")));
  SearchOptions options;
  options.embedder.from_environment = false;
  auto index = SearchIndex::Open(*store_, options);
  ASSERT_TRUE(index) << index.error().message();
  auto r = (*index)->Search({.query = "flamingo", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->hits.size(), 1u);
  EXPECT_EQ(r->hits[0].session_id, "s");
  EXPECT_EQ(r->match_expression, "\"flamingo\"");

  auto memory = CodeMemory::Open(*store_);
  ASSERT_TRUE(memory) << memory.error().message();
  auto w = (*memory)->RecordWrite({.file_path = "/repo/x.py", .new_code = "def x():\n    pass\n"});
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_TRUE(w->recorded);
  // The write is a document of the same index.
  auto code =
      (*index)->Search({.query = "def", .mode = SearchMode::kKeyword, .filter = {.events = false}});
  ASSERT_TRUE(code);
  ASSERT_EQ(code->hits.size(), 1u);
  EXPECT_EQ(code->hits[0].kind, HitKind::kCodeWrite);
  EXPECT_EQ(code->hits[0].file_path, "/repo/x.py");
}

TEST_F(SqliteIndexBackendTest, AReadOnlyStoreIsSearchedButItsMemoryIsNotWritten) {
  ASSERT_TRUE(store_->Append("s", Text("penguins in the archive")));
  SearchOptions options;
  options.embedder.from_environment = false;
  // A reader that cannot write cannot index either: while the writer is
  // open, its append is recorded but not yet in the full-text index, and
  // the search says so instead of failing.
  {
    auto early = Store::Open(dir_.Sub("store"), {.read_only = true});
    ASSERT_TRUE(early) << early.error().message();
    auto index = SearchIndex::Open(**early, options);
    ASSERT_TRUE(index) << index.error().message();
    auto r = (*index)->Search({.query = "penguins", .mode = SearchMode::kKeyword});
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->hits.size(), 0u);
    EXPECT_EQ(r->pending_documents, 1);
  }
  // The writer indexes what it wrote as it closes.
  backend_.reset();
  store_.reset();
  auto reader = Store::Open(dir_.Sub("store"), {.read_only = true});
  ASSERT_TRUE(reader) << reader.error().message();
  auto index = SearchIndex::Open(**reader, options);
  ASSERT_TRUE(index) << index.error().message();
  auto r = (*index)->Search({.query = "penguins", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->hits.size(), 1u);
  EXPECT_EQ(r->pending_documents, 0);

  auto memory = CodeMemory::Open(**reader);
  ASSERT_TRUE(memory) << memory.error().message();
  auto w = (*memory)->RecordWrite({.file_path = "/repo/y.py", .new_code = "y = 1\n"});
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code(), StatusCode::kFailedPrecondition) << w.error().message();
}

TEST_F(SqliteIndexBackendTest, OpenByPathNeedsAStoreThere) {
  auto missing = SearchIndex::Open(dir_.Sub("nowhere"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.error().message().find("sessiondb init"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("nowhere")));  // not created
  auto memory = CodeMemory::Open(dir_.Sub("nowhere"));
  ASSERT_FALSE(memory);
  EXPECT_EQ(memory.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sessiondb
