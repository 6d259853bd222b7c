// The embedded store opens stores written by older versions: a version 1
// database (as sessiondb 0.1 wrote it) migrates to version 2 in place, with
// its usage totals filled from the log, on to version 3 with every message
// in the full-text index, to version 4, to version 5, where the index
// follows the log: what was indexed stays indexed, appends wait for a
// catch-up, and to version 6, where no trigger fires on an insert into the
// log: its writers record their search documents themselves.
#include <sqlite3.h>

#include "sessiondb/search.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class EmbeddedMigration : public EmbeddedStoreTest {};

// The version 1 schema and a session with two turns, written the way
// version 1 wrote them.
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
INSERT INTO sessions VALUES ('old', 'hi', 1, 'hi', 1000, 3000, 3, 3, 0, '{}');
INSERT INTO events VALUES ('old', 1, 'e1', 1000, 'message', 'user', 'hi', NULL);
INSERT INTO events VALUES ('old', 2, 'e2', 2000, 'message', 'assistant', 'a',
  '{"v":1,"parts":[{"type":"text","text":"a"}],"model":"m1","usage":{"input_tokens":10,"output_tokens":2,"cached_tokens":1,"reasoning_tokens":0}}');
INSERT INTO events VALUES ('old', 3, 'e3', 3000, 'message', 'assistant', 'b',
  '{"v":1,"parts":[{"type":"text","text":"b"}],"model":"m1","usage":{"input_tokens":5,"output_tokens":3,"cached_tokens":0,"reasoning_tokens":4}}');
PRAGMA user_version = 1;
)sql";

TEST_F(EmbeddedMigration, AVersion1StoreMigratesWithItsUsageFilledIn) {
  store_.reset();
  std::filesystem::remove_all(StoreDir());
  std::filesystem::create_directories(StoreDir());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((StoreDir() + "/sessiondb.db").c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, kVersion1Store, nullptr, nullptr, &error), SQLITE_OK) << error;
  sqlite3_close(db);

  Reopen();
  auto session = store_->GetSession("old");
  ASSERT_TRUE(session) << session.error().ToString();
  EXPECT_EQ(session->parent_id, "");
  EXPECT_EQ(session->message_count, 3);
  auto usage = store_->GetUsage("old");
  ASSERT_TRUE(usage) << usage.error().ToString();
  EXPECT_EQ(usage->turns, 2);
  EXPECT_EQ(usage->total, (Usage{15, 5, 1, 4}));
  ASSERT_EQ(usage->by_model.size(), 1u);
  EXPECT_EQ(usage->by_model[0].model, "m1");
  // And as a version 9 store: its days of usage filled from the log.
  auto days = store_->GetUsageSummary({.group = {UsageGroup::kDay}});
  ASSERT_TRUE(days) << days.error().ToString();
  ASSERT_EQ(days->rows.size(), 1u);
  EXPECT_EQ(days->rows[0].day, "1970-01-01");
  EXPECT_EQ(days->total.usage, (Usage{15, 5, 1, 4}));
  EXPECT_EQ(store_->ReadMessages("old")->size(), 3u);
  // And it works as a version 2 store: forks, drafts.
  EXPECT_TRUE(store_->ForkSession("old", 2, {}));
  EXPECT_TRUE(store_->OpenDraft("old", Role::kAssistant, ""));
  // And as a version 3 store: the messages written before are searchable.
  auto index = SearchIndex::Open(StoreDir(), {.embedder = {.from_environment = false}});
  ASSERT_TRUE(index) << index.error().ToString();
  auto hits = (*index)->Search({.query = "hi", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(hits);
  ASSERT_EQ(hits->hits.size(), 1u);
  EXPECT_EQ(hits->hits[0].session_id, "old");
  EXPECT_EQ(hits->hits[0].seq, 1);
  // And as a version 5 store: what versions 3 and 4 indexed is behind the
  // watermark (nothing pending); an append is recorded, not indexed, until a
  // search catches the index up.
  auto pending = (*index)->PendingDocuments();
  ASSERT_TRUE(pending) << pending.error().ToString();
  EXPECT_EQ(*pending, 0);
  Message later;
  later.role = Role::kUser;
  later.parts = {Part::Text("afterwards quokka")};
  ASSERT_TRUE(store_->Append("old", later));
  pending = (*index)->PendingDocuments();
  ASSERT_TRUE(pending);
  EXPECT_EQ(*pending, 1);
  auto fresh = (*index)->Search({.query = "quokka", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(fresh);
  ASSERT_EQ(fresh->hits.size(), 1u);
  EXPECT_EQ(fresh->hits[0].seq, 4);
  EXPECT_EQ(fresh->pending_documents, 0);

  // And as a version 6 store: nothing fires on an insert into events, yet a
  // batch and an event that is not a message are both recorded and found.
  store_.reset();
  index->reset();
  ASSERT_EQ(sqlite3_open((StoreDir() + "/sessiondb.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* triggers = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' "
                               "AND tbl_name = 'events' AND sql LIKE '%AFTER INSERT%'",
                               -1, &triggers, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(triggers), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(triggers, 0), 0);
  sqlite3_finalize(triggers);
  sqlite3_close(db);
  Reopen();
  std::vector<Message> batch(3, later);
  batch[0].parts = {Part::Text("batched wombat one")};
  batch[1].parts = {Part::Text("batched wombat two")};
  batch[2].parts = {Part::Text("batched numbat")};
  ASSERT_TRUE(store_->AppendBatch("old", batch));
  ASSERT_TRUE(store_->Compact("old", {.from_seq = 1, .to_seq = 5, .summary = "capybara summary"}));
  index = SearchIndex::Open(StoreDir(), {.embedder = {.from_environment = false}});
  ASSERT_TRUE(index) << index.error().ToString();
  auto wombats = (*index)->Search({.query = "wombat", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(wombats);
  ASSERT_EQ(wombats->hits.size(), 2u);
  auto summary = (*index)->Search({.query = "capybara", .mode = SearchMode::kKeyword});
  ASSERT_TRUE(summary) << summary.error().ToString();
  ASSERT_EQ(summary->hits.size(), 1u);
  EXPECT_EQ(summary->hits[0].seq, 8);
}

}  // namespace
}  // namespace sessiondb::testing
