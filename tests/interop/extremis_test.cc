// Extremis import: a sessions/ folder as Extremis writes it (index.json and
// <UUID>.json files with ISO-8601 dates), the legacy index keys, titles,
// archive flags, the active session, a summary as a compaction; re-import;
// corrupt files.
#include <fstream>
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "projection/window_checks.h"
#include "sessiondb/interop.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

constexpr char kFirst[] = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F";
constexpr char kSecond[] = "0B3C5D7E-1111-4222-8333-944455556666";
constexpr char kUnlisted[] = "7D444840-9DC0-11D1-B245-5FFDCE74FAD2";

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

json Msg(const std::string& id, const std::string& role, const std::string& content,
         const std::string& ts) {
  return {{"id", id}, {"role", role}, {"content", content}, {"timestamp", ts}};
}

struct ExtremisFixture {
  fs::path dir;
  explicit ExtremisFixture(const fs::path& root) : dir(root / "Extremis" / "sessions") {}

  json First() const {
    json user = Msg("11111111-0000-4000-8000-000000000001", "user", "Summarise this email thread",
                    "2025-01-15T10:30:00Z");
    user["contextData"] = blob::Base64Encode(R"({"source":{"applicationName":"Mail"}})");
    return {{"id", kFirst},
            {"version", 1},
            {"messages",
             {user,
              Msg("11111111-0000-4000-8000-000000000002", "assistant",
                  "The thread agrees on Friday.", "2025-01-15T10:30:05Z"),
              Msg("11111111-0000-4000-8000-000000000003", "user", "Draft a reply",
                  "2025-01-15T10:31:00Z"),
              Msg("11111111-0000-4000-8000-000000000004", "assistant", "Here is a draft.",
                  "2025-01-15T10:31:04Z")}},
            {"initialRequest", "Summarise this email thread"},
            {"maxMessages", 20},
            {"createdAt", "2025-01-15T10:30:00Z"},
            {"updatedAt", "2025-01-15T10:31:04Z"},
            {"title", "Email thread summary"},
            {"isArchived", false},
            {"summary",
             {{"content", "The user asked for a summary; Friday was agreed."},
              {"coversMessageCount", 2},
              {"createdAt", "2025-01-15T10:30:30Z"},
              {"modelUsed", "gpt-4o-mini"}}}};
  }

  json Second() const {
    return {{"id", kSecond},
            {"version", 1},
            {"messages",
             {Msg("22222222-0000-4000-8000-000000000001", "user", "Translate to French: hello",
                  "2024-12-01T08:00:00.250Z"),
              Msg("22222222-0000-4000-8000-000000000002", "assistant", "Bonjour",
                  "2024-12-01T08:00:01Z")}},
            {"maxMessages", 20},
            {"createdAt", "2024-12-01T08:00:00Z"},
            {"updatedAt", "2024-12-01T08:00:01Z"},
            {"isArchived", true}};
  }

  // Writes the index with today's keys, or the legacy ones.
  void Write(bool legacy_keys) const {
    json entries = json::array();
    entries.push_back({{"id", kFirst},
                       {"title", "Email thread summary"},
                       {"createdAt", "2025-01-15T10:30:00Z"},
                       {legacy_keys ? "lastModifiedAt" : "updatedAt", "2025-01-15T10:31:04Z"},
                       {"messageCount", 4},
                       {"isArchived", false}});
    entries.push_back({{"id", kSecond},
                       {"title", "French"},
                       {"createdAt", "2024-12-01T08:00:00Z"},
                       {"updatedAt", "2024-12-01T08:00:01Z"},
                       {"messageCount", 2},
                       {"isArchived", true}});
    json index = {{"version", 1}};
    index[legacy_keys ? "conversations" : "sessions"] = entries;
    index[legacy_keys ? "activeConversationId" : "activeSessionId"] = kFirst;
    index["lastUpdated"] = "2025-01-15T10:31:04Z";
    WriteFile(dir / "index.json", index.dump(2));
    WriteFile(dir / (std::string(kFirst) + ".json"), First().dump(2));
    WriteFile(dir / (std::string(kSecond) + ".json"), Second().dump(2));
  }
};

std::unique_ptr<Store> OpenStore(const TempDir& tmp) {
  auto store = Store::Open(tmp.Sub("store"));
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  return std::move(*store);
}

bool HasSkip(const ImportReport& r, const std::string& where, const std::string& words) {
  for (const SkippedRecord& s : r.skipped) {
    if (s.where == where && s.reason.find(words) != std::string::npos) return true;
  }
  return false;
}

void ExpectImported(Store& store) {
  auto first = store.GetSession(kFirst);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->title, "Email thread summary");
  EXPECT_FALSE(first->archived);
  EXPECT_EQ(first->created_ms, 1736937000000);
  EXPECT_EQ(first->message_count, 4);
  json meta = json::parse(first->metadata_json);
  EXPECT_EQ(meta["initial_request"], "Summarise this email thread");
  EXPECT_EQ(meta["max_messages"], 20);

  auto events = store.ReadEvents(kFirst);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 5u);
  EXPECT_EQ((*events)[0].message.role, Role::kUser);
  EXPECT_EQ((*events)[0].message.Text(), "Summarise this email thread");
  EXPECT_EQ((*events)[0].ts_ms, 1736937000000);
  EXPECT_EQ(json::parse((*events)[0].message.metadata_json)["context"]["source"]["applicationName"],
            "Mail");
  EXPECT_EQ((*events)[1].message.role, Role::kAssistant);
  // The summary covers the first two messages and sits right after them.
  const Event& c = (*events)[2];
  ASSERT_EQ(c.type, EventType::kCompaction);
  EXPECT_EQ(c.compaction.from_seq, 1);
  EXPECT_EQ(c.compaction.to_seq, 2);
  EXPECT_EQ(c.compaction.summary, "The user asked for a summary; Friday was agreed.");
  EXPECT_EQ(c.compaction.model, "gpt-4o-mini");
  EXPECT_EQ(c.ts_ms, 1736937030000);
  EXPECT_EQ((*events)[3].message.Text(), "Draft a reply");
  EXPECT_EQ((*events)[4].message.Text(), "Here is a draft.");

  auto second = store.GetSession(kSecond);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->archived);
  EXPECT_EQ(second->title, "French");  // from the index: the file has none
  auto msgs = store.ReadMessages(kSecond);
  ASSERT_TRUE(msgs.has_value());
  ASSERT_EQ(msgs->size(), 2u);
  EXPECT_EQ((*msgs)[0].ts_ms, 1733040000250);
  EXPECT_EQ((*msgs)[1].Text(), "Bonjour");

  auto active = store.GetActiveSession();
  ASSERT_TRUE(active.has_value());
  EXPECT_EQ(active->value_or(""), kFirst);
}

TEST(ExtremisImport, ImportsTitlesArchiveFlagsTheActiveSessionAndSummaries) {
  TempDir tmp;
  ExtremisFixture fx(tmp.path());
  fx.Write(/*legacy_keys=*/false);
  EXPECT_EQ(DetectImportFormat(fx.dir.string()).value_or(ImportFormat::kSnapshot),
            ImportFormat::kExtremis);
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->format, ImportFormat::kExtremis);
  EXPECT_EQ(report->sessions_added, 2);
  EXPECT_EQ(report->messages_added, 6);
  EXPECT_EQ(report->records_skipped, 0);
  ExpectImported(*store);
}

TEST(ExtremisImport, EveryWindowOfTheSampleReplays) {
  TempDir tmp;
  ExtremisFixture fx(tmp.path());
  fx.Write(/*legacy_keys=*/false);
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.dir.string(), {.format = ImportFormat::kExtremis}));
  testing::ExpectEveryWindowReplays(*store, "extremis sample");
}

TEST(ExtremisImport, ReadsTheLegacyIndexKeys) {
  TempDir tmp;
  ExtremisFixture fx(tmp.path());
  fx.Write(/*legacy_keys=*/true);
  EXPECT_EQ(DetectImportFormat((fx.dir / "index.json").string()).value_or(ImportFormat::kSnapshot),
            ImportFormat::kExtremis);
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.dir.string(), {}).has_value());
  ExpectImported(*store);
}

TEST(ExtremisImport, ReimportingAddsNothing) {
  TempDir tmp;
  ExtremisFixture fx(tmp.path());
  fx.Write(false);
  auto store = OpenStore(tmp);
  ASSERT_TRUE(ImportPath(*store, fx.dir.string(), {}).has_value());
  auto before = store->GetSession(kFirst);
  auto again = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->sessions_added, 0);
  EXPECT_EQ(again->sessions_unchanged, 2);
  EXPECT_EQ(again->messages_added, 0);
  auto after = store->GetSession(kFirst);
  EXPECT_EQ(after->last_seq, before->last_seq);
  EXPECT_EQ(after->updated_ms, before->updated_ms);
  ExpectImported(*store);
}

TEST(ExtremisImport, CorruptFilesAreSkippedWithReasonsAndTheRestImports) {
  TempDir tmp;
  ExtremisFixture fx(tmp.path());
  fx.Write(false);
  // The index lists a session whose file is gone; a file the index does not
  // list is truncated mid-write; a message has a role Extremis never writes;
  // a summary covers more messages than the session holds.
  json index = json::parse(std::ifstream(fx.dir / "index.json"));
  index["sessions"].push_back({{"id", "AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA"}, {"title", "gone"}});
  WriteFile(fx.dir / "index.json", index.dump());
  const std::string whole = fx.Second().dump();
  WriteFile(fx.dir / (std::string(kUnlisted) + ".json"), whole.substr(0, whole.size() / 2));
  json second = fx.Second();
  second["messages"].push_back(
      Msg("22222222-0000-4000-8000-000000000003", "wizard", "?", "2024-12-01T08:00:02Z"));
  second["summary"] = {{"content", "More than there is"},
                       {"coversMessageCount", 5},
                       {"createdAt", "2024-12-01T08:00:03Z"}};
  WriteFile(fx.dir / (std::string(kSecond) + ".json"), second.dump());

  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 2);
  EXPECT_TRUE(HasSkip(*report, "index.json", "is missing"));
  EXPECT_TRUE(HasSkip(*report, std::string(kUnlisted) + ".json", "not a complete JSON"));
  EXPECT_TRUE(HasSkip(*report, std::string(kSecond) + ".json:messages[2]", "wizard"));
  EXPECT_TRUE(HasSkip(*report, std::string(kSecond) + ".json:summary", "covers 5"));
  EXPECT_EQ(report->records_skipped, 4);
  EXPECT_FALSE(store->GetSession(kUnlisted).has_value());
  ExpectImported(*store);
}

TEST(ExtremisImport, AByteThatIsNotUtf8BecomesAReplacementCharacterNotALostSession) {
  TempDir tmp;
  ExtremisFixture fx(tmp.path());
  fx.Write(false);
  json second = fx.Second();
  second["messages"][1]["content"] = "Bonjour, caf@";
  std::string text = second.dump();
  text.replace(text.find('@'), 1, "\xE9");  // Latin-1 é: not UTF-8
  WriteFile(fx.dir / (std::string(kSecond) + ".json"), text);
  auto store = OpenStore(tmp);
  auto report = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 2);
  EXPECT_EQ(report->records_skipped, 0)
      << (report->skipped.empty() ? "" : report->skipped[0].reason);
  auto msgs = store->ReadMessages(kSecond);
  ASSERT_TRUE(msgs.has_value());
  ASSERT_EQ(msgs->size(), 2u);
  EXPECT_EQ((*msgs)[0].Text(), "Translate to French: hello");
  EXPECT_EQ((*msgs)[1].Text(), "Bonjour, caf\uFFFD");
  auto again = ImportPath(*store, fx.dir.string(), {});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->sessions_added, 0);
  EXPECT_EQ(again->messages_added, 0);
  EXPECT_EQ(store->ReadMessages(kSecond)->size(), 2u);
}

}  // namespace
}  // namespace sessiondb
