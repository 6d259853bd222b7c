// The chatgpt importer on a realistic export written by the test: a zip with
// conversations.json and an uploaded image, a mapping tree with a
// regenerated answer (a side branch), a code tool call and its output; then
// a folder export with corrupt conversations.
#include <zip.h>

#include <nlohmann/json.hpp>

#include "interop/interop_test_support.h"
#include "projection/window_checks.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

constexpr const char* kConv = "67f0c1d2-aaaa-8000-9000-0123456789ab";

json Node(const std::string& id, json message, const char* parent, json children) {
  return {{"id", id},
          {"message", std::move(message)},
          {"parent", parent ? json(parent) : json(nullptr)},
          {"children", std::move(children)}};
}

json Msg(const std::string& id, const std::string& role, double t, json content,
         const std::string& recipient = "all", const std::string& name = "") {
  json author = {{"role", role},
                 {"name", name.empty() ? json(nullptr) : json(name)},
                 {"metadata", json::object()}};
  return {{"id", id},
          {"author", author},
          {"create_time", t},
          {"update_time", nullptr},
          {"content", std::move(content)},
          {"status", "finished_successfully"},
          {"end_turn", true},
          {"weight", 1.0},
          {"metadata", {{"model_slug", "gpt-4o"}}},
          {"recipient", recipient}};
}

json Text(const std::string& t) { return {{"content_type", "text"}, {"parts", {t}}}; }

json Conversation() {
  json m = json::object();
  m["root"] = Node("root", nullptr, nullptr, {"sys"});
  json sys = Msg("sys", "system", 1717000000.0, Text(""));
  sys["metadata"]["is_visually_hidden_from_conversation"] = true;
  m["sys"] = Node("sys", sys, "root", {"u1"});
  m["u1"] = Node("u1",
                 Msg("u1", "user", 1717000001.5,
                     {{"content_type", "multimodal_text"},
                      {"parts",
                       {{{"content_type", "image_asset_pointer"},
                         {"asset_pointer", "file-service://file-Abc123"},
                         {"size_bytes", 200},
                         {"width", 5},
                         {"height", 4}},
                        "What is in this picture?"}}}),
                 "sys", {"a1", "a1b"});
  m["a1"] =
      Node("a1", Msg("a1", "assistant", 1717000003.0, Text("A cat on a sofa.")), "u1", {"u2"});
  m["a1b"] =
      Node("a1b", Msg("a1b", "assistant", 1717000004.0, Text("A kitten.")), "u1", json::array());
  m["u2"] =
      Node("u2", Msg("u2", "user", 1717000010.0, Text("Count the legs in Python")), "a1", {"c1"});
  m["c1"] =
      Node("c1",
           Msg("c1", "assistant", 1717000011.0,
               {{"content_type", "code"}, {"language", "unknown"}, {"text", "print(4)"}}, "python"),
           "u2", {"t1"});
  m["t1"] = Node("t1",
                 Msg("t1", "tool", 1717000012.0,
                     {{"content_type", "execution_output"}, {"text", "4"}}, "all", "python"),
                 "c1", {"a2"});
  m["a2"] =
      Node("a2", Msg("a2", "assistant", 1717000013.0, Text("It has 4 legs.")), "t1", json::array());
  return {{"title", "Cat picture"},
          {"create_time", 1717000000.25},
          {"update_time", 1717000013.0},
          {"mapping", m},
          {"moderation_results", json::array()},
          {"current_node", "a2"},
          {"conversation_id", kConv},
          {"id", kConv},
          {"default_model_slug", "gpt-4o"}};
}

void WriteZip(const std::string& path,
              const std::vector<std::pair<std::string, std::string>>& files) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, bytes] : files) {
    void* copy = malloc(bytes.size());
    memcpy(copy, bytes.data(), bytes.size());
    zip_source_t* src = zip_source_buffer(z, copy, bytes.size(), 1);
    ASSERT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE), 0);
  }
  ASSERT_EQ(zip_close(z), 0);
}

class ChatGptImport : public ::testing::Test {
 protected:
  void SetUp() override {
    png_ = MakePng(5, 4, "chatgpt");
    zip_ = dir_.Sub("export.zip");
    WriteZip(zip_, {{"conversations.json", json::array({Conversation()}).dump(2)},
                    {"file-Abc123-cat.png", png_},
                    {"chat.html", "<html></html>"}});
    store_ = OpenTestStore(dir_);
  }

  TempDir dir_;
  std::string png_;
  std::string zip_;
  std::unique_ptr<Store> store_;
};

TEST_F(ChatGptImport, DetectsTheZip) {
  EXPECT_EQ(*DetectImportFormat(zip_), ImportFormat::kChatGpt);
}

TEST_F(ChatGptImport, EveryWindowOfTheSampleReplays) {
  MustImport(*store_, zip_, "chatgpt");
  ExpectEveryWindowReplays(*store_, "chatgpt sample");
}

TEST_F(ChatGptImport, ActiveBranchArrivesFieldByFieldWithItsImage) {
  ImportReport r = MustImport(*store_, zip_, "");
  EXPECT_EQ(r.format, ImportFormat::kChatGpt);
  EXPECT_EQ(r.sessions_added, 2);
  EXPECT_EQ(r.images_added, 1);
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  auto s = store_->GetSession(kConv);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->title, "Cat picture");
  EXPECT_EQ(s->created_ms, 1717000000250);
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_EQ(ev.size(), 6u);
  const sessiondb::Message& u1 = ev[0].message;
  EXPECT_EQ(u1.role, Role::kUser);
  EXPECT_EQ(ev[0].ts_ms, 1717000001500);
  ASSERT_EQ(u1.parts.size(), 2u);
  ASSERT_EQ(u1.parts[0].type, PartType::kImage);
  EXPECT_EQ(u1.parts[0].resource->width, 5);
  EXPECT_EQ(*store_->ReadBlob(u1.parts[0].resource->content_sha256), png_);
  EXPECT_EQ(u1.parts[1].text, "What is in this picture?");
  EXPECT_EQ(ev[1].message.Text(), "A cat on a sofa.");
  EXPECT_EQ(ev[1].message.model, "gpt-4o");
  EXPECT_EQ(ev[2].message.Text(), "Count the legs in Python");
  const Part& call = ev[3].message.parts[0];
  EXPECT_EQ(call.type, PartType::kToolCall);
  EXPECT_EQ(call.tool_name, "python");
  EXPECT_EQ(json::parse(call.arguments_json)["input"], "print(4)");
  EXPECT_EQ(ev[4].message.role, Role::kTool);
  EXPECT_EQ(ev[4].message.parts[0].type, PartType::kToolResult);
  EXPECT_EQ(ev[4].message.parts[0].tool_call_id, call.tool_call_id);
  EXPECT_EQ(ev[4].message.parts[0].text, "4");
  EXPECT_EQ(ev[5].message.Text(), "It has 4 legs.");
}

TEST_F(ChatGptImport, RegeneratedAnswerIsASessionOfItsOwn) {
  MustImport(*store_, zip_, "chatgpt");
  std::string branch;
  for (const Session& s : AllSessions(*store_)) {
    if (s.id != kConv) branch = s.id;
  }
  ASSERT_FALSE(branch.empty());
  json meta = json::parse(store_->GetSession(branch)->metadata_json);
  EXPECT_EQ(meta["forked_from"], kConv);
  EXPECT_EQ(meta["fork_node"], "u1");
  std::vector<Event> ev = EventsOf(*store_, branch);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].message.Text(), "A kitten.");
}

TEST_F(ChatGptImport, ReimportAddsNothing) {
  MustImport(*store_, zip_, "chatgpt");
  ImportReport again = MustImport(*store_, zip_, "chatgpt");
  EXPECT_EQ(again.sessions_added, 0);
  EXPECT_EQ(again.sessions_unchanged, 2);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(again.images_added, 0);
  EXPECT_EQ(EventsOf(*store_, kConv).size(), 6u);
}

TEST_F(ChatGptImport, CorruptConversationsAreSkippedAndTheRestImports) {
  const std::string folder = dir_.Sub("unzipped");
  std::filesystem::create_directories(folder);
  json good = Conversation();
  // The image's bytes are not a PNG, whatever its name says.
  WriteFile(folder + "/file-Abc123-cat.png", "definitely not an image");
  std::string text = "[";
  text += good.dump();
  text += ",\n{\"title\": \"broken\", \"mapping\": oops},\n";
  text += "{\"title\": \"cut\", \"mapping\": {\"root\": {\"id\": \"root\"";
  WriteFile(folder + "/conversations.json", text);
  EXPECT_EQ(*DetectImportFormat(folder), ImportFormat::kChatGpt);
  ImportReport r = MustImport(*store_, folder, "chatgpt");
  EXPECT_TRUE(SkippedFor(r, "not a valid JSON object"));
  EXPECT_TRUE(SkippedFor(r, "cut short"));
  EXPECT_TRUE(SkippedFor(r, "not a readable image") || SkippedFor(r, "said to be an image"));
  EXPECT_EQ(r.records_skipped, 3);
  EXPECT_EQ(r.sessions_added, 2);
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_EQ(ev.size(), 6u);
  ASSERT_EQ(ev[0].message.parts.size(), 1u);
  EXPECT_EQ(ev[0].message.Text(), "What is in this picture?");
  EXPECT_EQ(AllSessions(*store_).size(), 2u);
}

TEST_F(ChatGptImport, AnExportThatIsNotAnArrayIsRefusedAndNothingIsWritten) {
  WriteFile(dir_.Sub("conversations.json"), "{\"mapping\": {}}");
  auto r = ImportPath(*store_, dir_.Sub("conversations.json"), {.format = ImportFormat::kChatGpt});
  EXPECT_FALSE(r.has_value());
  EXPECT_TRUE(AllSessions(*store_).empty());
}

// Thoughts come as content_type "thoughts" with `thoughts`, but also with
// the list in `parts`, or as an object among a message's parts; all become
// reasoning parts (they were dropped without a word).
TEST_F(ChatGptImport, ThoughtsGivenAsPartsAreKeptAsReasoning) {
  json c = Conversation();
  json& m = c["mapping"];
  m["th"] = Node("th",
                 Msg("th", "assistant", 1717000012.5,
                     {{"content_type", "thoughts"},
                      {"parts", json::array({{{"summary", "Counting legs"},
                                              {"content", "A cat has four."},
                                              {"finished", true}}})},
                      {"source_analysis_msg_id", "x"}}),
                 "t1", {"a2"});
  m["t1"]["children"] = {"th"};
  m["a2"]["parent"] = "th";
  m["a2"]["message"]["content"] = {
      {"content_type", "multimodal_text"},
      {"parts",
       json::array(
           {{{"content_type", "thoughts"},
             {"thoughts", json::array({{{"summary", "Check"}, {"content", "Output was 4."}}})}},
            "It has 4 legs."})}};
  const std::string folder = dir_.Sub("thoughts");
  std::filesystem::create_directories(folder);
  WriteFile(folder + "/file-Abc123-cat.png", png_);
  WriteFile(folder + "/conversations.json", json::array({c}).dump());
  ImportReport r = MustImport(*store_, folder, "chatgpt");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_EQ(ev.size(), 7u);
  const sessiondb::Message& thought = ev[5].message;
  EXPECT_EQ(thought.role, Role::kAssistant);
  ASSERT_EQ(thought.parts.size(), 1u);
  EXPECT_EQ(thought.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(thought.parts[0].text, "Counting legs\nA cat has four.");
  const sessiondb::Message& answer = ev[6].message;
  ASSERT_EQ(answer.parts.size(), 2u);
  EXPECT_EQ(answer.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(answer.parts[0].text, "Check\nOutput was 4.");
  EXPECT_EQ(answer.parts[1].text, "It has 4 legs.");
}

// A content type the importer does not know, holding something it cannot
// read, is reported rather than dropped in silence.
TEST_F(ChatGptImport, AnUnreadableContentTypeIsSkippedWithItsName) {
  json c = Conversation();
  c["mapping"]["a2"]["message"]["content"] = {{"content_type", "sonic_widget"},
                                              {"widget", {{"kind", "weather"}}}};
  const std::string folder = dir_.Sub("widget");
  std::filesystem::create_directories(folder);
  WriteFile(folder + "/conversations.json", json::array({c}).dump());
  WriteFile(folder + "/file-Abc123-cat.png", png_);
  ImportReport r = MustImport(*store_, folder, "chatgpt");
  EXPECT_TRUE(SkippedFor(r, "content type 'sonic_widget'"));
  EXPECT_EQ(r.records_skipped, 1);
  EXPECT_EQ(EventsOf(*store_, kConv).size(), 5u);
}

// One byte that is not UTF-8 cost the whole conversation ("not a valid JSON
// object"); it is now U+FFFD and everything else arrives.
TEST_F(ChatGptImport, AnInvalidUtf8ByteIsReplacedAndTheConversationImports) {
  std::string text = json::array({Conversation()}).dump();
  const size_t at = text.find("It has 4 legs.");
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 2, 1, "\xFF");  // "It\xFFhas 4 legs."
  const std::string folder = dir_.Sub("latin1");
  std::filesystem::create_directories(folder);
  WriteFile(folder + "/conversations.json", text);
  WriteFile(folder + "/file-Abc123-cat.png", png_);
  ImportReport r = MustImport(*store_, folder, "chatgpt");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  EXPECT_EQ(r.sessions_added, 2);
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[5].message.Text(), "It\xEF\xBF\xBDhas 4 legs.");
}

// A folder export whose image file name is not UTF-8 (a Latin-1 file
// system): the import failed whole ("message cannot be encoded"); the image
// now arrives under a name with U+FFFD in place of the byte.
TEST_F(ChatGptImport, AnImageFileNameThatIsNotUtf8DoesNotStopTheImport) {
  const std::string folder = dir_.Sub("latin1-names");
  std::filesystem::create_directories(folder);
  WriteFile(folder + "/file-Abc123-ch\xE2t.png", png_);
  WriteFile(folder + "/conversations.json", json::array({Conversation()}).dump());
  ImportReport r = MustImport(*store_, folder, "chatgpt");
  EXPECT_EQ(r.images_added, 1);
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_FALSE(ev.empty());
  ASSERT_EQ(ev[0].message.parts[0].type, PartType::kImage);
  EXPECT_EQ(ev[0].message.parts[0].resource->name, "file-Abc123-ch\xEF\xBF\xBDt.png");
}

}  // namespace
}  // namespace sessiondb::testing
