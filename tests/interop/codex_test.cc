// The codex importer on a realistic rollout written by the test: session
// meta, messages with an image, function and custom tool calls and their
// outputs, reasoning, usage from token_count, a compaction, a fork; then
// corruption.
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "interop/import_sink.h"
#include "interop/interop_test_support.h"
#include "projection/window_checks.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

constexpr const char* kId = "0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7";
constexpr const char* kParentId = "0199a2b3-0000-7000-8000-000000000001";

json Line(const std::string& ts, const std::string& type, json payload) {
  return {{"timestamp", ts}, {"type", type}, {"payload", std::move(payload)}};
}

json Msg(const std::string& role, json content) {
  return {{"type", "message"}, {"role", role}, {"content", std::move(content)}};
}

std::string Rollout(const std::string& png) {
  std::vector<json> l;
  l.push_back(Line("2025-10-29T00:59:38.317Z", "session_meta",
                   {{"id", kId},
                    {"forked_from_id", kParentId},
                    {"timestamp", "2025-10-29T00:59:38.308Z"},
                    {"cwd", "/home/dev/app"},
                    {"originator", "codex_cli_rs"},
                    {"cli_version", "0.46.0"},
                    {"instructions", nullptr},
                    {"source", "cli"},
                    {"model_provider", "openai"},
                    {"git", {{"branch", "main"}, {"commit_hash", "abc123"}}}}));
  l.push_back(Line("2025-10-29T00:59:38.320Z", "response_item",
                   Msg("user", json::array({{{"type", "input_text"},
                                             {"text", "What is wrong in this screenshot?"}},
                                            {{"type", "input_image"},
                                             {"image_url", "data:image/png;base64," +
                                                               blob::Base64Encode(png)}}}))));
  l.push_back(Line("2025-10-29T00:59:38.321Z", "event_msg",
                   {{"type", "user_message"}, {"message", "What is wrong in this screenshot?"}}));
  l.push_back(Line("2025-10-29T00:59:38.322Z", "turn_context",
                   {{"cwd", "/home/dev/app"}, {"approval_policy", "on-request"},
                    {"model", "gpt-5-codex"}, {"effort", "high"}, {"summary", "auto"}}));
  l.push_back(Line("2025-10-29T00:59:40.000Z", "response_item",
                   {{"type", "reasoning"},
                    {"summary", json::array({{{"type", "summary_text"},
                                              {"text", "**Inspecting the layout**"}}})},
                    {"content", nullptr},
                    {"encrypted_content", "gAAAA..."}}));
  l.push_back(Line("2025-10-29T00:59:41.000Z", "response_item",
                   {{"type", "function_call"},
                    {"name", "shell"},
                    {"arguments", R"({"command":["rg","-n","flex"],"workdir":"/home/dev/app"})"},
                    {"call_id", "call_A1"}}));
  l.push_back(Line("2025-10-29T00:59:42.000Z", "response_item",
                   {{"type", "function_call_output"},
                    {"call_id", "call_A1"},
                    {"output", R"({"output":"src/app.css:3: display: flex","metadata":{"exit_code":0}})"}}));
  l.push_back(Line("2025-10-29T00:59:45.000Z", "response_item",
                   {{"type", "custom_tool_call"},
                    {"status", "completed"},
                    {"call_id", "call_B2"},
                    {"name", "apply_patch"},
                    {"input", "*** Begin Patch\n*** Update File: src/app.css\n@@\n-display: flex\n+display: grid\n*** End Patch"}}));
  l.push_back(Line("2025-10-29T00:59:46.000Z", "response_item",
                   {{"type", "custom_tool_call_output"},
                    {"call_id", "call_B2"},
                    {"output", "Success. Updated the following files:\nM src/app.css"}}));
  l.push_back(Line("2025-10-29T00:59:50.000Z", "response_item",
                   Msg("assistant", json::array({{{"type", "output_text"},
                                                  {"text", "The container used flex; now grid."}}}))));
  l.push_back(Line("2025-10-29T00:59:50.100Z", "event_msg",
                   {{"type", "token_count"},
                    {"info",
                     {{"total_token_usage", {{"input_tokens", 9000}, {"output_tokens", 300}}},
                      {"last_token_usage",
                       {{"input_tokens", 4000},
                        {"cached_input_tokens", 3000},
                        {"output_tokens", 120},
                        {"reasoning_output_tokens", 64},
                        {"total_tokens", 4120}}}}}}));
  l.push_back(Line("2025-10-29T01:10:00.000Z", "compacted",
                   {{"message", "Summary: switched the container from flex to grid."}}));
  l.push_back(Line("2025-10-29T01:10:05.000Z", "response_item",
                   Msg("user", json::array({{{"type", "input_text"}, {"text", "Now the footer"}}}))));
  std::string out;
  for (const json& j : l) out += j.dump() + "\n";
  return out;
}

class CodexImport : public ::testing::Test {
 protected:
  void SetUp() override {
    png_ = MakePng(4, 4, "codex");
    day_ = dir_.Sub("sessions/2025/10/29");
    std::filesystem::create_directories(day_);
    file_ = day_ + "/rollout-2025-10-29T00-59-38-" + kId + ".jsonl";
    WriteFile(file_, Rollout(png_));
    store_ = OpenTestStore(dir_);
  }

  TempDir dir_;
  std::string png_;
  std::string day_;
  std::string file_;
  std::unique_ptr<Store> store_;
};

TEST_F(CodexImport, DetectsASessionsTreeAndARollout) {
  EXPECT_EQ(*DetectImportFormat(dir_.Sub("sessions")), "codex");
  EXPECT_EQ(*DetectImportFormat(file_), "codex");
}

TEST_F(CodexImport, EveryWindowOfTheSampleReplays) {
  MustImport(*store_, dir_.Sub("sessions"), "codex");
  ExpectEveryWindowReplays(*store_, "codex sample");
}

// A sessions tree of many rollouts shows one bar, not one per file.
TEST_F(CodexImport, ProgressCrossesOnceForAllTheRollouts) {
  const std::string other_id = "0199a2b3-c4d5-7e6f-8091-000000000002";
  std::string second = Rollout(png_);
  for (size_t at = second.find(kId); at != std::string::npos; at = second.find(kId, at)) {
    second.replace(at, std::string(kId).size(), other_id);
  }
  const std::string second_file = day_ + "/rollout-2025-10-29T02-00-00-" + other_id + ".jsonl";
  WriteFile(second_file, second);
  std::vector<std::pair<int64_t, int64_t>> calls;
  auto report = ImportPath(*store_, dir_.Sub("sessions"),
                           {.format = "codex", .progress = [&](int64_t done, int64_t total) {
                              calls.emplace_back(done, total);
                            }});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 2);
  ExpectOneBarAcrossFiles(calls, {static_cast<int64_t>(std::filesystem::file_size(file_)),
                                  static_cast<int64_t>(std::filesystem::file_size(second_file))});
}

TEST_F(CodexImport, RolloutArrivesFieldByField) {
  ImportReport r = MustImport(*store_, dir_.Sub("sessions"), "");
  EXPECT_EQ(r.format, "codex");
  EXPECT_EQ(r.sessions_added, 1);
  EXPECT_EQ(r.images_added, 1);
  EXPECT_EQ(r.records_skipped, 0);
  auto s = store_->GetSession(kId);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->created_ms, *interop::ParseIsoTime("2025-10-29T00:59:38.308Z"));
  json meta = json::parse(s->metadata_json);
  EXPECT_EQ(meta["cwd"], "/home/dev/app");
  EXPECT_EQ(meta["originator"], "codex_cli_rs");
  EXPECT_EQ(meta["forked_from_id"], kParentId);
  EXPECT_EQ(meta["forked_from"], kParentId);
  EXPECT_EQ(meta["git"]["branch"], "main");
  EXPECT_TRUE(s->parent_id.empty());

  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 9u);
  const Message& u = ev[0].message;
  EXPECT_EQ(u.role, Role::kUser);
  EXPECT_EQ(ev[0].ts_ms, *interop::ParseIsoTime("2025-10-29T00:59:38.320Z"));
  ASSERT_EQ(u.parts.size(), 2u);
  EXPECT_EQ(u.parts[0].text, "What is wrong in this screenshot?");
  ASSERT_EQ(u.parts[1].type, PartType::kImage);
  EXPECT_EQ(*store_->ReadBlob(u.parts[1].resource->content_sha256), png_);

  EXPECT_EQ(ev[1].message.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(ev[1].message.parts[0].text, "**Inspecting the layout**");
  EXPECT_EQ(ev[1].message.model, "gpt-5-codex");

  const Part& call = ev[2].message.parts[0];
  EXPECT_EQ(call.type, PartType::kToolCall);
  EXPECT_EQ(call.tool_call_id, "call_A1");
  EXPECT_EQ(call.tool_name, "shell");
  EXPECT_EQ(json::parse(call.arguments_json)["command"][0], "rg");
  EXPECT_EQ(ev[3].message.role, Role::kTool);
  EXPECT_EQ(ev[3].message.parts[0].tool_call_id, "call_A1");
  EXPECT_NE(ev[3].message.parts[0].text.find("display: flex"), std::string::npos);

  const Part& patch = ev[4].message.parts[0];
  EXPECT_EQ(patch.tool_name, "apply_patch");
  EXPECT_EQ(json::parse(patch.arguments_json)["input"].get<std::string>().rfind("*** Begin Patch", 0),
            0u);
  EXPECT_EQ(ev[5].message.parts[0].type, PartType::kToolResult);
  EXPECT_EQ(ev[5].message.parts[0].tool_call_id, "call_B2");

  const Message& a = ev[6].message;
  EXPECT_EQ(a.role, Role::kAssistant);
  EXPECT_EQ(a.Text(), "The container used flex; now grid.");
  EXPECT_EQ(a.provider, "openai");
  ASSERT_TRUE(a.usage.has_value());
  EXPECT_EQ(a.usage->input_tokens, 4000);
  EXPECT_EQ(a.usage->cached_tokens, 3000);
  EXPECT_EQ(a.usage->output_tokens, 120);
  EXPECT_EQ(a.usage->reasoning_tokens, 64);

  ASSERT_EQ(ev[7].type, EventType::kCompaction);
  EXPECT_EQ(ev[7].compaction.from_seq, 1);
  EXPECT_EQ(ev[7].compaction.to_seq, 7);
  EXPECT_EQ(ev[7].compaction.summary, "Summary: switched the container from flex to grid.");
  EXPECT_EQ(ev[8].message.Text(), "Now the footer");
}

TEST_F(CodexImport, ReimportAddsNothingAndAGrownRolloutAddsItsTail) {
  MustImport(*store_, file_, "codex");
  ImportReport again = MustImport(*store_, file_, "codex");
  EXPECT_EQ(again.sessions_unchanged, 1);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(EventsOf(*store_, kId).size(), 9u);
  AppendFile(file_, Line("2025-10-29T01:11:00.000Z", "response_item",
                         Msg("assistant", json::array({{{"type", "output_text"},
                                                        {"text", "Footer fixed."}}})))
                            .dump() +
                        "\n");
  ImportReport grown = MustImport(*store_, file_, "codex");
  EXPECT_EQ(grown.sessions_extended, 1);
  EXPECT_EQ(grown.messages_added, 1);
  EXPECT_EQ(EventsOf(*store_, kId).back().message.Text(), "Footer fixed.");
}

TEST_F(CodexImport, CorruptLinesAreSkippedWithReasonsAndTheRestImports) {
  std::string t = Rollout(png_);
  t += "{\"timestamp\": \"2025-10-29T01:12:00Z\", \"type\": [oops\n";
  t += Line("2025-10-29T01:12:01.000Z", "response_item",
            Msg("user", json::array({{{"type", "input_text"}, {"text", "bad picture"}},
                                     {{"type", "input_image"},
                                      {"image_url", "data:image/jpeg;base64," +
                                                        blob::Base64Encode("not a jpeg at all")}}})))
           .dump() +
       "\n";
  t += Line("2025-10-29T01:12:02.000Z", "response_item", Msg("user", "x")).dump().substr(0, 40);
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  EXPECT_TRUE(SkippedFor(r, "not a JSON object"));
  EXPECT_TRUE(SkippedFor(r, "cut short"));
  EXPECT_TRUE(SkippedFor(r, "not a readable image") || SkippedFor(r, "said to be an image"));
  EXPECT_EQ(r.records_skipped, 3);
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 10u);
  ASSERT_EQ(ev.back().message.parts.size(), 1u);
  EXPECT_EQ(ev.back().message.Text(), "bad picture");
}

TEST_F(CodexImport, OlderRolloutsWithBareItemsImport) {
  const std::string old = dir_.Sub("rollout-2025-05-01-legacy.jsonl");
  WriteFile(old,
            json{{"id", "5973b6c0-94b8-487b-a530-2aeb6098ae0e"},
                 {"timestamp", "2025-05-01T10:00:00.000Z"},
                 {"instructions", nullptr}}
                    .dump() +
                "\n" + json{{"record_type", "state"}}.dump() + "\n" +
                Msg("user", json::array({{{"type", "input_text"}, {"text", "hello"}}})).dump() +
                "\n" +
                Msg("assistant", json::array({{{"type", "output_text"}, {"text", "hi"}}})).dump() +
                "\n");
  ImportReport r = MustImport(*store_, old, "codex");
  EXPECT_EQ(r.sessions_added, 1);
  std::vector<Event> ev = EventsOf(*store_, "5973b6c0-94b8-487b-a530-2aeb6098ae0e");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].message.Text(), "hello");
  EXPECT_EQ(ev[1].message.role, Role::kAssistant);
}

}  // namespace
}  // namespace sessiondb::testing
