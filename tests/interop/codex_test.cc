// The codex importer on a realistic rollout written by the test: session
// meta, messages with an image, function and custom tool calls and their
// outputs, reasoning, usage from token_count, a compaction, a fork; then
// corruption.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "interop/import_sink.h"
#include "interop/interop_test_support.h"
#include "interop/long_record.h"
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
  l.push_back(Line(
      "2025-10-29T00:59:38.320Z", "response_item",
      Msg("user",
          json::array({{{"type", "input_text"}, {"text", "What is wrong in this screenshot?"}},
                       {{"type", "input_image"},
                        {"image_url", "data:image/png;base64," + blob::Base64Encode(png)}}}))));
  l.push_back(Line("2025-10-29T00:59:38.321Z", "event_msg",
                   {{"type", "user_message"}, {"message", "What is wrong in this screenshot?"}}));
  l.push_back(Line("2025-10-29T00:59:38.322Z", "turn_context",
                   {{"cwd", "/home/dev/app"},
                    {"approval_policy", "on-request"},
                    {"model", "gpt-5-codex"},
                    {"effort", "high"},
                    {"summary", "auto"}}));
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
  l.push_back(Line(
      "2025-10-29T00:59:42.000Z", "response_item",
      {{"type", "function_call_output"},
       {"call_id", "call_A1"},
       {"output", R"({"output":"src/app.css:3: display: flex","metadata":{"exit_code":0}})"}}));
  l.push_back(Line("2025-10-29T00:59:45.000Z", "response_item",
                   {{"type", "custom_tool_call"},
                    {"status", "completed"},
                    {"call_id", "call_B2"},
                    {"name", "apply_patch"},
                    {"input",
                     "*** Begin Patch\n*** Update File: src/app.css\n@@\n-display: flex\n+display: "
                     "grid\n*** End Patch"}}));
  l.push_back(Line("2025-10-29T00:59:46.000Z", "response_item",
                   {{"type", "custom_tool_call_output"},
                    {"call_id", "call_B2"},
                    {"output", "Success. Updated the following files:\nM src/app.css"}}));
  l.push_back(
      Line("2025-10-29T00:59:50.000Z", "response_item",
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
  l.push_back(
      Line("2025-10-29T01:10:05.000Z", "response_item",
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
  EXPECT_EQ(*DetectImportFormat(dir_.Sub("sessions")), ImportFormat::kCodex);
  EXPECT_EQ(*DetectImportFormat(file_), ImportFormat::kCodex);
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
  auto report = ImportPath(
      *store_, dir_.Sub("sessions"),
      {.format = ImportFormat::kCodex,
       .progress = [&](int64_t done, int64_t total) { calls.emplace_back(done, total); }});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 2);
  ExpectOneBarAcrossFiles(calls, {static_cast<int64_t>(std::filesystem::file_size(file_)),
                                  static_cast<int64_t>(std::filesystem::file_size(second_file))});
}

TEST_F(CodexImport, RolloutArrivesFieldByField) {
  ImportReport r = MustImport(*store_, dir_.Sub("sessions"), "");
  EXPECT_EQ(r.format, ImportFormat::kCodex);
  EXPECT_EQ(r.sessions_added, 1);
  EXPECT_EQ(r.images_added, 1);
  EXPECT_EQ(r.records_skipped, 0);
  auto s = store_->GetSession(kId);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->created_ms, *ParseIsoTime("2025-10-29T00:59:38.308Z"));
  json meta = json::parse(s->metadata_json);
  EXPECT_EQ(meta["cwd"], "/home/dev/app");
  EXPECT_EQ(meta["originator"], "codex_cli_rs");
  EXPECT_EQ(meta["git_branch"], "main");
  EXPECT_EQ(meta["forked_from_id"], kParentId);
  EXPECT_EQ(meta["forked_from"], kParentId);
  EXPECT_EQ(meta["git"]["branch"], "main");
  EXPECT_TRUE(s->parent_id.empty());

  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 9u);
  const Message& u = ev[0].message;
  EXPECT_EQ(u.role, Role::kUser);
  EXPECT_EQ(ev[0].ts_ms, *ParseIsoTime("2025-10-29T00:59:38.320Z"));
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
  EXPECT_EQ(
      json::parse(patch.arguments_json)["input"].get<std::string>().rfind("*** Begin Patch", 0),
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
                         Msg("assistant",
                             json::array({{{"type", "output_text"}, {"text", "Footer fixed."}}})))
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
  t +=
      Line("2025-10-29T01:12:01.000Z", "response_item",
           Msg("user", json::array({{{"type", "input_text"}, {"text", "bad picture"}},
                                    {{"type", "input_image"},
                                     {"image_url", "data:image/jpeg;base64," +
                                                       blob::Base64Encode("not a jpeg at all")}}})))
          .dump() +
      "\n";
  t += Line("2025-10-29T01:12:02.000Z", "response_item", Msg("user", "x")).dump().substr(0, 40);
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  EXPECT_TRUE(SkippedFor(r, "the line is not valid JSON: "));
  EXPECT_TRUE(SkippedFor(r, "cut short"));
  EXPECT_TRUE(SkippedFor(r, "not a readable image") || SkippedFor(r, "said to be an image"));
  EXPECT_EQ(r.records_skipped, 3);
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 10u);
  ASSERT_EQ(ev.back().message.parts.size(), 1u);
  EXPECT_EQ(ev.back().message.Text(), "bad picture");
}

TEST_F(CodexImport, EachUnreadableLineIsSkippedWithItsOwnReason) {
  std::string t = Rollout(png_);
  const auto first_bad = static_cast<int>(std::count(t.begin(), t.end(), '\n')) + 1;
  const std::string after =
      Line("2025-10-29T01:12:01.000Z", "response_item", Msg("user", "after the bad lines")).dump();
  t += "{\"timestamp\": \"2025-10-29T01:12:00Z\", \"type\": \"resp\n";  // cut off mid-file
  t += "not json at all\n";
  t += "[1,2]\n";
  t += after + "\n";
  t += after.substr(0, 40);  // cut off by the end of the file
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  // The skip of line `n` of the rollout.
  auto reason_for = [&](int n) -> std::string {
    for (const auto& s : r.skipped) {
      if (s.where.ends_with(".jsonl:" + std::to_string(n))) return s.reason;
    }
    return "(not skipped)";
  };
  EXPECT_TRUE(reason_for(first_bad).starts_with("the line is not valid JSON: "))
      << reason_for(first_bad);
  EXPECT_TRUE(reason_for(first_bad + 1).starts_with("the line is not valid JSON: "))
      << reason_for(first_bad + 1);
  EXPECT_EQ(reason_for(first_bad + 2), "the line is JSON but an array, not an object");
  EXPECT_TRUE(reason_for(first_bad + 4)
                  .starts_with("the last line is cut short (no newline, not whole JSON): "))
      << reason_for(first_bad + 4);
  EXPECT_EQ(r.records_skipped, 4);
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 10u);
  EXPECT_EQ(ev.back().message.Text(), "after the bad lines");
}

TEST_F(CodexImport, ALongLineThatIsJsonButNotAnObjectSaysWhatItIs) {
  std::string t = Rollout(png_);
  const auto long_line = static_cast<int>(std::count(t.begin(), t.end(), '\n')) + 1;
  // Past kLeanParseBytes, so the lean parse reads it.
  t += "[\"" + std::string(interop::kLeanParseBytes + 1, 'x') + "\"]\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  ASSERT_EQ(r.records_skipped, 1);
  EXPECT_TRUE(r.skipped[0].where.ends_with(".jsonl:" + std::to_string(long_line)));
  EXPECT_EQ(r.skipped[0].reason, "the line is JSON but an array, not an object");
  EXPECT_EQ(EventsOf(*store_, kId).size(), 9u);
}

TEST_F(CodexImport, OlderRolloutsWithBareItemsImport) {
  const std::string old = dir_.Sub("rollout-2025-05-01-legacy.jsonl");
  WriteFile(
      old,
      json{{"id", "5973b6c0-94b8-487b-a530-2aeb6098ae0e"},
           {"timestamp", "2025-05-01T10:00:00.000Z"},
           {"instructions", nullptr}}
              .dump() +
          "\n" + json{{"record_type", "state"}}.dump() + "\n" +
          Msg("user", json::array({{{"type", "input_text"}, {"text", "hello"}}})).dump() + "\n" +
          Msg("assistant", json::array({{{"type", "output_text"}, {"text", "hi"}}})).dump() + "\n");
  ImportReport r = MustImport(*store_, old, "codex");
  EXPECT_EQ(r.sessions_added, 1);
  std::vector<Event> ev = EventsOf(*store_, "5973b6c0-94b8-487b-a530-2aeb6098ae0e");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].message.Text(), "hello");
  EXPECT_EQ(ev[1].message.role, Role::kAssistant);
}

json UserText(const std::string& text) {
  return Msg("user", json::array({{{"type", "input_text"}, {"text", text}}}));
}

// A compacted record's replacement_history is the history Codex continued
// from; it was dropped, and the compaction's summary stood alone (or was
// "Conversation compacted" when the record's message was empty, as a
// server-side compaction leaves it). Now the summary carries it.
TEST_F(CodexImport, ACompactionCarriesItsReplacementHistory) {
  const std::string prefix =
      "Another language model started to solve this problem and produced a summary of its "
      "thinking process.\n";
  std::string t = Rollout(png_);
  // A local compaction: the summary is also the last item of the history.
  t = t.substr(0, t.find("{\"payload\":{\"message\":\"Summary:"));
  ASSERT_NE(t.find("token_count"), std::string::npos);
  t += Line("2025-10-29T01:10:00.000Z", "compacted",
            {{"message", "Summary: switched the container from flex to grid."},
             {"replacement_history",
              json::array(
                  {UserText("<environment_context>\n  <cwd>/home/dev/app</cwd>\n"
                            "</environment_context>"),
                   UserText("What is wrong in this screenshot?"),
                   UserText(prefix + "Summary: switched the container from flex to grid.")})}})
           .dump() +
       "\n";
  t += Line("2025-10-29T01:10:05.000Z", "response_item", UserText("Now the footer")).dump() + "\n";
  // A server-side compaction: no message, and an encrypted item.
  t += Line("2025-10-29T02:00:00.000Z", "compacted",
            {{"message", ""},
             {"replacement_history",
              json::array({UserText("Now the footer"),
                           {{"type", "compaction"}, {"encrypted_content", "gAAAAB..."}}})}})
           .dump() +
       "\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 10u);
  ASSERT_EQ(ev[7].type, EventType::kCompaction);
  const Compaction& local = ev[7].compaction;
  EXPECT_EQ(local.to_seq, 7);
  EXPECT_NE(local.summary.find("user: What is wrong in this screenshot?"), std::string::npos)
      << local.summary;
  EXPECT_NE(local.summary.find("<environment_context>"), std::string::npos);
  // The summary is in the history already: it is not said twice.
  const std::string said = "Summary: switched the container from flex to grid.";
  const size_t first = local.summary.find(said);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(local.summary.find(said, first + 1), std::string::npos);
  EXPECT_TRUE(local.limitations.empty()) << local.limitations;

  ASSERT_EQ(ev[9].type, EventType::kCompaction);
  const Compaction& remote = ev[9].compaction;
  EXPECT_EQ(remote.from_seq, 1);
  EXPECT_EQ(remote.to_seq, 9);
  EXPECT_EQ(remote.summary, "user: Now the footer");
  EXPECT_NE(remote.limitations.find("1 item"), std::string::npos) << remote.limitations;
  EXPECT_NE(remote.limitations.find("encrypted"), std::string::npos);
}

// A compaction before any event stands in for nothing: it is said so, not
// dropped in silence.
TEST_F(CodexImport, ACompactionBeforeAnyEventIsSkippedWithItsReason) {
  std::string t = Rollout(png_);
  const size_t meta_end = t.find('\n') + 1;
  t.insert(meta_end,
           Line("2025-10-29T00:59:38.318Z", "compacted", {{"message", "early"}}).dump() + "\n");
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  EXPECT_TRUE(SkippedFor(r, "nothing for it to stand in for"));
  EXPECT_EQ(EventsOf(*store_, kId).size(), 9u);
}

// Codex writes the developer instructions, AGENTS.md and the environment as
// the first messages of a rollout; the session was titled with the
// developer instructions. The first message the person typed names it.
TEST_F(CodexImport, TheFirstRealUserMessageNamesTheSession) {
  std::string t = Rollout(png_);
  const size_t meta_end = t.find('\n') + 1;
  std::string context;
  for (const json& item :
       {Msg("developer", json::array({{{"type", "input_text"},
                                       {"text",
                                        "<permissions instructions>\nFilesystem "
                                        "sandboxing: workspace-write.\n"
                                        "</permissions instructions>"}}})),
        UserText("# AGENTS.md instructions for /home/dev/app\n\n<INSTRUCTIONS>\nRun make "
                 "test.\n</INSTRUCTIONS>"),
        UserText("<environment_context>\n  <cwd>/home/dev/app</cwd>\n  <shell>zsh</shell>\n"
                 "</environment_context>")}) {
    context += Line("2025-10-29T00:59:38.319Z", "response_item", item).dump() + "\n";
  }
  t.insert(meta_end, context);
  WriteFile(file_, t);
  MustImport(*store_, file_, "codex");
  auto s = store_->GetSession(kId);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->title, "What is wrong in this screenshot?");
  EXPECT_EQ(s->preview, "What is wrong in this screenshot?");
  // Nothing is left out for it: the context messages are events as before.
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 12u);
  EXPECT_EQ(ev[0].message.role, Role::kSystem);
  EXPECT_EQ(ev[3].message.Text(), "What is wrong in this screenshot?");
}

// A rollout whose user never typed (only context, an answer) still imports
// whole: the events that waited for a title are handed over at its end.
TEST_F(CodexImport, ARolloutWithNoRealUserMessageStillImportsWhole) {
  std::string t = Rollout(png_).substr(0, Rollout(png_).find('\n') + 1);
  t += Line("2025-10-29T00:59:39.000Z", "response_item",
            UserText("<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>"))
           .dump() +
       "\n";
  t += Line("2025-10-29T00:59:40.000Z", "response_item",
            Msg("assistant", json::array({{{"type", "output_text"}, {"text", "Ready."}}})))
           .dump() +
       "\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  EXPECT_EQ(r.sessions_added, 1);
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].message.Text(), "Ready.");
}

// A line without a timestamp took the time 0 (1970) when no event before it
// had one. It takes the time of the line before it, or, before any, of the
// first line after it that has one.
TEST_F(CodexImport, LinesWithoutATimestampTakeTheirNeighboursTime) {
  auto untimed = [](json line) {
    line.erase("timestamp");
    return line.dump() + "\n";
  };
  std::string t = untimed(Line("", "session_meta", {{"id", kId}, {"cwd", "/home/dev/app"}}));
  t += untimed(Line("", "response_item", UserText("<environment_context/>")));
  t += untimed(Line("", "response_item", UserText("Fix the footer")));
  t += Line("2025-10-29T01:00:00.000Z", "turn_context", {{"model", "gpt-5-codex"}}).dump() + "\n";
  t +=
      untimed(Line("", "response_item",
                   Msg("assistant", json::array({{{"type", "output_text"}, {"text", "On it."}}}))));
  t += Line("2025-10-29T01:00:07.000Z", "response_item",
            Msg("assistant", json::array({{{"type", "output_text"}, {"text", "Done."}}})))
           .dump() +
       "\n";
  WriteFile(file_, t);
  MustImport(*store_, file_, "codex");
  const int64_t first = *ParseIsoTime("2025-10-29T01:00:00Z");
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].ts_ms, first);  // the next line's: the turn_context's
  EXPECT_EQ(ev[1].ts_ms, first);
  EXPECT_EQ(ev[2].ts_ms, first);  // the line before's
  EXPECT_EQ(ev[3].ts_ms, first + 7000);
  EXPECT_EQ(store_->GetSession(kId)->created_ms, first);
}

// With no time anywhere in the rollout, its events take the time its
// session_meta gives, not 1970.
TEST_F(CodexImport, ARolloutWithNoTimestampsTakesItsSessionsTime) {
  std::string t = json{{"type", "session_meta"},
                       {"payload", {{"id", kId}, {"timestamp", "2025-10-29T00:59:38.308Z"}}}}
                      .dump() +
                  "\n";
  t += json{{"type", "response_item"}, {"payload", UserText("Fix the footer")}}.dump() + "\n";
  WriteFile(file_, t);
  MustImport(*store_, file_, "codex");
  std::vector<Event> ev = EventsOf(*store_, kId);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].ts_ms, *ParseIsoTime("2025-10-29T00:59:38.308Z"));
}

// A rollout whose file name is not UTF-8 (a Latin-1 folder) and whose meta
// has no id: the name went into the session's metadata and its dump()
// ended the process (type_error 316). It is kept with U+FFFD.
TEST_F(CodexImport, AFileNameThatIsNotUtf8IsKeptWithAReplacementCharacter) {
  const std::string file = dir_.Sub("rollout-caf\xE9.jsonl");
  WriteFile(file, json{{"timestamp", "2025-10-29T00:59:38.317Z"},
                       {"type", "session_meta"},
                       {"payload", {{"cwd", "/home/dev/app"}}}}
                          .dump() +
                      "\n" +
                      Line("2025-10-29T00:59:39.000Z", "response_item", UserText("hello")).dump() +
                      "\n");
  ImportReport r = MustImport(*store_, file, "codex");
  EXPECT_EQ(r.sessions_added, 1);
  std::vector<Session> all = AllSessions(*store_);
  ASSERT_EQ(all.size(), 1u);
  json meta = json::parse(all[0].metadata_json);
  EXPECT_EQ(meta["source_file"], "rollout-caf\xEF\xBF\xBD.jsonl");
  EXPECT_EQ(meta["source_session_id"], "rollout-caf\xEF\xBF\xBD");
}

// A rollout with nothing to import (Codex started and quit: its meta, with
// no time of its own, and events that show nothing) made an empty "New
// Session" dated 1970 although its lines carry times. It makes no session,
// and the report says why.
TEST_F(CodexImport, ARolloutWithNothingImportableMakesNoSessionAndSaysSo) {
  std::string t = Line("2025-10-29T00:59:38.317Z", "session_meta",
                       {{"id", kId}, {"cwd", "/home/dev/app"}, {"source", "cli"}})
                      .dump() +
                  "\n";
  t += Line("2025-10-29T00:59:38.400Z", "turn_context", {{"model", "gpt-5-codex"}}).dump() + "\n";
  t +=
      Line("2025-10-29T00:59:39.000Z", "event_msg", {{"type", "session_configured"}}).dump() + "\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  EXPECT_EQ(r.sessions_added, 0);
  EXPECT_EQ(r.records_skipped, 1);
  EXPECT_TRUE(SkippedFor(r, "no session is made"))
      << (r.skipped.empty() ? "" : r.skipped[0].reason);
  EXPECT_TRUE(AllSessions(*store_).empty());
  // The rest of a sessions tree still comes in.
  const std::string other =
      day_ + "/rollout-2025-10-29T01-00-00-" + std::string(kParentId) + ".jsonl";
  WriteFile(other, Rollout(png_));
  ImportReport tree = MustImport(*store_, dir_.Sub("sessions"), "codex");
  EXPECT_EQ(tree.sessions_added, 1);
  EXPECT_EQ(AllSessions(*store_).size(), 1u);
}

// A sub-agent's rollout: its session_meta (source subagent) is written when
// it is spawned, after the history it was handed, which comes first with
// its own older times. The session was updated before it was created.
TEST_F(CodexImport, ASubAgentSessionIsNeverUpdatedBeforeItWasCreated) {
  std::string t = Line("2025-10-29T01:05:00.000Z", "session_meta",
                       {{"id", kId},
                        {"timestamp", "2025-10-29T01:05:00.000Z"},
                        {"cwd", "/home/dev/app"},
                        {"source", {{"subagent", "review"}}},
                        {"forked_from_id", kParentId}})
                      .dump() +
                  "\n";
  t += Line("2025-10-29T00:59:38.320Z", "response_item", UserText("Review the footer change"))
           .dump() +
       "\n";
  t += Line("2025-10-29T00:59:50.000Z", "response_item",
            Msg("assistant", json::array({{{"type", "output_text"}, {"text", "Looks right."}}})))
           .dump() +
       "\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "codex");
  EXPECT_EQ(r.sessions_added, 1);
  auto s = store_->GetSession(kId);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->created_ms, *ParseIsoTime("2025-10-29T01:05:00Z"));
  EXPECT_GE(s->updated_ms, s->created_ms);
  EXPECT_EQ(EventsOf(*store_, kId).size(), 2u);
}

}  // namespace
}  // namespace sessiondb::testing
