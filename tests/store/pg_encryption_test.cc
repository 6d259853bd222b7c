// An encrypted PostgreSQL namespace at rest (docs/encryption.md): its rows
// and blobs hold no planted content; a changed byte, or a value moved to
// another record or namespace, is kCorruption naming it, never returned as
// data; blobs are deduplicated within a namespace's key only; and a
// plaintext namespace beside it still stores what it always stored.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "blob/sha256.h"
#include "canary_scan.h"
#include "store_fixture.h"

namespace sessiondb::testing {
namespace {

class PgEncryption : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kPostgresEncrypted; }

  // A second store on namespace `ns` of the same database: with the test's
  // master key (a data key of its own) or without any.
  std::unique_ptr<Store> OpenNamespace(const std::string& ns, bool with_key) {
    StoreOptions options = Options();
    options.namespace_name = ns;
    if (!with_key) options.key_file.clear();
    auto opened = Store::Open(Location(), options);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }

  static Message Text(const std::string& text, Role role = Role::kUser) {
    Message m;
    m.role = role;
    m.parts.push_back(Part::Text(text));
    return m;
  }

  static Message Image(const std::string& png) {
    Message m;
    m.role = Role::kUser;
    m.parts.push_back(Part::ImageFromBytes(png, "image/png"));
    return m;
  }

  // A message with a body (a tool call), so its event row has one to damage.
  static Message ToolCall(const std::string& input) {
    Message m;
    m.role = Role::kAssistant;
    m.parts.push_back(Part::ToolCall("call_1", "shell", R"({"cmd":")" + input + R"("})"));
    return m;
  }

  // Changes one character of the base64 in `column` of the row `where` picks.
  void FlipStoredText(const std::string& table, const std::string& column,
                      const std::string& where) {
    pg_->Query("UPDATE " + table + " SET " + column + " = overlay(" + column +
               " placing CASE WHEN substr(" + column +
               ", 30, 1) = 'A' THEN 'B' ELSE 'A' END "
               "from 30 for 1) WHERE " +
               where);
  }
};

TEST_F(PgEncryption, TheTablesHoldNoPlantedContent) {
  const std::string png = MakePng(8, 8, "canaryimage", 600);
  auto session = store_->CreateSession(
      {.title = "canarytitle", .metadata_json = R"({"project":"/src/canaryproject"})"});
  ASSERT_TRUE(session) << session.error().ToString();
  const std::string id = session->id;
  ASSERT_TRUE(store_->Append(id, Text("canarymessage words")));
  ASSERT_TRUE(store_->Append(id, ToolCall("canarytoolinput")));
  Message result;
  result.role = Role::kTool;
  result.parts.push_back(Part::ToolResult("call_1", "canarytoolresult"));
  ASSERT_TRUE(store_->Append(id, result));
  ASSERT_TRUE(store_->Append(id, Image(png)));
  auto draft = store_->OpenDraft(id, Role::kAssistant, "model");
  ASSERT_TRUE(draft);
  draft->text = "canarydraft";
  draft->reasoning = "canaryreasoning";
  ASSERT_TRUE(store_->SaveDraft(*draft).ok());
  ASSERT_TRUE(store_->SetRedactionSettings({.enabled = true, .allow = {"canarysetting"}}).ok());
  auto fork = store_->ForkSession(id, 2, {});
  ASSERT_TRUE(fork) << fork.error().ToString();

  // Everything reads back through the store.
  EXPECT_EQ(store_->GetSession(id)->title, "canarytitle");
  EXPECT_EQ(fork->title, "canarytitle");
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 4u);
  EXPECT_EQ(messages->front().parts[0].text, "canarymessage words");
  EXPECT_EQ(store_->ListDrafts(id)->front().reasoning, "canaryreasoning");
  EXPECT_EQ(store_->GetRedactionSettings()->allow, std::vector<std::string>{"canarysetting"});
  EXPECT_EQ(*store_->ReadBlob(blob::Sha256Hex(png)), png);
  auto listed =
      store_->ListSessions({.metadata_key = "project", .metadata_value = "/src/canaryproject"});
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->sessions.size(), 2u);  // the session and its fork

  // And nothing of it is in a row, a blob or the database's files.
  const std::vector<std::string> canaries = {
      "canarytitle",       "canaryproject",    "canarymessage",
      "canarytoolinput",   "canarytoolresult", "canarydraft",
      "canaryreasoning",   "canarysetting",    HexOf(png.substr(100, 24)),
      blob::Sha256Hex(png)};
  store_.reset();
  for (const auto& [canary, where] : CanaryTraces(StoreDir(), pg_.get(), canaries)) {
    EXPECT_TRUE(where.empty()) << canary << " is stored in " << ::testing::PrintToString(where);
  }
}

TEST_F(PgEncryption, AFlippedByteInAnEventBodyIsCorruptionNamingIt) {
  const std::string id = NewSessionId();
  auto appended = store_->Append(id, ToolCall("ls"));
  ASSERT_TRUE(appended);
  FlipStoredText("events", "body", "id = '" + appended->message_id + "'");
  auto read = store_->ReadMessages(id);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), StatusCode::kCorruption);
  EXPECT_NE(read.error().message().find("event body of " + appended->message_id), std::string::npos)
      << read.error().message();
}

TEST_F(PgEncryption, AFlippedByteInATitleIsCorruptionNamingIt) {
  const std::string id = NewSessionId();
  AppendText(id, "hello there");
  FlipStoredText("sessions", "title", "id = '" + id + "'");
  auto session = store_->GetSession(id);
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error().code(), StatusCode::kCorruption);
  EXPECT_NE(session.error().message().find("session title of " + id), std::string::npos);
}

TEST_F(PgEncryption, AFlippedByteInABlobIsCorruptionNamingIt) {
  const std::string png = MakePng(4, 4, "damaged", 200);
  const std::string sha = blob::Sha256Hex(png);
  const std::string id = NewSessionId();
  ASSERT_TRUE(store_->Append(id, Image(png)));
  DamageBlob(sha);
  auto read = store_->ReadBlob(sha);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), StatusCode::kCorruption);
  EXPECT_NE(read.error().message().find(sha), std::string::npos) << read.error().message();
  auto opened = store_->OpenBlob(sha);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kCorruption);
  auto report = store_->Verify();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->corrupt, std::vector<std::string>{sha});
}

TEST_F(PgEncryption, ABodyCopiedToAnotherEventDoesNotOpen) {
  const std::string id = NewSessionId();
  ASSERT_TRUE(store_->Append(id, ToolCall("first")));
  auto second = store_->Append(id, ToolCall("second"));
  ASSERT_TRUE(second);
  pg_->Query("UPDATE events SET body = (SELECT body FROM events WHERE seq = 1) WHERE seq = 2");
  auto read = store_->ReadMessages(id);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), StatusCode::kCorruption);
  EXPECT_NE(read.error().message().find(second->message_id), std::string::npos);
}

TEST_F(PgEncryption, AnotherNamespaceWithItsOwnKeyCannotOpenTheFirstsValues) {
  ASSERT_TRUE(store_->CreateSession({.id = "same", .title = "first namespace's title"}));
  std::unique_ptr<Store> other = OpenNamespace("other", /*with_key=*/true);
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->CreateSession({.id = "same", .title = "its own"}));
  EXPECT_NE(Sealer("other").key_id(), Sealer("default").key_id());
  // The same session id, so only the key differs.
  pg_->Query(
      "UPDATE sessions SET title = (SELECT title FROM sessions WHERE namespace = 'default') "
      "WHERE namespace = 'other'");
  auto session = other->GetSession("same");
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error().code(), StatusCode::kCorruption);
  EXPECT_EQ(store_->GetSession("same")->title, "first namespace's title");
}

TEST_F(PgEncryption, TheSameImageIsStoredOncePerNamespaceAndOncePerKey) {
  const std::string png = MakePng(4, 4, "shared", 200);
  const std::string sha = blob::Sha256Hex(png);
  ASSERT_TRUE(store_->Append(NewSessionId(), Image(png)));
  ASSERT_TRUE(store_->Append(NewSessionId(), Image(png)));
  EXPECT_EQ(BlobCount(), 1u);
  std::unique_ptr<Store> other = OpenNamespace("other", /*with_key=*/true);
  ASSERT_TRUE(other);
  auto session = other->CreateSession({});
  ASSERT_TRUE(session);
  ASSERT_TRUE(other->Append(session->id, Image(png)));
  EXPECT_EQ(BlobCount(), 2u);
  // Under two keyed names, neither of them the digest.
  EXPECT_EQ(
      pg_->Query("SELECT count(*) FROM blobs WHERE sha256 IN ('" + Sealer("default").BlobName(sha) +
                 "', '" + Sealer("other").BlobName(sha) + "')"),
      "2");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs WHERE sha256 = '" + sha + "'"), "0");
  EXPECT_EQ(*other->ReadBlob(sha), png);
  EXPECT_EQ(*store_->ReadBlob(sha), png);
  // Verify and gc still speak digests.
  auto report = other->Verify();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->corrupt.empty() && report->missing.empty());
  EXPECT_EQ(report->blobs_checked, 1);
}

TEST_F(PgEncryption, AMetadataFilterPagesExactlyOverSealedMetadata) {
  // More sessions than one page of the in-process filter's reads (256).
  std::vector<std::string> wanted;
  for (int i = 0; i < 300; ++i) {
    now_ms_ += 1;
    const bool match = i % 3 == 0;
    auto s = store_->CreateSession(
        {.metadata_json = match ? R"({"team":"red"})" : R"({"team":"blue"})"});
    ASSERT_TRUE(s);
    if (match) wanted.insert(wanted.begin(), s->id);  // newest first
  }
  std::vector<std::string> seen;
  std::string cursor;
  do {
    auto page = store_->ListSessions(
        {.limit = 30, .cursor = cursor, .metadata_key = "team", .metadata_value = "red"});
    ASSERT_TRUE(page) << page.error().ToString();
    ASSERT_LE(page->sessions.size(), 30u);
    for (const Session& s : page->sessions) seen.push_back(s.id);
    cursor = page->next_cursor;
  } while (!cursor.empty());
  EXPECT_EQ(seen, wanted);
}

TEST_F(PgEncryption, APlaintextNamespaceStillStoresPlaintext) {
  const std::string png = MakePng(4, 4, "plain", 200);
  const std::string sha = blob::Sha256Hex(png);
  std::unique_ptr<Store> plain = OpenNamespace("plain", /*with_key=*/false);
  ASSERT_TRUE(plain);
  ASSERT_TRUE(plain->CreateSession({.id = "p", .title = "plain title"}));
  auto appended = plain->Append("p", ToolCall("plaininput"));
  ASSERT_TRUE(appended);
  ASSERT_TRUE(plain->Append("p", Image(png)));
  ASSERT_TRUE(plain->SetRedactionSettings({.enabled = true, .allow = {"plainsetting"}}).ok());
  EXPECT_EQ(pg_->Query("SELECT title FROM sessions WHERE namespace = 'plain'"), "plain title");
  EXPECT_NE(pg_->Query("SELECT body FROM events WHERE id = '" + appended->message_id + "'")
                .find("plaininput"),
            std::string::npos);
  EXPECT_EQ(pg_->Query("SELECT encode(bytes, 'hex') FROM blobs WHERE sha256 = '" + sha +
                       "' AND digest IS NULL"),
            HexOf(png));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_refs WHERE namespace = 'plain' AND sha256 = '" +
                       sha + "' AND digest IS NULL"),
            "1");
  EXPECT_NE(
      pg_->Query("SELECT string_agg(value, ',') FROM index_meta WHERE namespace = 'plain' AND "
                 "key LIKE 'setting:%'")
          .find("plainsetting"),
      std::string::npos);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM index_meta WHERE namespace = 'plain' AND "
                       "key = 'encryption:envelope'"),
            "0");
}

}  // namespace
}  // namespace sessiondb::testing
