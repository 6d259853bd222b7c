// What only a shared PostgreSQL store has: namespaces that never see each
// other, opening rules for a database, text PostgreSQL cannot hold. The
// embedded store, being one namespace, refuses any other.

#include <atomic>
#include <thread>

#include "sessiondb/postgres_schema.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class PostgresStore : public PostgresStoreTest {
 protected:
  std::unique_ptr<Store> OpenNamespace(const std::string& ns) {
    StoreOptions o = Options();
    o.namespace_name = ns;
    auto opened = Store::Open(pg_->uri(), o);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }
};

Message WithImage(const std::string& text, const std::string& png) {
  Message m;
  m.parts = {Part::Text(text), Part::ImageFromBytes(png, "image/png")};
  return m;
}

TEST_F(PostgresStore, NamespacesSeeOnlyTheirOwnSessionsAndBlobs) {
  auto a = OpenNamespace("team-a");
  auto b = OpenNamespace("team-b");
  ASSERT_TRUE(a && b);
  // The same session id in two namespaces: two sessions.
  ASSERT_TRUE(a->CreateSession({.id = "same"}));
  ASSERT_TRUE(b->CreateSession({.id = "same"}));
  ASSERT_TRUE(a->CreateSession({.id = "only-a"}));
  auto appended = a->Append("same", WithImage("a's picture", MakePng(4, 4, "team-a")));
  ASSERT_TRUE(appended) << appended.error().ToString();
  const std::string sha = appended->resources[0].content_sha256;
  ASSERT_TRUE(a->SetActiveSession("only-a").ok());

  EXPECT_EQ(a->ListSessions({})->sessions.size(), 2u);
  auto listed_b = b->ListSessions({});
  ASSERT_EQ(listed_b->sessions.size(), 1u);
  EXPECT_EQ(listed_b->sessions[0].message_count, 0);
  EXPECT_EQ(b->GetSession("only-a").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(b->ReadMessages("same")->size(), 0u);
  EXPECT_EQ(b->SetActiveSession("only-a").code(), StatusCode::kNotFound);
  EXPECT_FALSE(b->GetActiveSession()->has_value());
  // Blobs are stored once for all, but only a namespace that refers to one can read it.
  EXPECT_EQ(b->ReadBlob(sha).error().code(), StatusCode::kNotFound);
  Part borrowed;
  borrowed.type = PartType::kImage;
  borrowed.resource = appended->resources[0];
  Message steal;
  steal.parts = {borrowed};
  auto refused = b->Append("same", steal);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("does not hold"), std::string::npos);
  EXPECT_EQ(b->Stats()->blobs, 0);
  EXPECT_EQ(a->Stats()->blobs, 1);
  EXPECT_EQ(a->Stats()->sessions, 2);
  EXPECT_EQ(b->Stats()->sessions, 1);
  // Changes in one namespace leave the other alone.
  ASSERT_TRUE(b->DeleteSession("same").ok());
  EXPECT_EQ(a->ReadMessages("same")->size(), 1u);
  EXPECT_EQ(*a->ReadBlob(sha, true), MakePng(4, 4, "team-a"));
  EXPECT_EQ(**a->GetActiveSession(), "only-a");
}

// A history read asks for its next page before it decodes the one in hand
// (PgConnection::Send). A row that does not decode ends the read with a page
// still in flight: it must be taken off the connection, so the next read on
// it works, and the error must name the row.
TEST_F(PostgresStore, ARowThatDoesNotDecodeWithAPageInFlightLeavesTheConnectionReady) {
  ASSERT_TRUE(store_->CreateSession({.id = "long"}));
  ASSERT_TRUE(store_->CreateSession({.id = "short"}));
  std::vector<Message> messages;
  for (int i = 0; i < 5000; ++i) {
    messages.emplace_back().parts.push_back(Part::Text("m" + std::to_string(i)));
  }
  ASSERT_TRUE(store_->AppendBatch("long", messages));
  Message short_one;
  short_one.parts.push_back(Part::Text("still here"));
  ASSERT_TRUE(store_->Append("short", short_one));
  ASSERT_EQ(store_->ReadMessages("long")->size(), 5000u);
  // Seq 2500 is on the second page of 2,000: the third is in flight.
  pg_->Query("UPDATE events SET role = 'bogus' WHERE session_id = 'long' AND seq = 2500");
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto broken = store_->ReadMessages("long");
    ASSERT_FALSE(broken);
    EXPECT_EQ(broken.error().code(), StatusCode::kCorruption) << broken.error().ToString();
    auto other = store_->ReadMessages("short");
    ASSERT_TRUE(other) << other.error().ToString();
    ASSERT_EQ(other->size(), 1u);
    EXPECT_EQ(other->front().parts[0].text, "still here");
  }
  EXPECT_EQ(store_->ReadMessages("long", 1, 2000)->size(), 2000u) << "the rows before it read";
  EXPECT_EQ(store_->ReadLastMessages("long", 2500)->size(), 2500u) << "and those after it";
}

TEST_F(PostgresStore, TheNamespaceComesFromTheUriOrTheOptionsButNotFromBothWhenTheyDiffer) {
  auto by_option = OpenNamespace("proj");
  ASSERT_TRUE(by_option);
  ASSERT_TRUE(by_option->CreateSession({.id = "s"}));
  // The URI's parameter names the same namespace.
  const std::string with_param = pg_->uri() + "&namespace=proj";
  auto by_uri = Store::Open(with_param, Options());
  ASSERT_TRUE(by_uri) << by_uri.error().ToString();
  EXPECT_TRUE((*by_uri)->GetSession("s"));
  // The default namespace does not see it.
  EXPECT_FALSE(store_->GetSession("s"));

  StoreOptions other = Options();
  other.namespace_name = "elsewhere";
  auto conflict = Store::Open(with_param, other);
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(conflict.error().message().find("elsewhere"), std::string::npos);

  StoreOptions bad = Options();
  bad.namespace_name = "../etc";
  auto refused = Store::Open(pg_->uri(), bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("namespace"), std::string::npos);
}

TEST_F(PostgresStore, ADatabaseWithoutAStoreIsNotCreatedWhenAskedNotTo) {
  PgTestDatabase empty;
  ASSERT_TRUE(empty.ok());
  StoreOptions o = Options();
  o.create_if_missing = false;
  auto opened = Store::Open(empty.uri(), o);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kNotFound);
  EXPECT_NE(opened.error().message().find("sessiondb init"), std::string::npos);
  EXPECT_EQ(empty.Query("SELECT to_regclass('sessions') IS NULL"), "t");
}

TEST_F(PostgresStore, ADatabaseThatDoesNotExistIsNamedInTheError) {
  auto opened = Store::Open(PgUriWithDatabase(pg_->uri(), "no_such_db"), Options());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kIo);
  EXPECT_NE(opened.error().message().find("no_such_db"), std::string::npos);
}

TEST_F(PostgresStore, TextWithANulCharacterIsRefusedRatherThanCut) {
  std::string id = NewSessionId();
  Message m;
  m.parts = {Part::Text(std::string("before\0after", 12))};
  auto r = store_->Append(id, m);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("NUL"), std::string::npos);
  EXPECT_EQ(store_->GetSession(id)->message_count, 0);
}

// The version 1 schema, and two namespaces' sessions written the way version
// 1 wrote them: a plain text message (no body), turns with usage (one naming
// its provider), and a message whose body has no usage.
constexpr const char* kPgVersion1Store = R"sql(
DROP TABLE IF EXISTS sessions, events, blobs, blob_refs, active_sessions, usage_totals, drafts,
  sessiondb_meta, search_docs, embeddings, code_writes, code_edits, hook_seen, index_meta,
  forget_ledger, blob_uploads, usage_days, file_versions;
DROP FUNCTION IF EXISTS sessiondb_events_removed, sessiondb_events_changed,
  sessiondb_code_writes_removed, sessiondb_search_docs_removed CASCADE;
CREATE TABLE sessiondb_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO sessiondb_meta VALUES ('schema_version', '1');
CREATE TABLE sessions (
  namespace text NOT NULL, id text NOT NULL, title text NOT NULL,
  title_fixed boolean NOT NULL DEFAULT false, preview text NOT NULL DEFAULT '',
  created_ms bigint NOT NULL, updated_ms bigint NOT NULL,
  message_count bigint NOT NULL DEFAULT 0, last_seq bigint NOT NULL DEFAULT 0,
  archived boolean NOT NULL DEFAULT false, metadata text NOT NULL DEFAULT '{}',
  PRIMARY KEY (namespace, id));
CREATE INDEX sessions_by_update ON sessions (namespace, updated_ms DESC, id DESC);
CREATE TABLE events (
  namespace text NOT NULL, session_id text NOT NULL, seq bigint NOT NULL, id text NOT NULL,
  ts_ms bigint NOT NULL, type text NOT NULL, role text, text text NOT NULL DEFAULT '', body text,
  PRIMARY KEY (namespace, session_id, seq));
CREATE UNIQUE INDEX events_by_id ON events (namespace, id);
CREATE TABLE blobs (sha256 text PRIMARY KEY, size bigint NOT NULL, created_ms bigint NOT NULL,
  bytes bytea NOT NULL);
CREATE TABLE blob_refs (namespace text NOT NULL, sha256 text NOT NULL, session_id text NOT NULL,
  seq bigint NOT NULL, PRIMARY KEY (namespace, sha256, session_id, seq));
CREATE INDEX blob_refs_by_session ON blob_refs (namespace, session_id, seq);
CREATE INDEX blob_refs_by_sha ON blob_refs (sha256);
CREATE TABLE active_sessions (namespace text PRIMARY KEY, session_id text NOT NULL);

INSERT INTO sessions VALUES ('default', 'old', 'hi', true, 'hi', 1000, 4000, 4, 4, false, '{}');
INSERT INTO events VALUES ('default', 'old', 1, 'e1', 1000, 'message', 'user', 'hi', NULL);
INSERT INTO events VALUES ('default', 'old', 2, 'e2', 2000, 'message', 'assistant', 'a',
  '{"v":1,"parts":[{"type":"text","text":"a"}],"model":"m1","usage":{"input_tokens":10,"output_tokens":2,"cached_tokens":1,"reasoning_tokens":0}}');
INSERT INTO events VALUES ('default', 'old', 3, 'e3', 3000, 'message', 'assistant', 'b',
  '{"v":1,"parts":[{"type":"text","text":"b"}],"model":"m1","usage":{"input_tokens":5,"output_tokens":3,"cached_tokens":0,"reasoning_tokens":4}}');
INSERT INTO events VALUES ('default', 'old', 4, 'e4', 4000, 'message', 'assistant', 'c',
  '{"v":1,"parts":[{"type":"text","text":"c"}],"model":"m2","provider":"acme","usage":{"input_tokens":7,"output_tokens":1}}');
INSERT INTO sessions VALUES ('team-b', 'old', 'x', true, '', 1000, 2000, 2, 2, false, '{}');
INSERT INTO events VALUES ('team-b', 'old', 1, 'b1', 1000, 'message', 'assistant', 'x',
  '{"v":1,"parts":[{"type":"text","text":"x"}],"model":"m1"}');
INSERT INTO events VALUES ('team-b', 'old', 2, 'b2', 2000, 'message', 'assistant', 'y',
  '{"v":1,"parts":[{"type":"text","text":"y"}],"model":"m1","usage":{"input_tokens":100,"output_tokens":1,"cached_tokens":0,"reasoning_tokens":0}}');
)sql";

TEST_F(PostgresStore, AVersion1StoreMigratesToTheCurrentVersionWithItsUsageFilledIn) {
  store_.reset();
  pg_->Query(kPgVersion1Store);

  Reopen();
  EXPECT_EQ(pg_->Query("SELECT value FROM sessiondb_meta WHERE key = 'schema_version'"),
            std::to_string(kPostgresSchemaVersion));
  auto session = store_->GetSession("old");
  ASSERT_TRUE(session) << session.error().ToString();
  EXPECT_EQ(session->parent_id, "");
  EXPECT_EQ(session->fork_seq, 0);
  EXPECT_EQ(session->message_count, 4);
  auto usage = store_->GetUsage("old");
  ASSERT_TRUE(usage) << usage.error().ToString();
  EXPECT_EQ(usage->turns, 3);
  EXPECT_EQ(usage->total, (Usage{22, 6, 1, 4}));
  ASSERT_EQ(usage->by_model.size(), 2u);
  EXPECT_EQ(usage->by_model[0], (ModelUsage{"", "m1", 2, {15, 5, 1, 4}}));
  EXPECT_EQ(usage->by_model[1], (ModelUsage{"acme", "m2", 1, {7, 1, 0, 0}}));
  // The days of usage filled from the log too (docs/usage.md).
  auto days = store_->GetUsageSummary({.group = {UsageGroup::kDay}});
  ASSERT_TRUE(days) << days.error().ToString();
  ASSERT_EQ(days->rows.size(), 1u);
  EXPECT_EQ(days->rows[0].day, "1970-01-01");
  EXPECT_EQ(days->total.usage, (Usage{22, 6, 1, 4}));
  auto b = OpenNamespace("team-b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->GetUsage("old")->total, (Usage{100, 1, 0, 0}));  // each namespace its own
  EXPECT_EQ(store_->ReadMessages("old")->size(), 4u);
  EXPECT_EQ(store_->Stats()->messages, 4);

  // It works as a version 2 store: forks, drafts, usage of new turns.
  auto fork = store_->ForkSession("old", 3, {});
  ASSERT_TRUE(fork) << fork.error().ToString();
  EXPECT_EQ(fork->message_count, 3);
  EXPECT_EQ(fork->title, "hi");
  EXPECT_TRUE(store_->OpenDraft("old", Role::kAssistant, ""));
  Message turn;
  turn.role = Role::kAssistant;
  turn.parts = {Part::Text("d")};
  turn.model = "m1";
  turn.usage = Usage{1, 1, 1, 1};
  ASSERT_TRUE(store_->Append("old", turn));
  EXPECT_EQ(store_->GetUsage("old")->by_model[0].turns, 3);

  // Opening it again migrates nothing twice.
  Reopen();
  EXPECT_EQ(store_->GetUsage("old")->turns, 4);
}

// Deleting forks from many connections at once: whichever commits last sees
// the hidden parent without children and removes it, so none is stranded.
TEST_F(PostgresStore, ForksDeletedConcurrentlyStillTakeTheirDeletedParentAlong) {
  constexpr int kForks = 6;
  for (int round = 0; round < 3; ++round) {
    const std::string parent = "parent-" + std::to_string(round);
    ASSERT_TRUE(store_->CreateSession({.id = parent}));
    AppendText(parent, "shared history");
    std::vector<std::string> forks;
    for (int i = 0; i < kForks; ++i) {
      auto f = store_->ForkSession(parent, 1, {});
      ASSERT_TRUE(f) << f.error().ToString();
      forks.push_back(f->id);
    }
    ASSERT_TRUE(store_->DeleteSession(parent).ok());
    std::vector<std::unique_ptr<Store>> stores;
    for (int i = 0; i < kForks; ++i) stores.push_back(OpenNamespace("default"));
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int i = 0; i < kForks; ++i) {
      threads.emplace_back([&, i] {
        if (!stores[i]->DeleteSession(forks[i]).ok()) ++failures;
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(pg_->Query("SELECT count(*) FROM sessions"), "0") << "round " << round;
    EXPECT_EQ(pg_->Query("SELECT count(*) FROM events"), "0") << "round " << round;
  }
}

TEST_F(PostgresStore, NamespacesKeepForksDraftsAndUsageApart) {
  auto a = OpenNamespace("team-a");
  auto b = OpenNamespace("team-b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->CreateSession({.id = "same"}));
  ASSERT_TRUE(b->CreateSession({.id = "same"}));
  Message turn;
  turn.parts = {Part::Text("a's words")};
  turn.usage = Usage{5, 5, 0, 0};
  ASSERT_TRUE(a->Append("same", turn));
  ASSERT_TRUE(a->Append("same", turn));

  // b cannot fork a's history, even with a session of the same id.
  EXPECT_EQ(b->ForkSession("same", 2, {}).error().code(), StatusCode::kInvalidArgument);
  auto fork_b = b->ForkSession("same", 0, {.id = "fork"});
  ASSERT_TRUE(fork_b);
  auto fork_a = a->ForkSession("same", 2, {.id = "fork"});  // the same id, in a's namespace
  ASSERT_TRUE(fork_a) << fork_a.error().ToString();
  EXPECT_EQ(fork_a->message_count, 2);
  EXPECT_EQ(a->ReadMessages("fork")->size(), 2u);
  EXPECT_TRUE(b->ReadMessages("fork")->empty());

  auto draft = a->OpenDraft("same", Role::kAssistant, "");
  ASSERT_TRUE(draft);
  EXPECT_TRUE(b->ListDrafts("same")->empty());
  EXPECT_EQ(b->SaveDraft(*draft).code(), StatusCode::kNotFound);
  EXPECT_EQ(b->FinishDraft(draft->id, {}).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(b->DiscardDraft(draft->id).code(), StatusCode::kNotFound);
  EXPECT_EQ(a->ListDrafts("same")->size(), 1u);

  EXPECT_EQ(a->GetUsage("same")->turns, 2);
  EXPECT_EQ(b->GetUsage("same")->turns, 0);
  EXPECT_EQ(a->Stats()->messages, 2);  // the fork's are a's, counted once
  EXPECT_EQ(b->Stats()->messages, 0);

  // Deleting b's parent hides it from b only; a's sessions stay as they were.
  ASSERT_TRUE(b->DeleteSession("same").ok());
  EXPECT_EQ(b->GetSession("same").error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(a->GetSession("same"));
  EXPECT_EQ(a->ListDrafts("same")->size(), 1u);
}

class EmbeddedNamespaces : public EmbeddedStoreTest {};

TEST_F(EmbeddedNamespaces, AnEmbeddedStoreRefusesANamespaceOtherThanTheDefault) {
  StoreOptions o = Options();
  o.namespace_name = "team-a";
  auto opened = Store::Open(dir_.Sub("other"), o);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(opened.error().message().find("one namespace"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("other")));
  o.namespace_name = "default";
  EXPECT_TRUE(Store::Open(dir_.Sub("other"), o));
}

}  // namespace
}  // namespace sessiondb::testing
