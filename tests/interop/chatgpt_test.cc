// The chatgpt importer on a realistic export written by the test: a zip with
// conversations.json and an uploaded image, a mapping tree with a
// regenerated answer (a side branch), a code tool call and its output; then
// a folder export with corrupt conversations.
#include <zip.h>

#include <nlohmann/json.hpp>

#include "interop/interop_test_support.h"
#include "projection/window_checks.h"
#include "sessiondb/projection.h"

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

// One turn of a GPT-5 Pro conversation with search and a scheduled task, as
// ChatGPT writes it: custom instructions hidden near the root; a thoughts
// node addressed to a connector; a web.run call answered by two tool
// messages; the model's reasoning summaries as tool messages of author
// a8km123 that answer no call; a reasoning recap; a scheduled task's prompt
// as a hidden user message; a python output after the user spoke again.
json ProConversation() {
  json m = json::object();
  m["root"] = Node("root", nullptr, nullptr, {"ctx"});
  json ctx = Msg("ctx", "user", 1717000000.5,
                 {{"content_type", "user_editable_context"},
                  {"user_profile", "I live in Porto."},
                  {"user_instructions", "Be brief."}});
  ctx["metadata"]["is_visually_hidden_from_conversation"] = true;
  m["ctx"] = Node("ctx", ctx, "root", {"u1"});
  m["u1"] = Node("u1", Msg("u1", "user", 1717000001.0, Text("Flights to Lisbon tomorrow?")), "ctx",
                 {"th"});
  m["th"] = Node("th",
                 Msg("th", "assistant", 1717000002.0,
                     {{"content_type", "thoughts"},
                      {"thoughts", json::array({{{"summary", "Checking calendar"},
                                                 {"content", "Looking at the user's calendar."},
                                                 {"finished", true}}})},
                      {"source_analysis_msg_id", "x1"}},
                     "api_tool.call_tool"),
                 "u1", {"pro1"});
  m["pro1"] = Node("pro1",
                   Msg("pro1", "tool", 1717000003.0,
                       {{"content_type", "thoughts"},
                        {"thoughts", json::array({{{"summary", "Planning the search"},
                                                   {"content", "Search TAP and Ryanair."}}})}},
                       "all", "a8km123"),
                   "th", {"c1"});
  m["c1"] = Node("c1",
                 Msg("c1", "assistant", 1717000004.0,
                     {{"content_type", "code"},
                      {"language", "unknown"},
                      {"text", R"({"search_query":[{"q":"OPO LIS flights"}]})"}},
                     "web.run"),
                 "pro1", {"t1"});
  m["t1"] =
      Node("t1",
           Msg("t1", "tool", 1717000005.0,
               {{"content_type", "text"}, {"parts", {"3 results for OPO LIS"}}}, "all", "web.run"),
           "c1", {"t2"});
  m["t2"] =
      Node("t2",
           Msg("t2", "tool", 1717000006.0,
               {{"content_type", "text"}, {"parts", {"TAP 09:40 129 EUR"}}}, "all", "web.run"),
           "t1", {"pro2"});
  m["pro2"] =
      Node("pro2",
           Msg("pro2", "tool", 1717000007.0,
               {{"content_type", "thoughts"},
                {"thoughts",
                 json::array({{{"summary", "Comparing fares"}, {"content", "TAP is cheapest."}}})}},
               "all", "a8km123"),
           "t2", {"rc"});
  m["rc"] = Node("rc",
                 Msg("rc", "assistant", 1717000008.0,
                     {{"content_type", "reasoning_recap"}, {"content", "Thought for 41s"}}),
                 "pro2", {"a1"});
  m["a1"] = Node("a1", Msg("a1", "assistant", 1717000009.0, Text("TAP at 09:40, 129 EUR.")), "rc",
                 {"task"});
  json task = Msg("task", "user", 1717086400.0, Text("Daily check: any cheaper fare today?"));
  task["metadata"]["is_visually_hidden_from_conversation"] = true;
  task["metadata"]["scheduled_task_id"] = "task_1";
  m["task"] = Node("task", task, "a1", {"a2"});
  m["a2"] = Node("a2", Msg("a2", "assistant", 1717086410.0, Text("No, TAP is still cheapest.")),
                 "task", {"c2"});
  m["c2"] = Node(
      "c2",
      Msg("c2", "assistant", 1717086411.0,
          {{"content_type", "code"}, {"language", "unknown"}, {"text", "print(129)"}}, "python"),
      "a2", {"t3"});
  m["t3"] = Node("t3",
                 Msg("t3", "tool", 1717086412.0,
                     {{"content_type", "execution_output"}, {"text", "129"}}, "all", "python"),
                 "c2", {"u3"});
  m["u3"] = Node("u3", Msg("u3", "user", 1717086420.0, Text("Thanks")), "t3", {"t4"});
  m["t4"] = Node(
      "t4",
      Msg("t4", "tool", 1717086421.0,
          {{"content_type", "execution_output"}, {"text", "kernel restarted"}}, "all", "python"),
      "u3", json::array());
  return {{"title", "Lisbon fares"},
          {"create_time", 1717000000.25},
          {"update_time", 1717086421.0},
          {"mapping", m},
          {"current_node", "t4"},
          {"conversation_id", kConv},
          {"id", kConv},
          {"default_model_slug", "gpt-5-pro"}};
}

class ChatGptCalls : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = dir_.Sub("pro");
    std::filesystem::create_directories(folder_);
    WriteFile(folder_ + "/conversations.json", json::array({ProConversation()}).dump());
    store_ = OpenTestStore(dir_);
    report_ = MustImport(*store_, folder_, "chatgpt");
    events_ = EventsOf(*store_, kConv);
  }

  // The stored message of source node `node`, or nullptr.
  const sessiondb::Message* NodeMessage(const std::string& node) const {
    for (const Event& e : events_) {
      if (json::parse(e.message.metadata_json).value("node_id", "") == node) return &e.message;
    }
    return nullptr;
  }

  TempDir dir_;
  std::string folder_;
  std::unique_ptr<Store> store_;
  ImportReport report_;
  std::vector<Event> events_;
};

// Both tool messages of the web.run call answer it; the projection sends
// them as the call's one result, never as a note "whose call is not part of
// this conversation".
TEST_F(ChatGptCalls, BothResultsOfOneWebRunCallAnswerIt) {
  const sessiondb::Message* call = NodeMessage("c1");
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->parts[0].type, PartType::kToolCall);
  EXPECT_EQ(call->parts[0].tool_name, "web.run");
  for (const char* node : {"t1", "t2"}) {
    const sessiondb::Message* result = NodeMessage(node);
    ASSERT_NE(result, nullptr) << node;
    ASSERT_EQ(result->parts[0].type, PartType::kToolResult) << node;
    EXPECT_EQ(result->parts[0].tool_call_id, call->parts[0].tool_call_id) << node;
  }
  for (ProviderFormat f : {ProviderFormat::kAnthropic, ProviderFormat::kOpenAiChat,
                           ProviderFormat::kOpenAiResponses}) {
    auto body = ProjectSession(*store_, kConv, {.format = f});
    ASSERT_TRUE(body) << body.error().ToString();
    EXPECT_EQ(body->find("not part of this conversation"), std::string::npos) << *body;
    EXPECT_NE(body->find("3 results for OPO LIS\\n\\nTAP 09:40 129 EUR"), std::string::npos)
        << *body;
  }
}

// The a8km123 reasoning summaries answer no call: they were results of the
// last call seen (or of a call named "a8km123"), empty, shown as user notes.
// They are the model's reasoning now, their text whole.
TEST_F(ChatGptCalls, ReasoningSummariesOfAToolAnswerNoCall) {
  for (const char* node : {"pro1", "pro2"}) {
    const sessiondb::Message* m = NodeMessage(node);
    ASSERT_NE(m, nullptr) << node;
    EXPECT_EQ(m->role, Role::kAssistant) << node;
    ASSERT_EQ(m->parts.size(), 1u) << node;
    EXPECT_EQ(m->parts[0].type, PartType::kReasoning) << node;
    EXPECT_EQ(json::parse(m->metadata_json)["author_name"], "a8km123");
  }
  EXPECT_EQ(NodeMessage("pro2")->parts[0].text, "Comparing fares\nTAP is cheapest.");
  for (const Event& e : events_) {
    for (const Part& p : e.message.parts) {
      EXPECT_NE(p.tool_call_id, "a8km123");
      if (p.type == PartType::kToolResult) {
        EXPECT_FALSE(p.text.empty()) << e.message.metadata_json;
      }
    }
  }
  auto body = ProjectSession(*store_, kConv, {.format = ProviderFormat::kAnthropic});
  ASSERT_TRUE(body);
  EXPECT_EQ(body->find("a8km123"), std::string::npos) << *body;
}

// Thoughts addressed to a connector were a tool call whose input was the
// status text; they are reasoning, and no call is left open for them.
TEST_F(ChatGptCalls, ThoughtsAddressedToAConnectorAreReasoningNotACall) {
  const sessiondb::Message* m = NodeMessage("th");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->role, Role::kAssistant);
  ASSERT_EQ(m->parts.size(), 1u);
  EXPECT_EQ(m->parts[0].type, PartType::kReasoning);
  EXPECT_EQ(m->parts[0].text, "Checking calendar\nLooking at the user's calendar.");
}

// A scheduled task's prompt is a hidden user message; it was dropped with no
// reason, so the answer looked unprompted. It comes in, marked hidden.
TEST_F(ChatGptCalls, AHiddenScheduledPromptIsKeptBeforeItsAnswer) {
  const sessiondb::Message* task = NodeMessage("task");
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->role, Role::kUser);
  EXPECT_EQ(task->Text(), "Daily check: any cheaper fare today?");
  EXPECT_EQ(json::parse(task->metadata_json)["hidden_in_source"], true);
  auto body = ProjectSession(*store_, kConv, {.format = ProviderFormat::kOpenAiChat});
  ASSERT_TRUE(body);
  const json messages = json::parse(*body)["messages"];
  bool prompt_before_answer = false;
  for (size_t i = 0; i + 1 < messages.size(); ++i) {
    prompt_before_answer |= messages[i]["role"] == "user" &&
                            messages[i].dump().find("Daily check") != std::string::npos &&
                            messages[i + 1]["role"] == "assistant";
  }
  EXPECT_TRUE(prompt_before_answer) << *body;
}

// A user message ends the turn: python's output after it answers no call
// (it was a result of the call before the user spoke).
TEST_F(ChatGptCalls, AToolMessageAfterTheUserSpokeAnswersNoEarlierCall) {
  const sessiondb::Message* late = NodeMessage("t4");
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->role, Role::kTool);
  ASSERT_EQ(late->parts.size(), 1u);
  EXPECT_EQ(late->parts[0].type, PartType::kText);
  EXPECT_EQ(late->parts[0].text, "kernel restarted");
  const sessiondb::Message* output = NodeMessage("t3");
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(output->parts[0].tool_call_id, NodeMessage("c2")->parts[0].tool_call_id);
}

// Every message left out says why, and nothing else is skipped.
TEST_F(ChatGptCalls, EveryLeftOutMessageIsReportedWithItsReason) {
  EXPECT_TRUE(SkippedFor(report_, "'user_editable_context'"));
  EXPECT_TRUE(SkippedFor(report_, "reasoning recap"));
  EXPECT_EQ(report_.records_skipped, 2);
  EXPECT_EQ(NodeMessage("ctx"), nullptr);
  EXPECT_EQ(NodeMessage("rc"), nullptr);
  EXPECT_EQ(events_.size(), 14u);  // 16 nodes with a message, 2 left out
  ExpectEveryWindowReplays(*store_, "chatgpt pro sample");
}

// A genuine export held a conversation without current_node whose tree
// names a child the file does not hold: nothing was imported and nothing
// said. The reachable tree comes in, and the missing child is reported.
TEST_F(ChatGptImport, ATreeNamingAMissingChildImportsWhatItHoldsAndSaysSo) {
  json c = Conversation();
  c.erase("current_node");
  c["mapping"]["a2"]["children"] = {"gone-node"};
  c["mapping"].erase("a1b");
  c["mapping"]["u1"]["children"] = {"a1"};
  const std::string folder = dir_.Sub("missing-child");
  std::filesystem::create_directories(folder);
  WriteFile(folder + "/file-Abc123-cat.png", png_);
  WriteFile(folder + "/conversations.json", json::array({c}).dump());
  ImportReport r = MustImport(*store_, folder, "chatgpt");
  EXPECT_EQ(r.sessions_added, 1);
  EXPECT_EQ(r.records_skipped, 1);
  EXPECT_TRUE(SkippedFor(r, "gone-node")) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  std::vector<Event> ev = EventsOf(*store_, kConv);
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev.back().message.Text(), "It has 4 legs.");
}

// A conversation with nothing to import is reported, not passed over.
TEST_F(ChatGptImport, AConversationWithNoMessageIsReported) {
  json c = Conversation();
  c["mapping"] = {{"root", Node("root", nullptr, nullptr, json::array())}};
  const std::string folder = dir_.Sub("empty-conversation");
  std::filesystem::create_directories(folder);
  WriteFile(folder + "/conversations.json", json::array({c}).dump());
  ImportReport r = MustImport(*store_, folder, "chatgpt");
  EXPECT_EQ(r.sessions_added, 0);
  EXPECT_TRUE(SkippedFor(r, "has no message to import"));
  EXPECT_TRUE(AllSessions(*store_).empty());
}

}  // namespace
}  // namespace sessiondb::testing
