// Agents.KT snapshots: a realistic sample read field by field, idempotent
// re-import, damaged files and images skipped with reasons, and export →
// import giving the same messages and image bytes.
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "interop/import_sink.h"
#include "interop_fixture.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char kSampleName[] = "b35e253286455d42d8c2fdea8dbaf3356a209334cfc56462089044ee588a88d6.json";

class AgentsKt : public InteropTest {
 protected:
  ImportReport Import(Store& store, const std::string& path) {
    auto r = ImportPath(store, path, {.format = ImportFormat::kAgentsKt});
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : ImportReport{};
  }

  // A folder holding the golden sample and `extra` files.
  std::string Folder(const std::map<std::string, std::string>& extra = {}) {
    const fs::path folder = dir_.path() / "snapshots";
    fs::create_directories(folder);
    fs::copy_file(Golden("agents-kt", kSampleName), folder / kSampleName,
                  fs::copy_options::overwrite_existing);
    for (const auto& [name, text] : extra) WriteFile(folder / name, text);
    return folder.string();
  }

  static json Snapshot(const std::string& session_id, json messages) {
    return {{"requestId", "req-" + session_id},
            {"sessionId", session_id},
            {"turns", 1},
            {"toolCalls", 0},
            {"toolCallLimit", 4},
            {"tokens", nullptr},
            {"memory", json::object()},
            {"messages", std::move(messages)}};
  }
};

TEST_F(AgentsKt, SampleImportsFieldByField) {
  auto store = OpenStore("store");
  auto detected = DetectImportFormat(Folder());
  ASSERT_TRUE(detected) << detected.error().ToString();
  EXPECT_EQ(*detected, ImportFormat::kAgentsKt);
  ImportReport r = Import(*store, Folder());
  EXPECT_EQ(r.sessions_added, 1);
  EXPECT_EQ(r.messages_added, 5);
  EXPECT_EQ(r.images_added, 1);
  EXPECT_EQ(r.records_skipped, 0);

  auto s = store->GetSession("support-42");
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_EQ(s->title, "You are a support agent.");
  EXPECT_EQ(s->preview, "My invoice looks wrong, see the screenshot.");
  json meta = json::parse(s->metadata_json);
  EXPECT_EQ(meta["agents_kt"]["requestId"], "req-7f3a");
  EXPECT_EQ(meta["agents_kt"]["manifestHash"], "m-91c2");
  EXPECT_EQ(meta["agents_kt"]["toolCallLimit"], 8);
  EXPECT_EQ(meta["agents_kt"]["memory"]["customer"], "ACME");

  auto events = Events(*store, "support-42");
  ASSERT_EQ(events.size(), 5u);
  // No message ids in the format: a message is named by its fingerprint
  // (role and content) and its count among equal ones, not by its place.
  const std::string fingerprint =
      "fingerprint/" + blob::Sha256Hex("system\nYou are a support agent.") + "/1";
  EXPECT_EQ(events[0].id, interop::ImportedEventId(
                              "support-42", 1, interop::StableEventId("support-42", fingerprint)));
  EXPECT_EQ(events[0].message.role, Role::kSystem);
  const Message& user = events[1].message;
  EXPECT_EQ(user.role, Role::kUser);
  ASSERT_EQ(user.parts.size(), 2u);
  EXPECT_EQ(user.parts[0].text, "My invoice looks wrong, see the screenshot.");
  ASSERT_TRUE(user.parts[1].resource);
  EXPECT_EQ(user.parts[1].type, PartType::kImage);
  EXPECT_EQ(user.parts[1].resource->mime, "image/png");
  EXPECT_EQ(user.parts[1].resource->width, 3);
  EXPECT_EQ(user.parts[1].resource->height, 2);
  auto bytes = store->ReadBlob(user.parts[1].resource->content_sha256, true);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->substr(1, 3), "PNG");
  const Message& call = events[2].message;
  ASSERT_EQ(call.parts.size(), 1u);
  EXPECT_EQ(call.parts[0].type, PartType::kToolCall);
  EXPECT_EQ(call.parts[0].tool_name, "lookup_invoice");
  EXPECT_EQ(json::parse(call.parts[0].arguments_json),
            json::parse(R"({"id":"INV-3","verbose":true})"));
  const Message& result = events[3].message;
  ASSERT_EQ(result.parts.size(), 1u);
  EXPECT_EQ(result.parts[0].type, PartType::kToolResult);
  EXPECT_EQ(result.parts[0].tool_call_id, call.parts[0].tool_call_id);
  EXPECT_EQ(result.parts[0].text, R"({"total": 120})");
  const Message& answer = events[4].message;
  ASSERT_TRUE(answer.usage);
  EXPECT_EQ(answer.usage->input_tokens, 1200);
  EXPECT_EQ(answer.usage->output_tokens, 85);
  EXPECT_EQ(answer.usage->cached_tokens, 300);
  EXPECT_EQ(answer.provider, "anthropic");
  EXPECT_EQ(answer.model, "claude-test");
  EXPECT_FALSE(call.usage);
}

TEST_F(AgentsKt, ReimportAddsNothing) {
  auto store = OpenStore("store");
  Import(*store, Folder());
  auto before = store->Stats();
  ImportReport again = Import(*store, Folder());
  EXPECT_EQ(again.sessions_added, 0);
  EXPECT_EQ(again.sessions_unchanged, 1);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(again.images_added, 0);
  auto after = store->Stats();
  EXPECT_EQ(before->messages, after->messages);
  EXPECT_EQ(before->blobs, after->blobs);
}

TEST_F(AgentsKt, GrownSnapshotAddsItsNewMessages) {
  auto store = OpenStore("store");
  json doc = Snapshot("grow", json::array({{{"role", "user"}, {"content", "one"}}}));
  WriteFile(dir_.Sub("grow.json"), doc.dump());
  Import(*store, dir_.Sub("grow.json"));
  doc["messages"].push_back({{"role", "assistant"}, {"content", "two"}});
  WriteFile(dir_.Sub("grow.json"), doc.dump());
  ImportReport r = Import(*store, dir_.Sub("grow.json"));
  EXPECT_EQ(r.sessions_extended, 1);
  EXPECT_EQ(r.messages_added, 1);
  EXPECT_EQ(Events(*store, "grow").back().message.Text(), "two");
}

TEST_F(AgentsKt, DamagedFilesAndImagesAreSkippedAndTheRestImports) {
  const std::string good_png = blob::Base64Encode(MakePng(2, 2, "ok"));
  json damaged = Snapshot(
      "damaged", json::array({
                     {{"role", "user"},
                      {"content", "three pictures"},
                      {"images", json::array({{{"base64", good_png}, {"mime", "image/png"}},
                                              {{"base64", good_png}, {"mime", "image/heic"}},
                                              {{"base64", blob::Base64Encode("not a picture")},
                                               {"mime", "image/png"}}})}},
                     {{"role", "assistant"}, {"content", 42}},  // a value of the wrong type
                     {{"role", "assistant"}, {"content", "still here"}},
                 }));
  const std::string truncated =
      Snapshot("cut", json::array({{{"role", "user"}, {"content", "lost"}}})).dump().substr(0, 60);
  auto store = OpenStore("store");
  ImportReport r =
      Import(*store, Folder({{"damaged.json", damaged.dump()}, {"truncated.json", truncated}}));
  EXPECT_EQ(r.sessions_added, 2);  // the sample and the damaged one
  ASSERT_EQ(r.records_skipped, 4);
  // The first skip whose place ends with `where_part`.
  auto reason_for = [&r](const std::string& where_part) -> std::string {
    for (const auto& s : r.skipped) {
      if (s.where.ends_with(where_part)) return s.reason;
    }
    return "(not skipped)";
  };
  EXPECT_NE(reason_for("images[1]").find("image/heic"), std::string::npos);
  EXPECT_NE(reason_for("damaged.json:messages[0]").find("text/plain"), std::string::npos);
  EXPECT_NE(reason_for("messages[1]").find("content"), std::string::npos);
  EXPECT_NE(reason_for("truncated.json").find("truncated"), std::string::npos);
  EXPECT_FALSE(store->GetSession("cut"));

  auto events = Events(*store, "damaged");
  ASSERT_EQ(events.size(), 2u);
  ASSERT_EQ(events[0].message.parts.size(), 2u);
  EXPECT_EQ(events[0].message.parts[0].text, "three pictures");
  EXPECT_EQ(*store->ReadBlob(events[0].message.parts[1].resource->content_sha256),
            MakePng(2, 2, "ok"));
  EXPECT_EQ(events[1].message.Text(), "still here");
}

TEST_F(AgentsKt, AByteThatIsNotUtf8BecomesAReplacementCharacterNotALostSession) {
  std::string text = Snapshot("stray", json::array({{{"role", "user"}, {"content", "caf@ au lait"}},
                                                    {{"role", "assistant"}, {"content", "Oui"}}}))
                         .dump();
  text.replace(text.find('@'), 1, "\xE9");  // Latin-1 é: not UTF-8
  auto store = OpenStore("store");
  const std::string folder = Folder({{"stray.json", text}});
  ImportReport r = Import(*store, folder);
  EXPECT_EQ(r.sessions_added, 2);  // the sample and this one
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  auto events = Events(*store, "stray");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].message.Text(), "caf\uFFFD au lait");
  EXPECT_EQ(events[1].message.Text(), "Oui");
  ImportReport again = Import(*store, folder);
  EXPECT_EQ(again.sessions_added, 0);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(Events(*store, "stray").size(), 2u);
}

TEST_F(AgentsKt, ExportWritesTheAgentsKtShape) {
  auto store = OpenStore("store");
  FillSample(*store);
  auto r = ExportTo(*store, dir_.Sub("out"),
                    {.format = ExportFormat::kAgentsKt, .sessions = {"chat-main"}});
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->files.size(), 1u);
  EXPECT_EQ(fs::path(r->files[0]).filename(), blob::Sha256Hex("chat-main") + ".json");
  const std::string text = ReadFile(r->files[0]);
  EXPECT_EQ(text.rfind("{\"requestId\":", 0), 0u) << text.substr(0, 40);
  json doc = json::parse(text);
  EXPECT_EQ(doc["sessionId"], "chat-main");
  EXPECT_EQ(doc["turns"], 2);
  EXPECT_EQ(doc["toolCalls"], 1);
  EXPECT_EQ(doc["tokens"]["prompt"], 120);
  EXPECT_EQ(doc["tokens"]["model"], "gpt-test");
  ASSERT_EQ(doc["messages"].size(), 5u);
  const json& user = doc["messages"][0];
  EXPECT_EQ(user["role"], "user");
  EXPECT_EQ(user["content"], "What is in these pictures?");
  ASSERT_EQ(user["images"].size(), 2u);
  EXPECT_EQ(user["images"][0]["mime"], "image/png");
  EXPECT_EQ(user["images"][0]["base64"], blob::Base64Encode(png_));
  EXPECT_EQ(user["images"][1]["mime"], "image/jpeg");
  // A message without images has no images key at all.
  EXPECT_FALSE(doc["messages"][3].contains("images"));
  EXPECT_FALSE(doc["messages"][3].contains("toolCalls"));
  EXPECT_EQ(doc["messages"][1]["toolCalls"][0]["name"], "zoom");
  EXPECT_EQ(doc["messages"][1]["toolCalls"][0]["arguments"]["x"], 1);
  EXPECT_EQ(doc["messages"][2]["role"], "tool");
  EXPECT_EQ(doc["messages"][2]["content"], "zoomed: a cat");
  EXPECT_EQ(r->images, 2);
}

TEST_F(AgentsKt, ExportThenImportGivesTheSameMessagesAndImageBytes) {
  auto source = OpenStore("source");
  FillSample(*source);
  auto r = ExportTo(*source, dir_.Sub("out"), {.format = ExportFormat::kAgentsKt});
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->sessions, 3);
  auto target = OpenStore("target");
  ImportReport imported = Import(*target, dir_.Sub("out"));
  EXPECT_EQ(imported.sessions_added, 3);
  EXPECT_EQ(imported.records_skipped, 0) << imported.skipped[0].reason;
  for (const char* id : {"chat-main", "chat-fork"}) {
    std::vector<Message> a, b;
    for (const Event& e : Events(*source, id)) {
      if (e.type == EventType::kMessage && !e.message.pruned) a.push_back(e.message);
    }
    for (const Event& e : Events(*target, id)) b.push_back(e.message);
    ASSERT_EQ(a.size(), b.size()) << id;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].role, b[i].role);
      std::vector<std::string> calls_a, calls_b, images_a, images_b;
      std::string text_a, text_b;
      for (const Part& p : a[i].parts) {
        if (p.type == PartType::kText || p.type == PartType::kToolResult) text_a += p.text;
        if (p.type == PartType::kToolCall) calls_a.push_back(p.tool_name + p.arguments_json);
        if (p.type == PartType::kImage)
          images_a.push_back(*source->ReadBlob(p.resource->content_sha256));
      }
      for (const Part& p : b[i].parts) {
        if (p.type == PartType::kText || p.type == PartType::kToolResult) text_b += p.text;
        if (p.type == PartType::kToolCall) calls_b.push_back(p.tool_name + p.arguments_json);
        if (p.type == PartType::kImage)
          images_b.push_back(*target->ReadBlob(p.resource->content_sha256));
      }
      EXPECT_EQ(text_a, text_b);
      EXPECT_EQ(calls_a, calls_b);
      EXPECT_EQ(images_a, images_b);
    }
  }
  EXPECT_EQ(Events(*target, "chat-main")[0].message.parts.size(), 3u);
  // Exporting what came back gives the same files again.
  auto again = ExportTo(*target, dir_.Sub("again"), {.format = ExportFormat::kAgentsKt});
  ASSERT_TRUE(again);
  for (const std::string& f : r->files) {
    EXPECT_EQ(ReadFile(f), ReadFile(dir_.path() / "again" / fs::path(f).filename())) << f;
  }
}

}  // namespace
}  // namespace sessiondb::testing
