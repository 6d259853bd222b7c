// Sessions: creation, ids, titles and previews, listing, archive, delete,
// purge, the active session, and opening stores of other versions.
#include <fstream>
#include <set>

#include "core/text_rules.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class SessionStore : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(SessionStore);
class EmbeddedSessionStore : public EmbeddedStoreTest {};

TEST_F(EmbeddedSessionStore, OpeningCreatesADirectoryWithADatabaseAndABlobFolder) {
  EXPECT_TRUE(std::filesystem::exists(StoreDir() + "/sessiondb.db"));
  EXPECT_TRUE(std::filesystem::is_directory(StoreDir() + "/blobs/sha256"));
}

TEST_P(SessionStore, AStoreWrittenByANewerVersionIsRefusedWithAClearError) {
  std::string id = NewSessionId();
  store_.reset();
  SetStoredSchemaVersion(99);

  auto opened = Store::Open(Location(), Options());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.error().message().find("schema version 99"), std::string::npos);
  EXPECT_NE(opened.error().message().find("Upgrade sessiondb"), std::string::npos);
}

TEST_P(SessionStore, ReopeningKeepsEverything) {
  std::string id = NewSessionId("keep-me");
  AppendText(id, "hello there");
  Reopen();
  auto s = store_->GetSession(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->message_count, 1);
  EXPECT_EQ(s->title, "hello there");
}

TEST_F(EmbeddedSessionStore, ANonEmptyDirectoryThatIsNotAStoreIsRefused) {
  std::string other = dir_.Sub("other");
  std::filesystem::create_directories(other);
  { std::ofstream(other + "/notes.txt") << "mine"; }
  auto opened = Store::Open(other, Options());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::filesystem::exists(other + "/notes.txt"));
  EXPECT_FALSE(std::filesystem::exists(other + "/sessiondb.db"));
}

TEST_F(EmbeddedSessionStore, AMissingStoreIsNotCreatedWhenAskedNotTo) {
  StoreOptions options = Options();
  options.create_if_missing = false;
  auto opened = Store::Open(dir_.Sub("nowhere"), options);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("nowhere")));
}

TEST_P(SessionStore, DefaultIdsAreUuidV7) {
  auto s = store_->CreateSession({});
  ASSERT_TRUE(s);
  ASSERT_EQ(s->id.size(), 36u);
  EXPECT_EQ(s->id[14], '7');
  EXPECT_EQ(s->title, "New Session");
  EXPECT_EQ(s->message_count, 0);
  EXPECT_EQ(s->metadata_json, "{}");
}

TEST_P(SessionStore, ACallerGivenIdIsKeptAndCannotBeTakenTwice) {
  EXPECT_EQ(NewSessionId("my-chat_1.2"), "my-chat_1.2");
  auto again = store_->CreateSession(NewSession{.id = "my-chat_1.2"});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
}

TEST_P(SessionStore, SessionIdsWithPathCharactersAreRefused) {
  for (std::string bad : std::vector<std::string>{"../etc", "a/b", "a\\b", ".hidden", "has space",
                                                  "nul\x01", std::string(129, 'a')}) {
    auto s = store_->CreateSession(NewSession{.id = bad});
    ASSERT_FALSE(s) << bad;
    EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument) << bad;
  }
  auto page = store_->ListSessions({.archived = ArchiveFilter::kAll});
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->sessions.empty());
}

TEST_P(SessionStore, MetadataMustBeAJsonObject) {
  auto s = store_->CreateSession(NewSession{.metadata_json = "[1,2]"});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code(), StatusCode::kInvalidArgument);
  auto t = store_->CreateSession(NewSession{.metadata_json = "{not json"});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code(), StatusCode::kInvalidArgument);
}

TEST_P(SessionStore, TheTitleComesFromTheFirstMessageAndNeverChangesAfterwards) {
  std::string id = NewSessionId();
  AppendText(id, "  You are a helpful\n assistant  ", Role::kSystem);
  AppendText(id, "A completely different question");
  auto s = store_->GetSession(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->title, "You are a helpful assistant");
  EXPECT_EQ(s->preview, "A completely different question");
}

TEST_P(SessionStore, RenameSetsTheTitleAndLaterMessagesKeepIt) {
  std::string id = NewSessionId();
  ASSERT_TRUE(store_->RenameSession(id, "Bug triage").ok());
  AppendText(id, "first message");
  auto s = store_->GetSession(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->title, "Bug triage");
  EXPECT_EQ(store_->RenameSession(id, "  ").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->RenameSession("nope", "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetSession(id)->title, "Bug triage");
}

TEST(TitleRules, ExactlyFiftyCharactersIsKeptWhole) {
  std::string fifty(50, 'x');
  EXPECT_EQ(MakeTitle(fifty), fifty);
}

TEST(TitleRules, LongTitlesAreCutAtAWordBoundaryWithAnEllipsis) {
  std::string text = "The quick brown fox jumps over the lazy dog and keeps running far away";
  std::string title = MakeTitle(text);
  EXPECT_EQ(title, "The quick brown fox jumps over the lazy dog and…");
  EXPECT_LE(CountCodePoints(title), 50u);
}

TEST(TitleRules, AWordWithNoSpaceIsCutAtTheLimit) {
  std::string title = MakeTitle(std::string(80, 'y'));
  EXPECT_EQ(title, std::string(49, 'y') + "…");
  EXPECT_EQ(CountCodePoints(title), 50u);
}

TEST(TitleRules, MultibyteTextIsNeverCutInsideACharacter) {
  // 60 three-byte characters, no spaces.
  std::string text;
  for (int i = 0; i < 60; ++i) text += "\xE6\x97\xA5";  // 日
  std::string title = MakeTitle(text);
  EXPECT_TRUE(IsValidUtf8(title));
  EXPECT_EQ(CountCodePoints(title), 50u);
  // Emoji (4 bytes) mixed with spaces.
  std::string emoji;
  for (int i = 0; i < 30; ++i) emoji += "\xF0\x9F\x98\x80 ";  // 😀
  std::string t2 = MakeTitle(emoji);
  EXPECT_TRUE(IsValidUtf8(t2));
  EXPECT_LE(CountCodePoints(t2), 50u);
}

TEST(TitleRules, EmptyTextGivesNewSession) {
  EXPECT_EQ(MakeTitle(""), "New Session");
  EXPECT_EQ(MakeTitle(" \n\t "), "New Session");
}

TEST(PreviewRules, PreviewIsAHundredCharactersPlusEllipsis) {
  std::string exactly(100, 'p');
  EXPECT_EQ(MakePreview(exactly), exactly);
  std::string longer;
  for (int i = 0; i < 120; ++i) longer += "\xC3\xA9";  // é, two bytes
  std::string preview = MakePreview(longer);
  EXPECT_TRUE(IsValidUtf8(preview));
  EXPECT_EQ(CountCodePoints(preview), 101u);
  EXPECT_EQ(preview.substr(preview.size() - 3), "…");
}

TEST_P(SessionStore, ThePreviewIsTheFirstUserMessage) {
  std::string id = NewSessionId();
  AppendText(id, "system prompt", Role::kSystem);
  AppendText(id, "assistant greeting", Role::kAssistant);
  AppendText(id, "the user's question");
  AppendText(id, "a later question");
  EXPECT_EQ(store_->GetSession(id)->preview, "the user's question");
}

TEST_P(SessionStore, ListingIsByLastUpdateAndTheCursorVisitsEverySessionOnce) {
  std::vector<std::string> ids;
  for (int i = 0; i < 25; ++i) {
    ids.push_back(NewSessionId("s" + std::to_string(i)));
    now_ms_ += 10;
  }
  // Touch s3 last: it must come first.
  AppendText("s3", "bump");
  std::vector<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    auto page = store_->ListSessions({.limit = 7, .cursor = cursor});
    ASSERT_TRUE(page) << page.error().ToString();
    for (auto& s : page->sessions) seen.push_back(s.id);
    cursor = page->next_cursor;
    ++pages;
  } while (!cursor.empty());
  EXPECT_EQ(pages, 4);
  ASSERT_EQ(seen.size(), 25u);
  EXPECT_EQ(seen[0], "s3");
  EXPECT_EQ(seen[1], "s24");
  EXPECT_EQ(seen.back(), "s0");
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 25u);
}

TEST_P(SessionStore, AForgedCursorIsRefused) {
  auto page = store_->ListSessions({.cursor = "x:../y"});
  ASSERT_FALSE(page);
  EXPECT_EQ(page.error().code(), StatusCode::kInvalidArgument);
  auto limit = store_->ListSessions({.limit = 0});
  ASSERT_FALSE(limit);
  EXPECT_NE(limit.error().message().find("1 to 1000"), std::string::npos);
}

TEST_P(SessionStore, ArchiveFiltersAndMetadataFiltersSelectSessions) {
  ASSERT_TRUE(store_->CreateSession({.id = "a", .metadata_json = R"({"project":"/src/app"})"}));
  ASSERT_TRUE(store_->CreateSession({.id = "b", .metadata_json = R"({"project":"/src/lib"})"}));
  ASSERT_TRUE(store_->CreateSession({.id = "c", .metadata_json = R"({"project":"/src/app"})"}));
  ASSERT_TRUE(store_->SetArchived("c", true).ok());

  auto ids = [&](ListOptions o) {
    std::vector<std::string> out;
    auto page = store_->ListSessions(o);
    EXPECT_TRUE(page) << page.error().ToString();
    for (auto& s : page->sessions) out.push_back(s.id);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(ids({}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ids({.archived = ArchiveFilter::kArchived}), (std::vector<std::string>{"c"}));
  EXPECT_EQ(ids({.archived = ArchiveFilter::kAll}), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(ids({.archived = ArchiveFilter::kAll,
                 .metadata_key = "project",
                 .metadata_value = "/src/app"}),
            (std::vector<std::string>{"a", "c"}));
  ASSERT_TRUE(store_->SetArchived("c", false).ok());
  EXPECT_EQ(ids({}), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(store_->SetArchived("zz", true).code(), StatusCode::kNotFound);
}

TEST_P(SessionStore, DeleteRemovesTheSessionAndItsLogForGood) {
  std::string id = NewSessionId();
  AppendText(id, "secret");
  ASSERT_TRUE(store_->SetActiveSession(id).ok());
  ASSERT_TRUE(store_->DeleteSession(id).ok());
  EXPECT_EQ(store_->GetSession(id).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadMessages(id).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->GetActiveSession(), std::nullopt);
  EXPECT_EQ(store_->DeleteSession(id).code(), StatusCode::kNotFound);
  // The id can be used again, starting from seq 1.
  NewSessionId(id);
  EXPECT_EQ(AppendText(id, "fresh").seq, 1);
}

TEST_P(SessionStore, PurgeDeletesOnlyArchivedSessionsOlderThanTheDate) {
  NewSessionId("old-archived");
  NewSessionId("old-active");
  ASSERT_TRUE(store_->SetArchived("old-archived", true).ok());
  now_ms_ += 40LL * 24 * 3600 * 1000;
  NewSessionId("new-archived");
  ASSERT_TRUE(store_->SetArchived("new-archived", true).ok());

  auto purged = store_->PurgeArchived(now_ms_ - 30LL * 24 * 3600 * 1000);
  ASSERT_TRUE(purged);
  EXPECT_EQ(*purged, 1);
  EXPECT_FALSE(store_->GetSession("old-archived"));
  EXPECT_TRUE(store_->GetSession("old-active"));
  EXPECT_TRUE(store_->GetSession("new-archived"));
}

TEST_P(SessionStore, TheActiveSessionIsRememberedAcrossReopens) {
  EXPECT_EQ(*store_->GetActiveSession(), std::nullopt);
  std::string id = NewSessionId();
  ASSERT_TRUE(store_->SetActiveSession(id).ok());
  Reopen();
  EXPECT_EQ(*store_->GetActiveSession(), id);
  EXPECT_EQ(store_->SetActiveSession("missing").code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->GetActiveSession(), id);
  ASSERT_TRUE(store_->SetActiveSession("").ok());
  EXPECT_EQ(*store_->GetActiveSession(), std::nullopt);
}

TEST_P(SessionStore, StatsCountSessionsMessagesAndBytes) {
  std::string a = NewSessionId();
  std::string b = NewSessionId();
  AppendText(a, "one");
  AppendText(a, "two");
  AppendText(b, "three");
  ASSERT_TRUE(store_->SetArchived(b, true).ok());
  auto stats = store_->Stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->sessions, 2);
  EXPECT_EQ(stats->archived_sessions, 1);
  EXPECT_EQ(stats->messages, 3);
  EXPECT_GT(stats->database_bytes, 0);
  EXPECT_GE(stats->total_bytes, stats->database_bytes);
}

}  // namespace
}  // namespace sessiondb::testing
