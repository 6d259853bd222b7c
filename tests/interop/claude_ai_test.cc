// The claude-ai importer on a realistic export written by the test: a zip
// with conversations.json; text, thinking, tool use and results,
// attachments with extracted text, an edited prompt (a side branch); then
// corrupt conversations.
#include <zip.h>

#include <nlohmann/json.hpp>

#include "interop/import_sink.h"
#include "interop/interop_test_support.h"
#include "projection/window_checks.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

constexpr const char* kConv = "28f4b7c1-1d2e-4f3a-9b8c-7d6e5f4a3b2c";
constexpr const char* kRoot = "00000000-0000-4000-8000-000000000000";

std::string M(int n) { return "5a5a5a5a-0000-4000-8000-00000000000" + std::to_string(n); }

json Msg(int n, const char* parent, const std::string& sender, const std::string& ts, json content,
         const std::string& text) {
  return {{"uuid", M(n)},
          {"text", text},
          {"content", std::move(content)},
          {"sender", sender},
          {"index", n},
          {"created_at", ts},
          {"updated_at", ts},
          {"truncated", false},
          {"attachments", json::array()},
          {"files", json::array()},
          {"parent_message_uuid", parent}};
}

json TextBlock(const std::string& t) {
  return {
      {"type", "text"}, {"text", t}, {"start_timestamp", nullptr}, {"citations", json::array()}};
}

json Conversation() {
  json m = json::array();
  json first =
      Msg(1, kRoot, "human", "2025-03-01T09:00:00.000000Z",
          json::array({TextBlock("Summarise the attached notes")}), "Summarise the attached notes");
  first["attachments"] = json::array({{{"file_name", "notes.txt"},
                                       {"file_size", 24},
                                       {"file_type", "txt"},
                                       {"extracted_content", "Ship v2 on Friday."}}});
  first["files"] = json::array({{{"file_name", "diagram.png"}}});
  m.push_back(first);
  std::string s2 = M(1);
  m.push_back(Msg(2, s2.c_str(), "assistant", "2025-03-01T09:00:05.000000Z",
                  json::array({{{"type", "thinking"}, {"thinking", "Short notes; one line."}},
                               {{"type", "tool_use"},
                                {"id", "toolu_9"},
                                {"name", "web_search"},
                                {"input", {{"query", "v2 release"}}}},
                               {{"type", "tool_result"},
                                {"tool_use_id", "toolu_9"},
                                {"name", "web_search"},
                                {"content", json::array({TextBlock("no results")})},
                                {"is_error", false}},
                               TextBlock("The notes say v2 ships on Friday.")}),
                  "The notes say v2 ships on Friday."));
  std::string s3 = M(2);
  // An edit of the follow-up: message 3 is the abandoned version, 4 and 5 the kept one.
  m.push_back(Msg(3, s3.c_str(), "human", "2025-03-01T09:01:00.000000Z",
                  json::array({TextBlock("Which Friday?")}), "Which Friday?"));
  m.push_back(Msg(4, s3.c_str(), "human", "2025-03-01T09:02:00.000000Z",
                  json::array({TextBlock("Thanks!")}), "Thanks!"));
  std::string s5 = M(4);
  m.push_back(Msg(5, s5.c_str(), "assistant", "2025-03-01T09:02:03.000000Z", json::array(),
                  "You're welcome."));
  return {{"uuid", kConv},
          {"name", "Release notes"},
          {"summary", ""},
          {"created_at", "2025-03-01T09:00:00.000000Z"},
          {"updated_at", "2025-03-01T09:02:03.000000Z"},
          {"account", {{"uuid", "acc"}}},
          {"chat_messages", m}};
}

void WriteZip(const std::string& path, const std::string& name, const std::string& bytes) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  void* copy = malloc(bytes.size());
  memcpy(copy, bytes.data(), bytes.size());
  ASSERT_GE(zip_file_add(z, name.c_str(), zip_source_buffer(z, copy, bytes.size(), 1), 0), 0);
  ASSERT_EQ(zip_close(z), 0);
}

class ClaudeAiImport : public ::testing::Test {
 protected:
  void SetUp() override {
    zip_ = dir_.Sub("data-2025-03-02.zip");
    WriteZip(zip_, "conversations.json", json::array({Conversation()}).dump());
    store_ = OpenTestStore(dir_);
  }
  TempDir dir_;
  std::string zip_;
  std::unique_ptr<Store> store_;
};

TEST_F(ClaudeAiImport, DetectsTheZip) {
  EXPECT_EQ(*DetectImportFormat(zip_), ImportFormat::kClaudeAi);
}

TEST_F(ClaudeAiImport, EveryWindowOfTheSampleReplays) {
  MustImport(*store_, zip_, "claude-ai");
  ExpectEveryWindowReplays(*store_, "claude-ai sample");
}

TEST_F(ClaudeAiImport, ConversationArrivesFieldByField) {
  ImportReport r = MustImport(*store_, zip_, "");
  EXPECT_EQ(r.format, ImportFormat::kClaudeAi);
  EXPECT_EQ(r.sessions_added, 2);
  EXPECT_EQ(r.records_skipped, 0);
  auto s = store_->GetSession(kConv);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->title, "Release notes");
  EXPECT_EQ(s->created_ms, *ParseIsoTime("2025-03-01T09:00:00Z"));
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_EQ(ev.size(), 4u);
  const Message& u = ev[0].message;
  EXPECT_EQ(u.role, Role::kUser);
  ASSERT_EQ(u.parts.size(), 2u);
  EXPECT_EQ(u.parts[0].text, "Summarise the attached notes");
  EXPECT_NE(u.parts[1].text.find("Ship v2 on Friday."), std::string::npos);
  json meta = json::parse(u.metadata_json);
  EXPECT_EQ(meta["files"], json::array({"notes.txt", "diagram.png"}));
  const Message& a = ev[1].message;
  EXPECT_EQ(a.role, Role::kAssistant);
  ASSERT_EQ(a.parts.size(), 4u);
  EXPECT_EQ(a.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(a.parts[1].type, PartType::kToolCall);
  EXPECT_EQ(a.parts[1].tool_name, "web_search");
  EXPECT_EQ(json::parse(a.parts[1].arguments_json)["query"], "v2 release");
  EXPECT_EQ(a.parts[2].type, PartType::kToolResult);
  EXPECT_EQ(a.parts[2].tool_call_id, "toolu_9");
  EXPECT_EQ(a.parts[2].text, "no results");
  EXPECT_EQ(a.parts[3].text, "The notes say v2 ships on Friday.");
  EXPECT_EQ(ev[2].message.Text(), "Thanks!");
  EXPECT_EQ(ev[3].message.Text(), "You're welcome.");  // from `text` when content is empty
  EXPECT_EQ(ev[3].ts_ms, *ParseIsoTime("2025-03-01T09:02:03Z"));
}

TEST_F(ClaudeAiImport, AnEditedPromptIsASessionOfItsOwn) {
  MustImport(*store_, zip_, "claude-ai");
  std::string branch;
  for (const Session& s : AllSessions(*store_)) {
    if (s.id != kConv) branch = s.id;
  }
  ASSERT_FALSE(branch.empty());
  json meta = json::parse(store_->GetSession(branch)->metadata_json);
  EXPECT_EQ(meta["forked_from"], kConv);
  EXPECT_EQ(meta["fork_message"], M(2));
  std::vector<Event> ev = EventsOf(*store_, branch);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].message.Text(), "Which Friday?");
}

TEST_F(ClaudeAiImport, ReimportAddsNothing) {
  MustImport(*store_, zip_, "claude-ai");
  ImportReport again = MustImport(*store_, zip_, "claude-ai");
  EXPECT_EQ(again.sessions_unchanged, 2);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(EventsOf(*store_, kConv).size(), 4u);
}

TEST_F(ClaudeAiImport, CorruptConversationsAreSkippedAndTheRestImports) {
  const std::string file = dir_.Sub("conversations.json");
  std::string text = "[";
  text += Conversation().dump();
  text += ",{\"uuid\": \"x\", \"chat_messages\": [nope]},";
  text += "{\"uuid\": \"y\", \"chat_messages\": [{\"uuid\"";
  WriteFile(file, text);
  EXPECT_EQ(*DetectImportFormat(file), ImportFormat::kClaudeAi);
  ImportReport r = MustImport(*store_, file, "claude-ai");
  EXPECT_TRUE(SkippedFor(r, "not a valid JSON object"));
  EXPECT_TRUE(SkippedFor(r, "cut short"));
  EXPECT_EQ(r.records_skipped, 2);
  EXPECT_EQ(AllSessions(*store_).size(), 2u);
  EXPECT_EQ(EventsOf(*store_, kConv).size(), 4u);
}

// One byte that is not UTF-8 (a message pasted from a Latin-1 file) cost
// the whole conversation; it is now U+FFFD and everything else arrives.
TEST_F(ClaudeAiImport, AnInvalidUtf8ByteIsReplacedAndTheConversationImports) {
  std::string text = json::array({Conversation()}).dump();
  for (size_t at = text.find("Thanks!"); at != std::string::npos; at = text.find("Thanks!", at)) {
    text.replace(at + 6, 1, "\xE9");  // "Thanks\xE9", Latin-1
  }
  WriteFile(dir_.Sub("conversations.json"), text);
  ImportReport r = MustImport(*store_, dir_.Sub("conversations.json"), "claude-ai");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  EXPECT_EQ(r.sessions_added, 2);
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[2].message.Text(), "Thanks\xEF\xBF\xBD");
}

// Claude.ai shows a conversation's `name`; an export (or a tool rewriting
// one) that gives only a `title` named the session after its first message.
TEST_F(ClaudeAiImport, ATitleNamesTheSessionWhenThereIsNoName) {
  json c = Conversation();
  c["name"] = "";
  c["title"] = "Quarterly release plan";
  WriteFile(dir_.Sub("conversations.json"), json::array({c}).dump());
  MustImport(*store_, dir_.Sub("conversations.json"), "claude-ai");
  auto s = store_->GetSession(kConv);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->title, "Quarterly release plan");
}

// An uploaded file listed both as an attachment (with its text) and as a
// file was named twice in the message's metadata.
TEST_F(ClaudeAiImport, AFileListedAsAttachmentAndAsFileIsNamedOnce) {
  json c = Conversation();
  json& first = c["chat_messages"][0];
  first["files"] = json::array(
      {{{"file_name", "notes.txt"}, {"file_uuid", "f1"}}, {{"file_name", "diagram.png"}}});
  WriteFile(dir_.Sub("conversations.json"), json::array({c}).dump());
  MustImport(*store_, dir_.Sub("conversations.json"), "claude-ai");
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(json::parse(ev[0].message.metadata_json)["files"],
            json::array({"notes.txt", "diagram.png"}));
}

// A thinking block whose `thinking` is empty but whose summaries hold the
// thought kept an empty reasoning part: the summaries are the reasoning.
TEST_F(ClaudeAiImport, AThinkingBlockWithOnlySummariesKeepsThem) {
  json c = Conversation();
  c["chat_messages"][1]["content"][0] = {
      {"type", "thinking"},
      {"thinking", ""},
      {"summaries", json::array({{{"summary", "Reading the notes."}},
                                 {{"summary", "One line: v2 on Friday."}}})},
      {"cut_off", false}};
  WriteFile(dir_.Sub("conversations.json"), json::array({c}).dump());
  MustImport(*store_, dir_.Sub("conversations.json"), "claude-ai");
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_GE(ev.size(), 2u);
  ASSERT_EQ(ev[1].message.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(ev[1].message.parts[0].text, "Reading the notes.\nOne line: v2 on Friday.");
}

}  // namespace
}  // namespace sessiondb::testing
