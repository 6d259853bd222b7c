// Search and the code memory on an encrypted PostgreSQL namespace, seen from
// the server's side: what the rows hold (keyed tokens, sealed vectors and
// code, never a planted word) and that search still answers, ranks and
// snippets as on plaintext. The behaviour itself runs on all three backends
// in search_index_test.cc and code_memory_test.cc; this suite reads the
// tables behind the store's back (docs/encryption.md, "PostgreSQL").
#include <gtest/gtest.h>

#include <set>

#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class EncryptedSearchOnPostgres : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kPostgresEncrypted; }

  std::unique_ptr<SearchIndex> Index(Store& store) {
    SearchOptions options;
    options.embedder.from_environment = false;  // the built-in embedder, whatever the machine
    auto index = SearchIndex::Open(store, options);
    EXPECT_TRUE(index) << index.error().message();
    return index ? std::move(*index) : nullptr;
  }

  SearchResults Keyword(SearchIndex& index, const std::string& q, SearchFilter filter = {}) {
    auto r = index.Search({.query = q, .mode = SearchMode::kKeyword, .filter = filter});
    EXPECT_TRUE(r) << q << ": " << r.error().message();
    return r ? *r : SearchResults{};
  }

  // Another namespace of the test database: encrypted with its own data key
  // under the same master key, or plaintext.
  std::unique_ptr<Store> OpenNamespace(const std::string& ns, bool encrypted) {
    StoreOptions options = Options();
    options.namespace_name = ns;
    if (!encrypted) options.key_file.clear();
    auto store = Store::Open(pg_->uri(), options);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  // Everything the namespace's index and code memory hold, as text.
  std::string Rows(const std::string& ns) {
    const std::string where = " WHERE namespace = '" + ns + "'";
    return pg_->Query(
        "SELECT concat_ws(' | ', (SELECT string_agg(tsv::text, ' ') FROM search_docs" + where +
        "), (SELECT string_agg(concat_ws(' ', file_path, old_code, new_code, project,"
        " content_sha256), ' ') FROM code_writes" +
        where + "), (SELECT string_agg(file_path || ' ' || function, ' ') FROM code_edits" + where +
        "), (SELECT string_agg(key, ' ') FROM hook_seen" + where + "))");
  }
};

Message Text(const std::string& text) {
  Message m;
  m.role = Role::kUser;
  m.parts.push_back(Part::Text(text));
  return m;
}

TEST_F(EncryptedSearchOnPostgres, TheIndexAndTheCodeMemoryHoldNoPlantedWord) {
  NewSessionId("chat");
  AppendText("chat", "the Zebrafish canary flew over heliotrope_fields");
  auto memory = CodeMemory::Open(*store_);
  ASSERT_TRUE(memory) << memory.error().message();
  auto write = (*memory)->RecordWrite({.file_path = "/secret/heliotrope.py",
                                       .old_code = "def old_zebrafish(): pass\n",
                                       .new_code = "def zebrafish_canary():\n    return 1\n"});
  ASSERT_TRUE(write) << write.error().message();
  ASSERT_TRUE(write->recorded);
  ASSERT_TRUE(*(*memory)->FirstSighting("content\n/secret/heliotrope.py\nabc"));

  const std::string rows = Rows("default");
  ASSERT_FALSE(rows.empty());
  for (const char* word : {"zebrafish", "Zebrafish", "canary", "heliotrope", "fields", "secret"}) {
    EXPECT_EQ(rows.find(word), std::string::npos) << word << " in " << rows;
  }
  // The tokens still index every word: the message's 7 (heliotrope_fields is two).
  EXPECT_EQ(pg_->Query("SELECT length(tsv) FROM search_docs WHERE code_id IS NULL"), "7");

  // And search still finds both, by any of their words.
  auto index = Index(*store_);
  EXPECT_EQ(Keyword(*index, "zebrafish").hits.size(), 2u);
  SearchResults code = Keyword(*index, "heliotrope", {.events = false});
  ASSERT_EQ(code.hits.size(), 1u);
  EXPECT_EQ(code.hits[0].file_path, "/secret/heliotrope.py");
}

TEST_F(EncryptedSearchOnPostgres, KeywordAndPhraseSearchFindAndRankTheRightMessages) {
  auto made = store_->CreateSession({.id = "s", .title = "Quokka plans"});
  ASSERT_TRUE(made) << made.error().ToString();
  for (const char* text : {"the quokka and, much later in a long sentence, a zeppelin",
                           "a zeppelin quokka", "nothing to see here", "quokka alone"}) {
    now_ms_ += 1000;
    ASSERT_TRUE(store_->Append("s", Text(text)));
  }
  auto index = Index(*store_);
  // Both words: the message where they stand together ranks first.
  SearchResults both = Keyword(*index, "zeppelin quokka");
  ASSERT_EQ(both.hits.size(), 2u);
  EXPECT_EQ(both.hits[0].seq, 2);
  EXPECT_EQ(both.hits[1].seq, 1);
  EXPECT_GT(both.hits[0].keyword_score, both.hits[1].keyword_score);
  EXPECT_EQ(both.hits[0].session_title, "Quokka plans");
  // A phrase: only the adjacent words, in order.
  SearchResults phrase = Keyword(*index, "\"zeppelin quokka\"");
  ASSERT_EQ(phrase.hits.size(), 1u);
  EXPECT_EQ(phrase.hits[0].seq, 2);
  EXPECT_TRUE(Keyword(*index, "\"quokka zeppelin\"").hits.empty());
  // Upper case in the query finds the same words.
  EXPECT_EQ(Keyword(*index, "QUOKKA").hits.size(), 3u);
  // A negated word leaves out the messages that hold it.
  EXPECT_EQ(Keyword(*index, "quokka -zeppelin").hits.size(), 1u);
}

TEST_F(EncryptedSearchOnPostgres, UpperAndLowerCaseFindTheSameWordInAnyAlphabet) {
  NewSessionId("s");
  AppendText("s", "ÜBER den Fluss, Ärger mit ЗЕБРА and ΖΈΒΡΑ");
  auto index = Index(*store_);
  for (const char* query : {"über", "Über", "ärger", "зебра", "Зебра"}) {
    EXPECT_EQ(Keyword(*index, query).hits.size(), 1u) << query;
  }
}

TEST_F(EncryptedSearchOnPostgres, APrefixIsSearchedAsTheWholeWord) {
  NewSessionId("s");
  AppendText("s", "the zebra ran");
  AppendText("s", "the zebrafish swam");
  auto index = Index(*store_);
  SearchResults r = Keyword(*index, "zebra*");
  ASSERT_EQ(r.hits.size(), 1u) << "a keyed token cannot say which words start with zebra";
  EXPECT_EQ(r.hits[0].seq, 1);
  EXPECT_EQ(r.match_expression.find(":*"), std::string::npos) << r.match_expression;
}

TEST_F(EncryptedSearchOnPostgres, SnippetsShowThePlaintextAroundTheMatch) {
  NewSessionId("s");
  AppendText("s",
             "Before we start: the **Quokka** migration (phase 2) moves every table, "
             "then we rest.");
  auto index = Index(*store_);
  SearchResults r = Keyword(*index, "quokka migration");
  ASSERT_EQ(r.hits.size(), 1u);
  const SearchHit& h = r.hits[0];
  EXPECT_NE(h.snippet.find("Quokka migration (phase 2) moves"), std::string::npos) << h.snippet;
  std::set<std::string> marked;
  for (auto [b, e] : h.highlights) marked.insert(h.snippet.substr(b, e - b));
  EXPECT_EQ(marked, (std::set<std::string>{"Quokka", "migration"}));
}

TEST_F(EncryptedSearchOnPostgres, TwoNamespacesGiveTheSameWordDifferentTokens) {
  NewSessionId("s");
  AppendText("s", "zebrafish");
  std::unique_ptr<Store> other = OpenNamespace("other", /*encrypted=*/true);
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->CreateSession({.id = "s"}));
  ASSERT_TRUE(other->Append("s", Text("zebrafish")));
  const std::string mine =
      pg_->Query("SELECT tsv::text FROM search_docs WHERE namespace = 'default'");
  const std::string theirs =
      pg_->Query("SELECT tsv::text FROM search_docs WHERE namespace = 'other'");
  EXPECT_TRUE(mine.starts_with("'t")) << mine;
  EXPECT_TRUE(theirs.starts_with("'t")) << theirs;
  EXPECT_NE(mine, theirs);
  // Each finds its own.
  auto mine_index = Index(*store_);
  auto their_index = Index(*other);
  EXPECT_EQ(Keyword(*mine_index, "zebrafish").hits.size(), 1u);
  EXPECT_EQ(Keyword(*their_index, "zebrafish").hits.size(), 1u);
}

TEST_F(EncryptedSearchOnPostgres, EmbeddingsHoldNoPlaintextVector) {
  const std::string text = "a falcon over the harbour at dawn";
  NewSessionId("s");
  AppendText("s", text);
  std::unique_ptr<Store> plain = OpenNamespace("plain", /*encrypted=*/false);
  ASSERT_TRUE(plain);
  ASSERT_TRUE(plain->CreateSession({.id = "s"}));
  ASSERT_TRUE(plain->Append("s", Text(text)));
  auto sealed_index = Index(*store_);
  auto plain_index = Index(*plain);
  ASSERT_TRUE(sealed_index->Embed());
  ASSERT_TRUE(plain_index->Embed());

  // The built-in embedder gives both the same vector; only the plaintext
  // namespace stores it as it is.
  const std::string plain_hex =
      pg_->Query("SELECT encode(vector, 'hex') FROM embeddings WHERE namespace = 'plain'");
  const std::string sealed_hex =
      pg_->Query("SELECT encode(vector, 'hex') FROM embeddings WHERE namespace = 'default'");
  ASSERT_FALSE(plain_hex.empty());
  ASSERT_FALSE(sealed_hex.empty());
  EXPECT_EQ(sealed_hex.find(plain_hex.substr(0, 32)), std::string::npos);
  EXPECT_GT(sealed_hex.size(), plain_hex.size());  // nonce and tag

  // And the vectors still search, opened in the process.
  auto found = sealed_index->Search({.query = text, .mode = SearchMode::kVector});
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_EQ(found->hits.size(), 1u);
  EXPECT_EQ(found->hits[0].seq, 1);
}

TEST_F(EncryptedSearchOnPostgres, ChurnAndRecallAnswerAsOnPlaintext) {
  auto memory = CodeMemory::Open(*store_);
  ASSERT_TRUE(memory) << memory.error().message();
  for (int i = 0; i < 3; ++i) {
    auto w = (*memory)->RecordWrite(
        {.file_path = "/src/app/parser.py",
         .new_code = "def parse_line(x):\n    return x + " + std::to_string(i) + "\n"});
    ASSERT_TRUE(w) << w.error().message();
  }
  auto other = (*memory)->RecordWrite({.file_path = "/src/lib/other.py", .new_code = "x = 1\n"});
  ASSERT_TRUE(other) << other.error().message();

  EXPECT_EQ((*memory)->FileChurn("/src/app/parser.py")->edits_30d, 3);
  EXPECT_EQ((*memory)->FileChurn("/src/app/nothing.py")->edits_30d, 0);
  auto hot = (*memory)->Hotspots({.path_prefix = "/src/app/"});
  ASSERT_TRUE(hot) << hot.error().message();
  ASSERT_EQ(hot->size(), 1u);
  EXPECT_EQ((*hot)[0].file_path, "/src/app/parser.py");
  EXPECT_EQ((*hot)[0].edits_30d, 3);
  auto recalled = (*memory)->Recall("/src/app/new.py", "def parse_line(y):\n    pass\n", 3);
  ASSERT_TRUE(recalled) << recalled.error().message();
  ASSERT_FALSE(recalled->empty());
  EXPECT_EQ((*recalled)[0].file_path, "/src/app/parser.py");
}

TEST_F(EncryptedSearchOnPostgres, AChangedOrMovedCiphertextIsNamedNeverReturned) {
  NewSessionId("s");
  AppendText("s", "a falcon over the harbour");
  auto memory = CodeMemory::Open(*store_);
  ASSERT_TRUE(memory) << memory.error().message();
  ASSERT_TRUE((*memory)->RecordWrite({.file_path = "/a.py", .new_code = "falcon = 1\n"}));
  ASSERT_TRUE((*memory)->RecordWrite({.file_path = "/b.py", .new_code = "harbour = 2\n"}));
  ASSERT_TRUE(Index(*store_)->Embed());

  // One write's code copied onto the other: it does not open there.
  pg_->Query(
      "UPDATE code_writes SET new_code = (SELECT new_code FROM code_writes WHERE file_path <> "
      "(SELECT min(file_path) FROM code_writes) LIMIT 1) WHERE file_path = "
      "(SELECT min(file_path) FROM code_writes)");
  auto index = Index(*store_);
  bool named = false;
  for (const char* word : {"falcon", "harbour"}) {
    auto r =
        index->Search({.query = word, .mode = SearchMode::kKeyword, .filter = {.events = false}});
    if (r) continue;  // the untouched write
    EXPECT_EQ(r.error().code(), StatusCode::kCorruption);
    EXPECT_NE(r.error().message().find("code write new code"), std::string::npos)
        << r.error().message();
    named = true;
  }
  EXPECT_TRUE(named);

  // A flipped bit in a stored vector fails the vector search, naming it.
  pg_->Query("UPDATE embeddings SET vector = set_byte(vector, 20, get_byte(vector, 20) # 1)");
  auto fresh = Index(*store_);
  auto found = fresh->Search({.query = "falcon", .mode = SearchMode::kVector});
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code(), StatusCode::kCorruption);
  EXPECT_NE(found.error().message().find("embedding"), std::string::npos)
      << found.error().message();
}

}  // namespace
}  // namespace sessiondb::testing
