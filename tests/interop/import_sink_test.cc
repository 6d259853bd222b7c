// The import framework: ImportSink (ids, runs, idempotent re-import, image
// checks, reasons) and JsonlReader (long and truncated lines).
#include "interop/import_sink.h"

#include <sqlite3.h>

#include <fstream>

#include "interop/jsonl_reader.h"
#include "sessiondb/search.h"
#include "store/sqlite/search_text.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

using interop::ImportSink;
using interop::JsonlReader;
using interop::StableEventId;

// FTS5's own check of the full-text index against the content it indexes
// (the search_content view): "ok", or SQLite's error.
std::string FullTextIntegrityCheck(const std::string& store_dir) {
  sqlite3* db = nullptr;
  if (sqlite3_open((store_dir + "/sessiondb.db").c_str(), &db) != SQLITE_OK) return "cannot open";
  sqlite::RegisterSearchTextFunction(db);
  char* error = nullptr;
  const int rc =
      sqlite3_exec(db, "INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 1)",
                   nullptr, nullptr, &error);
  std::string out = rc == SQLITE_OK ? "ok" : (error ? error : sqlite3_errstr(rc));
  sqlite3_free(error);
  sqlite3_close(db);
  return out;
}

class ImportSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::Open(dir_.Sub("store"));
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }

  Event Text(const std::string& session, int i, Role role = Role::kUser) {
    Event e;
    e.id = StableEventId(session, "line" + std::to_string(i));
    e.ts_ms = 1'000'000 + i;
    e.message.role = role;
    e.message.parts = {Part::Text("text " + std::to_string(i))};
    return e;
  }

  // Imports `n` messages (every 10th with an image, the 7th with bytes that
  // are not an image) into session "src".
  ImportReport ImportOf(int n) {
    ImportReport report;
    ImportSink sink(*store_, &report, {}, {.events = 1000});
    EXPECT_TRUE(sink.BeginSession({.id = "src"}).ok());
    for (int i = 0; i < n; ++i) {
      Event e = Text("src", i, i % 2 ? Role::kAssistant : Role::kUser);
      if (i % 10 == 0) {
        e.message.parts.push_back(
            Part::ImageFromBytes(MakePng(4, 4, "img" + std::to_string(i)), "image/png", "a.png"));
      }
      if (i == 7) e.message.parts.push_back(Part::ImageFromBytes("GIF? no", "image/gif", "b.gif"));
      EXPECT_TRUE(sink.Add(std::move(e), "line " + std::to_string(i)).ok());
    }
    EXPECT_TRUE(sink.EndSession().ok());
    EXPECT_TRUE(sink.Finish().ok());
    return report;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(ImportSinkTest, ASessionLongerThanARunIsWrittenWholeWithItsImages) {
  ImportReport r = ImportOf(2500);  // three runs of at most 1000 events
  EXPECT_EQ(r.sessions_added, 1);
  EXPECT_EQ(r.messages_added, 2500);
  EXPECT_EQ(r.images_added, 250);
  ASSERT_EQ(r.records_skipped, 1);
  EXPECT_EQ(r.skipped[0].where, "line 7");
  EXPECT_NE(r.skipped[0].reason.find("'b.gif'"), std::string::npos) << r.skipped[0].reason;
  auto session = store_->GetSession("src");
  ASSERT_TRUE(session);
  EXPECT_EQ(session->last_seq, 2500);
  EXPECT_EQ(session->title, "text 0");
  EXPECT_EQ(session->created_ms, 1'000'000);
  EXPECT_EQ(session->updated_ms, 1'000'000 + 2499);
  auto events = store_->ReadEvents("src");
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2500u);
  EXPECT_EQ((*events)[7].message.parts.size(), 1u);  // the false GIF left out, the text kept
  EXPECT_EQ((*events)[1500].id,
            interop::ImportedEventId("src", 1501, StableEventId("src", "line1500")));
  const Resource& img = *(*events)[2490].message.parts[1].resource;
  EXPECT_EQ(*store_->ReadBlob(img.content_sha256, true), MakePng(4, 4, "img2490"));
  EXPECT_TRUE(store_->Verify()->clean());
}

// Imported events are indexed by the runs themselves (the trigger stands
// aside): the index must match what its content view computes from the log,
// or later deletes would leave stale terms behind.
TEST_F(ImportSinkTest, ImportedEventsAreSearchableAndTheIndexMatchesTheLog) {
  {
    ImportReport report;
    ImportSink sink(*store_, &report, {}, {.events = 1000});
    ASSERT_TRUE(sink.BeginSession({.id = "tools"}).ok());
    for (int i = 0; i < 1500; ++i) {
      Event e = Text("tools", i, Role::kAssistant);
      e.message.parts.push_back(
          Part::ToolCall("c" + std::to_string(i), "Read", i % 2 ? "{\"path\":\"zebra.cc\"}" : ""));
      Event r = Text("tools", 100000 + i, Role::kTool);
      r.message.parts = {Part::ToolResult("c" + std::to_string(i), "output" + std::to_string(i))};
      ASSERT_TRUE(sink.Add(std::move(e), "call").ok());
      ASSERT_TRUE(sink.Add(std::move(r), "result").ok());
    }
    ASSERT_TRUE(sink.EndSession().ok());
    ASSERT_TRUE(sink.Finish().ok());
  }
  auto index = SearchIndex::Open(dir_.Sub("store"), {.embedder = {.from_environment = false}});
  ASSERT_TRUE(index) << index.error().ToString();
  // A tool result, a tool call's arguments and a message text, each in a
  // different run.
  for (const auto& [query, seq] : std::vector<std::pair<std::string, int64_t>>{
           {"output1234", 2470}, {"text 1499", 2999}, {"output7", 16}}) {
    auto hits = (*index)->Search({.query = query, .mode = SearchMode::kKeyword});
    ASSERT_TRUE(hits) << hits.error().ToString();
    ASSERT_FALSE(hits->hits.empty()) << query;
    EXPECT_EQ(hits->hits[0].seq, seq) << query;
  }
  auto zebra = (*index)->Search({.query = "zebra", .mode = SearchMode::kKeyword, .limit = 1000});
  ASSERT_TRUE(zebra);
  EXPECT_EQ(zebra->hits.size(), 750u);  // the calls with arguments
  EXPECT_EQ(FullTextIntegrityCheck(dir_.Sub("store")), "ok");
  // Deleting uses the content view's text: the index stays whole.
  ASSERT_TRUE(store_->DeleteSession("tools").ok());
  EXPECT_EQ(FullTextIntegrityCheck(dir_.Sub("store")), "ok");
}

// A run that fails (here: an event id the store already holds) stops the
// import: the importer hears of it, nothing of that run or any later one is
// written, and the runs before it stay whole.
TEST_F(ImportSinkTest, AFailedRunStopsTheImportAndLeavesNothingOfItself) {
  // The id the sink will give line 1500 of "src" (seq 1501), already taken.
  const std::string taken = interop::ImportedEventId("src", 1501, StableEventId("src", "line1500"));
  Event other = Text("other", 0);
  other.id = taken;
  other.seq = 1;
  other.session_id = "other";
  other.message.id = taken;
  other.message.seq = 1;
  other.message.ts_ms = other.ts_ms;
  ASSERT_TRUE(store_->RestoreSession({.id = "other", .title = "Other"}, {&other, 1}, {}).ok());
  ImportReport report;
  ImportSink sink(*store_, &report, {}, {.events = 1000});
  ASSERT_TRUE(sink.BeginSession({.id = "src"}).ok());
  Status added = Status::Ok();
  int i = 0;
  for (; i < 3500 && added.ok(); ++i) added = sink.Add(Text("src", i), "line");
  // Run 2 (1001-2000) fails; the importer hears of it when it hands over
  // run 3, which is dropped.
  EXPECT_EQ(added.code(), StatusCode::kAlreadyExists) << added.ToString();
  EXPECT_NE(added.message().find(taken), std::string::npos) << added.message();
  EXPECT_EQ(i, 3000);
  EXPECT_EQ(sink.Finish().code(), StatusCode::kAlreadyExists);
  auto session = store_->GetSession("src");
  ASSERT_TRUE(session);
  EXPECT_EQ(session->last_seq, 1000);
  EXPECT_EQ(store_->ReadEvents("src")->size(), 1000u);
  EXPECT_EQ(store_->ReadEvents("other")->size(), 1u);
  EXPECT_TRUE(store_->Verify()->clean());
  EXPECT_EQ(FullTextIntegrityCheck(dir_.Sub("store")), "ok");
}

TEST_F(ImportSinkTest, ImportingTheSameSourceAgainAddsNothingAndAGrownOneAddsItsTail) {
  ImportOf(30);
  const auto before = store_->ReadEvents("src");
  ImportReport again = ImportOf(30);
  EXPECT_EQ(again.sessions_unchanged, 1);
  EXPECT_EQ(again.sessions_added, 0);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(store_->ReadEvents("src")->size(), before->size());

  ImportReport grown = ImportOf(35);
  EXPECT_EQ(grown.sessions_extended, 1);
  EXPECT_EQ(grown.messages_added, 5);
  auto after = store_->ReadEvents("src");
  ASSERT_EQ(after->size(), 35u);
  EXPECT_EQ((*after)[29].id, (*before)[29].id);
  EXPECT_EQ((*after)[34].message.Text(), "text 34");
}

// A source continued elsewhere may hold a new record anywhere, not only at
// its end: records are matched by identity, the new ones appended after the
// store's last event in source order, and the store's own order is kept.
TEST_F(ImportSinkTest, RecordsAreMatchedByIdentityWhereverTheyStand) {
  auto import = [&](const std::vector<int>& lines) {
    ImportReport report;
    ImportSink sink(*store_, &report, {}, {.events = 1000});
    EXPECT_TRUE(sink.BeginSession({.id = "moved"}).ok());
    for (int i : lines) EXPECT_TRUE(sink.Add(Text("moved", i), "line").ok());
    EXPECT_TRUE(sink.EndSession().ok());
    EXPECT_TRUE(sink.Finish().ok());
    return report;
  };
  import({0, 1, 2});
  // 9 came in between 0 and 1, 3 at the end.
  ImportReport grown = import({0, 9, 1, 2, 3});
  EXPECT_EQ(grown.sessions_extended, 1);
  EXPECT_EQ(grown.messages_added, 2);
  std::vector<std::string> texts;
  auto messages = store_->ReadMessages("moved");
  ASSERT_TRUE(messages);
  for (const Message& m : *messages) texts.push_back(m.Text());
  EXPECT_EQ(texts, (std::vector<std::string>{"text 0", "text 1", "text 2", "text 9", "text 3"}));
  ImportReport again = import({0, 9, 1, 2, 3});
  EXPECT_EQ(again.sessions_unchanged, 1);
  EXPECT_EQ(again.messages_added, 0);
  // Fewer records than the store holds, or others in their place: only
  // what is new comes in (position and count tell nothing).
  ImportReport shorter = import({2, 4});
  EXPECT_EQ(shorter.messages_added, 1);
  EXPECT_EQ(store_->GetSession("moved")->last_seq, 6);
}

// Importers number the events of a compaction's range as if the session
// were new; the sink turns that into the range those records hold in the
// store, a record that came in late included.
TEST_F(ImportSinkTest, ACompactionCoversTheStoreSeqsOfTheRecordsItStandsFor) {
  auto import = [&](const std::vector<int>& lines, bool compact) {
    ImportReport report;
    ImportSink sink(*store_, &report, {}, {.events = 1000});
    EXPECT_TRUE(sink.BeginSession({.id = "compacted"}).ok());
    for (int i : lines) EXPECT_TRUE(sink.Add(Text("compacted", i), "line").ok());
    if (compact) {
      Event c;
      c.id = StableEventId("compacted", "boundary");
      c.type = EventType::kCompaction;
      c.ts_ms = 2'000'000;
      c.compaction = {
          .from_seq = 1, .to_seq = static_cast<int64_t>(lines.size()), .summary = "earlier"};
      EXPECT_TRUE(sink.Add(std::move(c), "boundary").ok());
    }
    EXPECT_TRUE(sink.EndSession().ok());
    EXPECT_TRUE(sink.Finish().ok());
    return report;
  };
  import({0, 1, 2}, false);
  import({0, 1, 9, 2}, true);  // the source's 1..4: store seqs 1, 2, 4, 3
  auto events = store_->ReadEvents("compacted");
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 5u);
  EXPECT_EQ((*events)[3].message.Text(), "text 9");
  ASSERT_EQ((*events)[4].type, EventType::kCompaction);
  EXPECT_EQ((*events)[4].compaction.from_seq, 1);
  EXPECT_EQ((*events)[4].compaction.to_seq, 4);
}

// A format without record ids names a message by its fingerprint and its
// count among equal ones: two equal messages are two records, and a third
// that comes later is new.
TEST_F(ImportSinkTest, MessagesWithoutIdsAreKnownByFingerprintAndCount) {
  auto by_text = [](const Message& m) { return std::string(RoleName(m.role)) + m.Text(); };
  auto import = [&](const std::vector<std::string>& words) {
    ImportReport report;
    ImportSink sink(*store_, &report, {}, {.events = 1000});
    EXPECT_TRUE(sink.BeginSession({.id = "noids"}, by_text).ok());
    for (const std::string& w : words) {
      Event e;
      e.ts_ms = 5;
      e.message.parts = {Part::Text(w)};
      EXPECT_TRUE(sink.Add(std::move(e), "msg").ok());
    }
    EXPECT_TRUE(sink.EndSession().ok());
    EXPECT_TRUE(sink.Finish().ok());
    return report;
  };
  EXPECT_EQ(import({"yes", "no", "yes"}).messages_added, 3);
  EXPECT_EQ(import({"yes", "no", "yes"}).messages_added, 0);
  EXPECT_EQ(import({"yes", "no", "yes", "yes"}).messages_added, 1);
  EXPECT_EQ(store_->GetSession("noids")->message_count, 4);

  // Without a fingerprint, an event needs an id.
  ImportReport report;
  ImportSink sink(*store_, &report, {}, {.events = 1000});
  ASSERT_TRUE(sink.BeginSession({.id = "unnamed"}).ok());
  Event e;
  e.message.parts = {Part::Text("who am I")};
  EXPECT_EQ(sink.Add(std::move(e), "msg").code(), StatusCode::kInternal);
}

TEST_F(ImportSinkTest, StableIdsDependOnSessionAndRecordOnly) {
  EXPECT_EQ(StableEventId("a", "x"), StableEventId("a", "x"));
  EXPECT_NE(StableEventId("a", "x"), StableEventId("b", "x"));
  EXPECT_EQ(StableEventId("a", "x").size(), 36u);
  EXPECT_EQ(interop::StableSessionId("codex", "0192-abc"), "0192-abc");
  const std::string hashed = interop::StableSessionId("codex", "has/slash and space");
  EXPECT_EQ(hashed.rfind("codex-", 0), 0u);
  EXPECT_EQ(hashed.size(), 6u + 32u);
  EXPECT_EQ(ParseIsoTime("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(ParseIsoTime("2025-06-01T12:00:00+02:00"), ParseIsoTime("2025-06-01T10:00:00Z"));
  EXPECT_EQ(ParseIsoTime("yesterday"), std::nullopt);
}

// Stored ids sort as an import writes them (by session, then seq, whatever
// the record's own id), so the id index grows at its end; they stay stable
// and UUID-shaped, and differ by session, seq and record.
TEST(ImportedIds, SortBySessionThenSeqAndStayStable) {
  using interop::ImportedEventId;
  const std::string a2 = ImportedEventId("s", 2, StableEventId("s", "zzz"));
  const std::string a10 = ImportedEventId("s", 10, StableEventId("s", "aaa"));
  const std::string a70000 = ImportedEventId("s", 70000, StableEventId("s", "mmm"));
  EXPECT_LT(a2, a10);
  EXPECT_LT(a10, a70000);
  EXPECT_EQ(a2.substr(0, 8), a70000.substr(0, 8));  // one session, one prefix
  EXPECT_NE(a2.substr(0, 8), ImportedEventId("t", 2, StableEventId("s", "zzz")).substr(0, 8));
  EXPECT_EQ(a2, ImportedEventId("s", 2, StableEventId("s", "zzz")));
  EXPECT_NE(a2, ImportedEventId("s", 2, StableEventId("s", "other")));
  EXPECT_EQ(a2.size(), 36u);
  EXPECT_EQ(a2[8], '-');
  EXPECT_EQ(a2[13], '-');
  EXPECT_EQ(a2[18], '-');
  EXPECT_EQ(a2[23], '-');
}

TEST(JsonlReaderTest, LongLinesAndATruncatedLastLineAreFlagged) {
  TempDir dir;
  const std::string path = dir.Sub("x.jsonl");
  {
    std::ofstream out(path, std::ios::binary);
    out << "{\"a\":1}\r\n" << std::string(5000, 'x') << "\n\n{\"b\":2}\n{\"c\":";
  }
  auto reader = JsonlReader::Open(path, /*max_line=*/1000);
  ASSERT_TRUE(reader);
  JsonlReader::Line line;
  std::vector<std::string> texts;
  std::vector<bool> long_flags, eof_flags;
  while (*(*reader)->Next(&line)) {
    texts.emplace_back(line.text);
    long_flags.push_back(line.too_long);
    eof_flags.push_back(line.at_eof_without_newline);
  }
  EXPECT_EQ(texts, (std::vector<std::string>{"{\"a\":1}", "", "", "{\"b\":2}", "{\"c\":"}));
  EXPECT_EQ(long_flags, (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(eof_flags, (std::vector<bool>{false, false, false, false, true}));
  EXPECT_EQ((*reader)->bytes_read(), (*reader)->total_bytes());
  EXPECT_EQ(JsonlReader::Open(dir.Sub("none")).error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sessiondb::testing
