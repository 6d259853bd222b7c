// Search that forgives (docs/search.md), on every backend: English stemming
// ("build fail" finds "the build fails"), typos corrected from the index's
// own vocabulary (`deadlok` finds "deadlock", `tiktokn` finds "tiktoken"),
// what is never corrected (quotes, prefixes, short words, words with no
// neighbour), hostile queries that must stay cheap, and stores written before
// stemming that are migrated and rebuilt from the log. An encrypted
// PostgreSQL namespace neither stems nor corrects: it stores no words.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "core/key_file.h"
#include "search/typo_correction.h"
#include "sessiondb/encryption.h"
#include "sessiondb/postgres_schema.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/postgres/pg_fulltext_query.h"
#include "store/postgres/pg_namespace_convert.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class SearchForgives : public BackendTest {
 protected:
  std::unique_ptr<SearchIndex> Index() {
    SearchOptions options;
    options.embedder.from_environment = false;  // the built-in embedder, whatever the machine
    auto index = SearchIndex::Open(*store_, options);
    EXPECT_TRUE(index) << index.error().message();
    return index ? std::move(*index) : nullptr;
  }

  // Messages that name the words the tests look for, among others.
  void AddCorpus() {
    session_ = NewSessionId("forgives");
    for (const char* text : {"the build fails on the release branch",
                             "a deadlock between the writer and the checkpointer",
                             "count tokens with tiktoken before sending", "the deployment finished",
                             "lunch plans for friday"}) {
      now_ms_ += 1000;
      AppendText(session_, text);
    }
  }

  SearchResults Find(SearchIndex& index, const std::string& q,
                     SearchMode mode = SearchMode::kKeyword) {
    auto r = index.Search({.query = q, .mode = mode});
    EXPECT_TRUE(r) << q << ": " << r.error().message();
    return r ? *r : SearchResults{};
  }

  std::string session_;
};

TEST_P(SearchForgives, EveryFormOfAWordFindsTheOthers) {
  AddCorpus();
  AppendText(session_, "it failed again after the retry");
  AppendText(session_, "failing tests in the parser");
  auto index = Index();
  ASSERT_TRUE(index);
  const SearchResults r = Find(*index, "build fail");
  if (encrypted()) {
    // Keyed tokens cannot be stemmed: the word as it was written only.
    EXPECT_TRUE(r.hits.empty());
    EXPECT_EQ(Find(*index, "build fails").hits.size(), 1u);
    return;
  }
  ASSERT_EQ(r.hits.size(), 1u);
  EXPECT_NE(r.hits[0].snippet.find("fails"), std::string::npos);
  // The snippet marks the word that matched, as it was written.
  bool marked = false;
  for (const auto& [b, e] : r.hits[0].highlights) {
    marked |= r.hits[0].snippet.substr(b, e - b) == "fails";
  }
  EXPECT_TRUE(marked) << r.hits[0].snippet;
  EXPECT_EQ(Find(*index, "fails").hits.size(), 3u);  // fails, failed, failing
  EXPECT_EQ(Find(*index, "failing").hits.size(), 3u);
  // A phrase is still the words in a row, and a prefix still a prefix.
  EXPECT_EQ(Find(*index, "\"build fails\"").hits.size(), 1u);
  EXPECT_TRUE(Find(*index, "\"fails build\"").hits.empty());
  EXPECT_EQ(Find(*index, "deadl*").hits.size(), 1u);
  EXPECT_TRUE(Find(*index, "fails").corrected_query.empty());
}

TEST_P(SearchForgives, ATypoFindsTheWordTheIndexHolds) {
  AddCorpus();
  auto index = Index();
  ASSERT_TRUE(index);
  const SearchResults deadlock = Find(*index, "deadlok");
  const SearchResults tiktoken = Find(*index, "Tiktokn count");
  if (encrypted()) {
    // No vocabulary in the clear: nothing to correct from.
    EXPECT_TRUE(deadlock.hits.empty());
    EXPECT_TRUE(deadlock.corrected_query.empty());
    EXPECT_TRUE(tiktoken.hits.empty());
    return;
  }
  ASSERT_EQ(deadlock.hits.size(), 1u);
  EXPECT_NE(deadlock.hits[0].snippet.find("deadlock"), std::string::npos);
  EXPECT_EQ(deadlock.corrected_query, "deadlock");
  EXPECT_EQ(deadlock.did_you_mean, "deadlock");
  ASSERT_EQ(deadlock.corrected_words.size(), 1u);
  EXPECT_EQ(deadlock.corrected_words[0].first, "deadlok");
  ASSERT_EQ(tiktoken.hits.size(), 1u);
  EXPECT_EQ(tiktoken.corrected_query, "tiktoken count");
  // Hybrid and vector searches say so too; hybrid's keyword list found it.
  const SearchResults hybrid = Find(*index, "deadlok", SearchMode::kHybrid);
  EXPECT_EQ(hybrid.corrected_query, "deadlock");
  ASSERT_FALSE(hybrid.hits.empty());
  EXPECT_GT(hybrid.hits[0].keyword_rank, 0);
  EXPECT_EQ(Find(*index, "deadlok", SearchMode::kVector).corrected_query, "deadlock");
  // Asked not to, it searches the word as typed.
  auto exact =
      index->Search({.query = "deadlok", .mode = SearchMode::kKeyword, .correct_typos = false});
  ASSERT_TRUE(exact);
  EXPECT_TRUE(exact->hits.empty());
  EXPECT_TRUE(exact->corrected_query.empty());
}

TEST_P(SearchForgives, WhatIsTypedOnPurposeIsNeverCorrected) {
  AddCorpus();
  auto index = Index();
  ASSERT_TRUE(index);
  for (const char* q : {"\"deadlok\"", "deadlok*", "-deadlok lunch", "zqxwvut"}) {
    const SearchResults r = Find(*index, q);
    EXPECT_TRUE(r.corrected_query.empty()) << q << " became " << r.corrected_query;
  }
  EXPECT_TRUE(Find(*index, "\"deadlok\"").hits.empty());
  EXPECT_TRUE(Find(*index, "zqxwvut").hits.empty());  // no neighbour: nothing, no error
  // A word that matches is left alone even when a neighbour is commoner.
  EXPECT_TRUE(Find(*index, "lunch").corrected_query.empty());
}

TEST_P(SearchForgives, HostileQueriesStayCheap) {
  AddCorpus();
  auto index = Index();
  ASSERT_TRUE(index);
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "deadlok" + std::to_string(i % 50) + "x ";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(Find(*index, std::string(10'000, 'd')).hits.empty());
  EXPECT_TRUE(Find(*index, many).hits.empty());
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(5));
}

SESSIONDB_FOR_EACH_BACKEND(SearchForgives);

TEST(EditDistance, CountsATranspositionAsOneEdit) {
  EXPECT_EQ(search::EditDistance("deadlok", "deadlock", 2), 1);
  EXPECT_EQ(search::EditDistance("tiktokn", "tiktoken", 2), 1);
  EXPECT_EQ(search::EditDistance("teh", "the", 2), 1);
  EXPECT_EQ(search::EditDistance("kitten", "sitting", 5), 3);
  EXPECT_EQ(search::EditDistance("kitten", "sitting", 1), 2);  // capped at max + 1
  EXPECT_EQ(search::EditDistance("café", "cafe", 2), 1);       // code points, not bytes
}

// PostgreSQL's snippets mark the words of a matched document that fold to
// a query word's stem; the server's Snowball stemmer decided the match.
TEST(LightStem, FoldsTheCommonEnglishEndingsTogether) {
  for (const char* w : {"fail", "fails", "failed", "failing"}) {
    EXPECT_EQ(postgres::LightStem(w), "fail") << w;
  }
  for (const char* w : {"parse", "parsed", "parsing", "parses"}) {
    EXPECT_EQ(postgres::LightStem(w), "pars") << w;
  }
  EXPECT_EQ(postgres::LightStem("running"), "run");
  EXPECT_EQ(postgres::LightStem("tries"), postgres::LightStem("tried"));
  EXPECT_EQ(postgres::LightStem("class"), "class");
  EXPECT_EQ(postgres::LightStem("status"), "status");
  EXPECT_NE(postgres::LightStem("build"), postgres::LightStem("builder"));
}

TEST(RewriteQueryText, ReplacesWholeWordsAndKeepsTheRest) {
  EXPECT_EQ(search::RewriteQueryText("Deadlok in (tiktokn)?",
                                     {{"deadlok", "deadlock"}, {"tiktokn", "tiktoken"}}),
            "deadlock in (tiktoken)?");
  EXPECT_EQ(search::RewriteQueryText("deadloks", {{"deadlok", "deadlock"}}), "deadloks");
}

// The version 1 schema of an embedded store, and three messages.
constexpr const char* kVersion1Store = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE sessions (
  id TEXT PRIMARY KEY, title TEXT NOT NULL, title_fixed INTEGER NOT NULL DEFAULT 0,
  preview TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, last_seq INTEGER NOT NULL DEFAULT 0,
  archived INTEGER NOT NULL DEFAULT 0, metadata TEXT NOT NULL DEFAULT '{}');
CREATE INDEX sessions_by_update ON sessions (updated_ms DESC, id DESC);
CREATE TABLE events (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, ts_ms INTEGER NOT NULL,
  type TEXT NOT NULL, role TEXT, text TEXT NOT NULL DEFAULT '', body TEXT,
  PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
CREATE UNIQUE INDEX events_by_id ON events (id);
CREATE TABLE blob_refs (
  sha256 TEXT NOT NULL, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
  PRIMARY KEY (sha256, session_id, seq)) WITHOUT ROWID;
CREATE INDEX blob_refs_by_session ON blob_refs (session_id, seq);
INSERT INTO sessions VALUES ('old', 'b', 1, 'b', 1000, 3000, 3, 3, 0, '{}');
INSERT INTO events VALUES ('old', 1, 'e1', 1000, 'message', 'user', 'the build fails', NULL);
INSERT INTO events VALUES ('old', 2, 'e2', 2000, 'message', 'user', 'a deadlock', NULL);
INSERT INTO events VALUES ('old', 3, 'e3', 3000, 'message', 'user', 'lunch', NULL);
PRAGMA user_version = 1;
)sql";

class ForgivingMigration : public EmbeddedStoreTest {};

// A store indexed without stemming (every version before 8) is indexed again
// with it as it opens: its old messages are found by another form of a word,
// and their words are in the vocabulary typos are corrected from.
TEST_F(ForgivingMigration, AnEmbeddedStoreIndexedWithoutStemmingIsRebuiltWithIt) {
  store_.reset();
  std::filesystem::remove_all(StoreDir());
  std::filesystem::create_directories(StoreDir());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((StoreDir() + "/sessiondb.db").c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, kVersion1Store, nullptr, nullptr, &error), SQLITE_OK) << error;
  sqlite3_close(db);

  const auto start = std::chrono::steady_clock::now();
  Reopen();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(10));
  auto index = SearchIndex::Open(*store_, {.embedder = {.from_environment = false}});
  ASSERT_TRUE(index) << index.error().ToString();
  auto fail = (*index)->Search({.query = "fail", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(fail) << fail.error().ToString();
  ASSERT_EQ(fail->hits.size(), 1u);
  EXPECT_EQ(fail->hits[0].seq, 1);
  auto typo = (*index)->Search({.query = "deadlok", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(typo);
  ASSERT_EQ(typo->hits.size(), 1u);
  EXPECT_EQ(typo->hits[0].seq, 2);
}

class ForgivingPgMigration : public PostgresStoreTest {};

// A PostgreSQL store of schema version 7 ('simple' tsvectors, no vocabulary)
// is migrated as it opens: its documents are indexed again from the log,
// stemmed, and their words counted in the namespace's vocabulary.
TEST_F(ForgivingPgMigration, APostgresStoreIndexedWithoutStemmingIsRebuiltWithIt) {
  const std::string session = NewSessionId("old");
  AppendText(session, "the build fails");
  AppendText(session, "a deadlock");
  store_.reset();
  // Back to version 7, as that version wrote the index.
  pg_->Query(
      "DROP TRIGGER search_vocab_docs_added ON search_docs;"
      "DROP TRIGGER search_vocab_docs_removed ON search_docs;"
      "DROP TRIGGER search_vocab_docs_changed ON search_docs;"
      "DROP FUNCTION sessiondb_vocab_kept(text), sessiondb_vocab_docs_added(),"
      " sessiondb_vocab_docs_removed(),"
      " sessiondb_vocab_docs_changed(), sessiondb_vocab_apply(text[], text[], bigint[], boolean);"
      "DROP TABLE search_vocab;"
      "DROP SEQUENCE sessiondb_vocab_shard;"
      "UPDATE search_docs d SET tsv = to_tsvector('simple', e.text) FROM events e"
      " WHERE e.namespace = d.namespace AND e.session_id = d.session_id AND e.seq = d.seq;"
      "DROP TEXT SEARCH CONFIGURATION sessiondb_english;"
      "DROP TEXT SEARCH DICTIONARY sessiondb_english_stem;"
      "DROP TABLE file_versions;"
      "UPDATE sessiondb_meta SET value = '7' WHERE key = 'schema_version'");
  ASSERT_EQ(pg_->Query("SELECT count(*) FROM search_docs WHERE tsv @@ 'fail'::tsquery"), "0");

  const auto start = std::chrono::steady_clock::now();
  Reopen();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(pg_->Query("SELECT value FROM sessiondb_meta WHERE key = 'schema_version'"),
            std::to_string(kPostgresSchemaVersion));
  auto index = SearchIndex::Open(*store_, {.embedder = {.from_environment = false}});
  ASSERT_TRUE(index) << index.error().ToString();
  auto fail = (*index)->Search({.query = "fail", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(fail) << fail.error().ToString();
  ASSERT_EQ(fail->hits.size(), 1u);
  EXPECT_EQ(fail->hits[0].seq, 1);
  auto typo = (*index)->Search({.query = "deadlok", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(typo);
  ASSERT_EQ(typo->hits.size(), 1u);
  EXPECT_EQ(typo->hits[0].seq, 2);
  EXPECT_EQ(pg_->Query("SELECT sum(docs) FROM search_vocab WHERE word = 'deadlock'"), "1");
}

// Encrypting a namespace in place takes its words out of the vocabulary
// (none is left in the clear); decrypting it puts them back.
TEST_F(ForgivingPgMigration, EncryptingANamespaceTakesItsWordsOutAndDecryptingPutsThemBack) {
  AppendText(NewSessionId("s"), "a deadlock in the writer");
  ASSERT_EQ(pg_->Query("SELECT sum(docs) FROM search_vocab WHERE word = 'deadlock'"), "1");
  store_.reset();
  const std::string key = dir_.Sub("convert.key");
  ASSERT_TRUE(cipher::WriteNewKeyFile(key));
  ConvertOptions to_key;
  to_key.new_key_file = key;
  auto encrypted = postgres::ConvertNamespace(Location(), Options(),
                                              postgres::NamespaceConversion::kEncrypt, to_key);
  ASSERT_TRUE(encrypted) << encrypted.error().ToString();
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_vocab"), "0");
  StoreOptions keyed = Options();
  keyed.key_file = key;
  auto decrypted =
      postgres::ConvertNamespace(Location(), keyed, postgres::NamespaceConversion::kDecrypt, {});
  ASSERT_TRUE(decrypted) << decrypted.error().ToString();
  EXPECT_EQ(pg_->Query("SELECT sum(docs) FROM search_vocab WHERE word = 'deadlock'"), "1");
}

// Two writers of a namespace count the same words without waiting on each
// other: one's transaction, still open, holds no row the other needs (a
// row per word made the second wait for the first to commit).
TEST_F(ForgivingPgMigration, TwoWritersOfOneWordDoNotWaitOnEachOther) {
  AppendText(NewSessionId("s"), "a deadlock in the writer");
  PGconn* first = PQconnectdb(pg_->uri().c_str());
  PGconn* second = PQconnectdb(pg_->uri().c_str());
  ASSERT_EQ(PQstatus(first), CONNECTION_OK);
  ASSERT_EQ(PQstatus(second), CONNECTION_OK);
  auto run = [](PGconn* c, const char* sql) {
    PGresult* r = PQexec(c, sql);
    const ExecStatusType st = PQresultStatus(r);
    std::string error =
        st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? "" : PQresultErrorMessage(r);
    PQclear(r);
    return error;
  };
  const char* insert =
      "INSERT INTO search_docs (namespace, session_id, seq, tsv) SELECT namespace, session_id,"
      " seq + %d, to_tsvector('sessiondb_english', 'another deadlock in the writer')"
      " FROM search_docs LIMIT 1";
  char sql[512];
  ASSERT_EQ(run(first, "BEGIN"), "");
  std::snprintf(sql, sizeof sql, insert, 100);
  ASSERT_EQ(run(first, sql), "");
  // The first has not committed; the second gives up after a second of waiting.
  ASSERT_EQ(run(second, "SET lock_timeout = '1s'"), "");
  std::snprintf(sql, sizeof sql, insert, 200);
  EXPECT_EQ(run(second, sql), "");
  EXPECT_EQ(run(first, "COMMIT"), "");
  PQfinish(first);
  PQfinish(second);
  EXPECT_EQ(pg_->Query("SELECT sum(docs) FROM search_vocab WHERE word = 'deadlock'"), "3");
  EXPECT_EQ(pg_->Query("SELECT count(*) > 1 FROM search_vocab WHERE word = 'deadlock'"), "t");
}

// Each namespace corrects from its own words: another team's vocabulary is
// never offered, and a deleted session's words leave the vocabulary.
TEST_F(ForgivingPgMigration, ANamespaceIsCorrectedFromItsOwnWordsOnly) {
  const std::string uri = pg_->uri();
  const std::string other =
      uri + (uri.find('?') == std::string::npos ? "?" : "&") + "namespace=other";
  auto b = Store::Open(other, Options());
  ASSERT_TRUE(b) << b.error().ToString();
  ASSERT_TRUE((*b)->CreateSession({.id = "theirs"}));
  Message m;
  m.role = Role::kUser;
  m.parts.push_back(Part::Text("a deadlock in their code"));
  ASSERT_TRUE((*b)->Append("theirs", m));
  const std::string mine = NewSessionId("mine");
  AppendText(mine, "nothing alike here");
  auto index = SearchIndex::Open(*store_, {.embedder = {.from_environment = false}});
  ASSERT_TRUE(index);
  auto r = (*index)->Search({.query = "deadlok", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->hits.empty());
  EXPECT_TRUE(r->corrected_query.empty());
  // Their words leave the vocabulary with their session.
  ASSERT_TRUE((*b)->DeleteSession("theirs").ok());
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM search_vocab WHERE word = 'deadlock'"), "0");
}

}  // namespace
}  // namespace sessiondb::testing
