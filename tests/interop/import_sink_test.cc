// The import framework: ImportSink (ids, runs, idempotent re-import, image
// checks, reasons) and JsonlReader (long and truncated lines).
#include <fstream>

#include "interop/import_sink.h"
#include "interop/jsonl_reader.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

using interop::ImportSink;
using interop::JsonlReader;
using interop::StableEventId;

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
    ImportSink sink(*store_, &report);
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
  EXPECT_EQ((*events)[1500].id, StableEventId("src", "line1500"));
  const Resource& img = *(*events)[2490].message.parts[1].resource;
  EXPECT_EQ(*store_->ReadBlob(img.content_sha256, true), MakePng(4, 4, "img2490"));
  EXPECT_TRUE(store_->Verify()->clean());
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

TEST_F(ImportSinkTest, StableIdsDependOnSessionAndRecordOnly) {
  EXPECT_EQ(StableEventId("a", "x"), StableEventId("a", "x"));
  EXPECT_NE(StableEventId("a", "x"), StableEventId("b", "x"));
  EXPECT_EQ(StableEventId("a", "x").size(), 36u);
  EXPECT_EQ(interop::StableSessionId("codex", "0192-abc"), "0192-abc");
  const std::string hashed = interop::StableSessionId("codex", "has/slash and space");
  EXPECT_EQ(hashed.rfind("codex-", 0), 0u);
  EXPECT_EQ(hashed.size(), 6u + 32u);
  EXPECT_EQ(interop::ParseIsoTime("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(interop::ParseIsoTime("2025-06-01T12:00:00+02:00"),
            interop::ParseIsoTime("2025-06-01T10:00:00Z"));
  EXPECT_EQ(interop::ParseIsoTime("yesterday"), std::nullopt);
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
