// The histories of foreign_histories.h. Field names, nesting and quirks
// follow what each tool writes (see docs/interop.md for each format); the
// content is made up.
#include "projection/foreign_histories.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "projection/window_checks.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kMarker = kReasoningMarker;

void Write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string Lines(const std::vector<json>& records) {
  std::string out;
  for (const json& r : records) out += r.dump() + "\n";
  return out;
}

// ---- claude-code ------------------------------------------------------------

class ClaudeCodeTranscript {
 public:
  explicit ClaudeCodeTranscript(std::string session) : session_(std::move(session)) {}

  static std::string Uuid(int n) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "cccccccc-0000-4000-8000-%012d", n);
    return buf;
  }

  // A record with `uuid` n whose parent is `parent` (0: none).
  json& Record(const std::string& type, int uuid, int parent, json message) {
    records_.push_back({{"parentUuid", parent ? json(Uuid(parent)) : json(nullptr)},
                        {"isSidechain", false},
                        {"userType", "external"},
                        {"cwd", "/home/dev/app"},
                        {"sessionId", session_},
                        {"version", "1.0.98"},
                        {"gitBranch", "main"},
                        {"type", type},
                        {"message", std::move(message)},
                        {"uuid", Uuid(uuid)},
                        {"timestamp", Time(uuid)}});
    return records_.back();
  }

  // One content block of the response `msg_id`, as Claude Code writes it: a
  // record per block, all with the same message id and usage.
  json& Assistant(int uuid, int parent, const std::string& msg_id, json block) {
    json& r = Record("assistant", uuid, parent,
                     {{"id", msg_id},
                      {"type", "message"},
                      {"role", "assistant"},
                      {"model", "claude-sonnet-4-20250514"},
                      {"content", json::array({std::move(block)})},
                      {"stop_reason", nullptr},
                      {"stop_sequence", nullptr},
                      {"usage",
                       {{"input_tokens", 4},
                        {"cache_creation_input_tokens", 310},
                        {"cache_read_input_tokens", 14000},
                        {"output_tokens", 120},
                        {"service_tier", "standard"}}}});
    r["requestId"] = "req_011C" + msg_id;
    return r;
  }

  json& User(int uuid, int parent, json content) {
    return Record("user", uuid, parent, {{"role", "user"}, {"content", std::move(content)}});
  }

  // A tool's answer: a user record with one tool_result, and Claude Code's
  // own copy of it in toolUseResult.
  json& Result(int uuid, int parent, const std::string& tool_use_id, json content,
               bool is_error = false) {
    json& r = User(uuid, parent,
                   json::array({{{"tool_use_id", tool_use_id},
                                 {"type", "tool_result"},
                                 {"content", std::move(content)},
                                 {"is_error", is_error}}}));
    r["toolUseResult"] = {{"stdout", "..."}, {"stderr", ""}, {"interrupted", false}};
    return r;
  }

  void Raw(json record) { records_.push_back(std::move(record)); }
  std::string Text() const { return Lines(records_); }

 private:
  static std::string Time(int n) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "2025-08-01T10:%02d:%02d.000Z", (n / 60) % 60, n % 60);
    return buf;
  }

  std::string session_;
  std::vector<json> records_;
};

json TextBlock(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

json ToolUse(const std::string& id, const std::string& name, json input) {
  return {{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", std::move(input)}};
}

// Parallel calls written as Claude Code does: one response, a record per
// block (thinking, text, two tool_use), then one user record per result, in
// one parentUuid chain; a server-side web search with its own result block;
// an interrupted tool; a compaction; an edited prompt (a side branch); an
// answer ending with a newline.
ForeignHistory ClaudeCodeParallelCalls(const fs::path& dir) {
  const std::string sid = "7e1f0c2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b";
  ClaudeCodeTranscript t(sid);
  t.Raw({{"type", "summary"}, {"summary", "Fix the flaky test"}, {"leafUuid", t.Uuid(30)}});
  t.User(1, 0, "The test in parser_test.cc is flaky. Why?");
  t.Assistant(2, 1, "msg_01A",
              {{"type", "thinking"},
               {"thinking", kMarker + " I should read the test and the parser together."},
               {"signature", "EqQBCkYIBxgCKkBsig01+/=="}});
  t.Assistant(3, 2, "msg_01A", TextBlock("Let me read both files."));
  t.Assistant(4, 3, "msg_01A",
              ToolUse("toolu_01Read1", "Read", {{"file_path", "/home/dev/app/parser_test.cc"}}));
  t.Assistant(5, 4, "msg_01A",
              ToolUse("toolu_01Read2", "Read", {{"file_path", "/home/dev/app/parser.cc"}}));
  t.Result(6, 5, "toolu_01Read1",
           json::array({{{"type", "text"}, {"text", "1\tint Parse() {"}},
                        {{"type", "image"},
                         {"source",
                          {{"type", "base64"},
                           {"media_type", "image/png"},
                           {"data", blob::Base64Encode(MakePng(2, 2, "cc-result"))}}}}}));
  t.Result(7, 6, "toolu_01Read2", "1\tTEST(Parser, Works) {\n2\t  srand(time(0));\n");
  t.Assistant(8, 7, "msg_01B", TextBlock("The test seeds rand with the time.\n"));
  t.User(9, 8, "Search the web for a fix, then run the tests.");
  t.Assistant(10, 9, "msg_01C",
              {{"type", "server_tool_use"},
               {"id", "srvtoolu_01Web"},
               {"name", "web_search"},
               {"input", {{"query", "deterministic rand gtest"}}}});
  t.Assistant(11, 10, "msg_01C",
              {{"type", "web_search_tool_result"},
               {"tool_use_id", "srvtoolu_01Web"},
               {"content", json::array()}});
  t.Assistant(12, 11, "msg_01C", ToolUse("toolu_01Bash", "Bash", {{"command", "make test"}}));
  t.Result(13, 12, "toolu_01Bash",
           "The user doesn't want to proceed with this tool use. The tool use was rejected.",
           /*is_error=*/true);
  t.User(14, 13, json::array({TextBlock("[Request interrupted by user for tool use]")}));
  t.User(15, 14, "Stop, then tell me where you are.  \n");
  t.Assistant(16, 15, "msg_01D", TextBlock("Stopped. "));
  t.Raw({{"parentUuid", nullptr},
         {"logicalParentUuid", t.Uuid(16)},
         {"isSidechain", false},
         {"sessionId", sid},
         {"type", "system"},
         {"subtype", "compact_boundary"},
         {"content", "Conversation compacted"},
         {"uuid", t.Uuid(17)},
         {"timestamp", "2025-08-01T10:00:17.000Z"}});
  json& summary = t.User(18, 17,
                         "This session is being continued from a previous conversation. "
                         "Summary: the test seeds rand with the time.");
  summary["isCompactSummary"] = true;
  t.User(19, 18, "Now fix it.");
  t.Assistant(20, 19, "msg_01E",
              ToolUse("toolu_01Edit", "Edit",
                      {{"file_path", "/home/dev/app/parser_test.cc"},
                       {"old_string", "srand(time(0));"},
                       {"new_string", "srand(42);"}}));
  t.Result(21, 20, "toolu_01Edit", "The file has been updated.");
  t.Assistant(30, 21, "msg_01F", TextBlock("Fixed: the seed is fixed."));
  // The user edited the prompt of record 9: a side branch from record 8.
  t.User(40, 8, "Just run the tests.");
  t.Assistant(41, 40, "msg_01G", ToolUse("toolu_01Run", "Bash", {{"command", "make test"}}));
  t.Result(42, 41, "toolu_01Run", "ok");
  const fs::path file = dir / "claude-code" / "-home-dev-app" / (sid + ".jsonl");
  Write(file, t.Text());
  return {"claude-code", "parallel calls, a record per block and per result", file};
}

// Parallel calls whose results each name their own tool_use record as
// parent, as some Claude Code versions write them: the first result sits on
// a side branch of its own.
ForeignHistory ClaudeCodeResultsOnTheirCalls(const fs::path& dir) {
  const std::string sid = "8f2a1d3b-6c7e-4f90-8b1c-2d3e4f5a6b7c";
  ClaudeCodeTranscript t(sid);
  t.User(1, 0, "List the two folders.");
  t.Assistant(2, 1, "msg_02A", ToolUse("toolu_02Ls1", "Bash", {{"command", "ls src"}}));
  t.Assistant(3, 2, "msg_02A", ToolUse("toolu_02Ls2", "Bash", {{"command", "ls tests"}}));
  t.Result(4, 2, "toolu_02Ls1", "a.cc\nb.cc");
  t.Result(5, 3, "toolu_02Ls2", "a_test.cc");
  t.Assistant(6, 5, "msg_02B", TextBlock("src has two files, tests one."));
  const fs::path file = dir / "claude-code-tree" / "-home-dev-app" / (sid + ".jsonl");
  Write(file, t.Text());
  return {"claude-code", "parallel results parented on their own calls", file};
}

// ---- codex ------------------------------------------------------------------

ForeignHistory CodexRollout(const fs::path& dir) {
  const std::string id = "0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
  std::vector<json> r;
  int second = 0;
  auto line = [&](const std::string& type, json payload) {
    char ts[40];
    std::snprintf(ts, sizeof ts, "2025-09-02T08:%02d:%02d.123Z", second / 60, second % 60);
    ++second;
    r.push_back({{"timestamp", ts}, {"type", type}, {"payload", std::move(payload)}});
  };
  auto message = [](const std::string& role, const std::string& kind, const std::string& text) {
    return json{{"type", "message"},
                {"role", role},
                {"content", json::array({{{"type", kind}, {"text", text}}})}};
  };
  const std::string long_call = "codex_mcp__hermes-tools__exec_command_exec-" + id;
  line("session_meta", {{"id", id},
                        {"timestamp", "2025-09-02T08:00:00.000Z"},
                        {"cwd", "/home/dev/app"},
                        {"originator", "codex_cli_rs"},
                        {"cli_version", "0.30.0"},
                        {"instructions", nullptr},
                        {"model_provider", "openai"}});
  line("response_item", message("developer", "input_text", "You are Codex, a coding agent."));
  line("response_item", message("user", "input_text",
                                "<environment_context>cwd=/home/dev/app</environment_context>"));
  line("turn_context", {{"cwd", "/home/dev/app"}, {"model", "gpt-5-codex"}});
  line("response_item", message("user", "input_text", "Why does the build fail?"));
  line("response_item",
       {{"type", "reasoning"},
        {"summary",
         json::array({{{"type", "summary_text"}, {"text", kMarker + " **Reading the log**"}}})},
        {"content", nullptr},
        {"encrypted_content", "gAAAAABoEncryptedOne=="}});
  line("response_item", {{"type", "function_call"},
                         {"name", "shell"},
                         {"arguments", R"({"command":["cat","build.log"]})"},
                         {"call_id", "call_aB3dE5fG7hI9jK1lM3nO5pQ7"}});
  line("response_item", {{"type", "function_call"},
                         {"name", "shell"},
                         {"arguments", R"({"command":["cat","CMakeLists.txt"]})"},
                         {"call_id", long_call}});
  line("response_item",
       {{"type", "function_call_output"},
        {"call_id", "call_aB3dE5fG7hI9jK1lM3nO5pQ7"},
        {"output", R"({"output":"error: missing fmt","metadata":{"exit_code":0}})"}});
  line("response_item", {{"type", "function_call_output"},
                         {"call_id", long_call},
                         {"output", {{"content", "project(app)"}, {"success", true}}}});
  line("event_msg", {{"type", "token_count"},
                     {"info",
                      {{"last_token_usage",
                        {{"input_tokens", 900},
                         {"cached_input_tokens", 800},
                         {"output_tokens", 60},
                         {"reasoning_output_tokens", 30}}}}}});
  line("response_item", {{"type", "reasoning"},
                         {"summary", json::array()},
                         {"content", nullptr},
                         {"encrypted_content", "gAAAAABoEncryptedOnly=="}});
  line("response_item", {{"type", "web_search_call"},
                         {"id", "ws_0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071"},
                         {"status", "completed"},
                         {"action", {{"type", "search"}, {"query", "fmt cmake"}}}});
  line("response_item", {{"type", "custom_tool_call"},
                         {"status", "completed"},
                         {"call_id", "call_Pt1"},
                         {"name", "apply_patch"},
                         {"input",
                          "*** Begin Patch\n*** Update File: CMakeLists.txt\n"
                          "@@\n+find_package(fmt)\n*** End Patch\n"}});
  line("response_item", {{"type", "custom_tool_call_output"},
                         {"call_id", "call_Pt1"},
                         {"output", "Success. Updated the following files:\nM CMakeLists.txt\n"}});
  line("response_item",
       message("assistant", "output_text", "The build needed fmt; CMakeLists.txt now finds it."));
  line("compacted", {{"message", "The user asked why the build failed; fmt was missing."}});
  line("response_item", message("user", "input_text", "Thanks. Run the tests."));
  line("response_item", {{"type", "local_shell_call"},
                         {"call_id", "call_Sh1"},
                         {"status", "completed"},
                         {"action", {{"type", "exec"}, {"command", {"ctest"}}}}});
  line(
      "response_item",
      {{"type", "function_call_output"}, {"call_id", "call_Sh1"}, {"output", "100% tests passed"}});
  line("response_item", {{"type", "function_call"},
                         {"name", "shell"},
                         {"arguments", R"({"command":["git","status"]})"},
                         {"call_id", "call_Pending"}});
  const fs::path file =
      dir / "codex" / "2025" / "09" / "02" / ("rollout-2025-09-02T08-00-00-" + id + ".jsonl");
  Write(file, Lines(r));
  return {"codex", "parallel calls, long ids, encrypted reasoning, a call left open", file};
}

// ---- chatgpt ----------------------------------------------------------------

json GptMessage(const std::string& id, const std::string& role, double t, json content,
                const std::string& recipient = "all", const std::string& name = "") {
  return {{"id", id},
          {"author",
           {{"role", role},
            {"name", name.empty() ? json(nullptr) : json(name)},
            {"metadata", json::object()}}},
          {"create_time", t},
          {"update_time", nullptr},
          {"content", std::move(content)},
          {"status", "finished_successfully"},
          {"end_turn", recipient == "all"},
          {"weight", 1.0},
          {"metadata", {{"model_slug", "gpt-4o"}}},
          {"recipient", recipient}};
}

json GptText(const std::string& t) { return {{"content_type", "text"}, {"parts", {t}}}; }

json GptNode(const std::string& id, json message, const char* parent, json children) {
  return {{"id", id},
          {"message", std::move(message)},
          {"parent", parent ? json(parent) : json(nullptr)},
          {"children", std::move(children)}};
}

ForeignHistory ChatGptExport(const fs::path& dir) {
  json m = json::object();
  m["root"] = GptNode("root", nullptr, nullptr, {"u1"});
  m["u1"] = GptNode("u1", GptMessage("u1", "user", 1717000001, GptText("Find flights to Lisbon")),
                    "root", {"th"});
  m["th"] = GptNode(
      "th",
      GptMessage(
          "th", "assistant", 1717000002,
          {{"content_type", "thoughts"},
           {"thoughts", json::array({{{"summary", "Plan"}, {"content", kMarker + " search"}}})}}),
      "u1", {"c1"});
  m["c1"] = GptNode("c1",
                    GptMessage("c1", "assistant", 1717000003,
                               {{"content_type", "code"}, {"text", "search(\"Lisbon flights\")"}},
                               "browser.search"),
                    "th", {"t1"});
  m["t1"] =
      GptNode("t1",
              GptMessage("t1", "tool", 1717000004,
                         {{"content_type", "tether_browsing_display"}, {"result", "3 results"}},
                         "all", "browser"),
              "c1", {"t2"});
  m["t2"] = GptNode("t2",
                    GptMessage("t2", "tool", 1717000005,
                               {{"content_type", "tether_quote"}, {"text", "TAP 09:40 129 EUR"}},
                               "all", "browser"),
                    "t1", {"a1", "a1b"});
  m["a1"] = GptNode("a1", GptMessage("a1", "assistant", 1717000006, GptText("TAP at 09:40.")), "t2",
                    {"u2"});
  m["a1b"] = GptNode("a1b", GptMessage("a1b", "assistant", 1717000007, GptText("One flight.")),
                     "t2", json::array());
  m["u2"] =
      GptNode("u2", GptMessage("u2", "user", 1717000010, GptText("Plot the prices")), "a1", {"c2"});
  m["c2"] = GptNode("c2",
                    GptMessage("c2", "assistant", 1717000011,
                               {{"content_type", "code"}, {"text", "plot([129])"}}, "python"),
                    "u2", {"t3"});
  m["t3"] = GptNode(
      "t3",
      GptMessage("t3", "tool", 1717000012,
                 {{"content_type", "execution_output"}, {"text", "<plot>"}}, "all", "python"),
      "c2", {"a2"});
  m["a2"] = GptNode("a2", GptMessage("a2", "assistant", 1717000013, GptText("Here is the plot.")),
                    "t3", json::array());
  json conversation = {{"title", "Lisbon flights"},
                       {"create_time", 1717000000.5},
                       {"update_time", 1717000013.0},
                       {"mapping", m},
                       {"current_node", "a2"},
                       {"conversation_id", "6801a2b3-c4d5-8000-9000-0123456789ab"},
                       {"id", "6801a2b3-c4d5-8000-9000-0123456789ab"},
                       {"default_model_slug", "gpt-4o"}};
  const fs::path file = dir / "chatgpt" / "conversations.json";
  Write(file, json::array({conversation}).dump());
  return {"chatgpt", "dotted tool names, a call answered twice, a branch", file};
}

// ---- claude-ai --------------------------------------------------------------

ForeignHistory ClaudeAiExport(const fs::path& dir) {
  auto msg = [](int n, const std::string& parent, const std::string& sender, json content) {
    char uuid[40];
    std::snprintf(uuid, sizeof uuid, "5b5b5b5b-0000-4000-8000-%012d", n);
    return json{{"uuid", uuid},
                {"text", ""},
                {"content", std::move(content)},
                {"sender", sender},
                {"index", n},
                {"created_at", "2025-03-01T09:00:0" + std::to_string(n) + ".000000Z"},
                {"updated_at", "2025-03-01T09:00:0" + std::to_string(n) + ".000000Z"},
                {"truncated", false},
                {"attachments", json::array()},
                {"files", json::array()},
                {"parent_message_uuid", parent}};
  };
  json messages = json::array();
  messages.push_back(msg(1, "00000000-0000-4000-8000-000000000000", "human",
                         json::array({TextBlock("What changed in C++26?")})));
  // Claude.ai runs its tools itself: the call and its result sit in the
  // assistant's own message, and an id may be missing.
  messages.push_back(msg(
      2, messages[0]["uuid"], "assistant",
      json::array(
          {{{"type", "thinking"}, {"thinking", kMarker + " search"}},
           TextBlock("Let me search."),
           {{"type", "tool_use"}, {"name", "web_search"}, {"input", {{"query", "C++26 features"}}}},
           {{"type", "tool_result"},
            {"name", "web_search"},
            {"content", json::array({TextBlock("reflection, contracts")})},
            {"is_error", false}},
           TextBlock("Reflection and contracts."),
           {{"type", "tool_use"},
            {"id", "toolu_01Fetch"},
            {"name", "web_fetch"},
            {"input", {{"url", "https://isocpp.org"}}}},
           {{"type", "tool_result"},
            {"tool_use_id", "toolu_01Fetch"},
            {"content", json::array()},
            {"is_error", true}},
           TextBlock("The fetch failed.")})));
  messages.push_back(msg(3, messages[1]["uuid"], "human", json::array({TextBlock("Thanks")})));
  json conversation = {{"uuid", "3c3c3c3c-1d2e-4f3a-9b8c-7d6e5f4a3b2c"},
                       {"name", "C++26"},
                       {"created_at", "2025-03-01T09:00:00.000000Z"},
                       {"updated_at", "2025-03-01T09:00:03.000000Z"},
                       {"chat_messages", messages}};
  const fs::path file = dir / "claude-ai" / "conversations.json";
  Write(file, json::array({conversation}).dump());
  return {"claude-ai", "calls and results inside one assistant message", file};
}

// ---- ac-dc ------------------------------------------------------------------

ForeignHistory AcdcHistory(const fs::path& dir) {
  std::vector<json> r;
  auto rec = [&](const std::string& id, const std::string& role, const std::string& text) {
    r.push_back({{"id", id},
                 {"session_id", "sess_1754000000000_a1b2c3"},
                 {"timestamp", "2025-08-01T12:00:0" + std::to_string(r.size()) + "Z"},
                 {"role", role},
                 {"content", text}});
    return &r.back();
  };
  rec("1754000000000-aaaa0001", "user", "Rename Foo to Bar");
  json* a = rec("1754000000001-aaaa0002", "assistant", "Done.\n\n");
  (*a)["files_modified"] = {"src/foo.cc"};
  json* s = rec("1754000000002-aaaa0003", "user", "Committed as abc123");
  (*s)["system_event"] = true;
  rec("1754000000003-aaaa0004", "assistant", "Anything else?");
  const fs::path file = dir / ".ac-dc" / "history.jsonl";
  Write(file, Lines(r));
  return {"ac-dc", "text turns and a system event", dir / ".ac-dc"};
}

// ---- pixir ------------------------------------------------------------------

ForeignHistory PixirLog(const fs::path& dir) {
  const std::string sid = "ses_01jy7r9x5n3m";
  std::vector<json> r;
  auto event = [&](const std::string& type, json data) {
    r.push_back({{"id", "evt_" + std::to_string(r.size() + 1)},
                 {"session_id", sid},
                 {"seq", static_cast<int>(r.size() + 1)},
                 {"ts", "2026-06-10T09:00:" + std::to_string(10 + r.size()) + ".000Z"},
                 {"type", type},
                 {"data", std::move(data)}});
  };
  event("user_message", {{"text", "Run the linter and the tests"}});
  event("tool_call",
        {{"call_id", "functions.Bash:0"}, {"name", "bash"}, {"args", {{"command", "make lint"}}}});
  event("tool_call",
        {{"call_id", "functions.Bash:1"}, {"name", "bash"}, {"args", {{"command", "make test"}}}});
  event("tool_result", {{"call_id", "functions.Bash:0"}, {"ok", true}, {"output", "clean"}});
  event("tool_result", {{"call_id", "functions.Bash:1"},
                        {"ok", false},
                        {"error", {{"kind", "exit"}, {"message", ""}}}});
  event("tool_result", {{"call_id", "call_from_a_crashed_run"}, {"ok", true}, {"output", "stale"}});
  event("assistant_message", {{"text", "Lint is clean; the tests fail."}});
  event("history_compaction", {{"strategy", "deterministic_v1"},
                               {"range", {{"from_seq", 1}, {"to_seq", 3}}},
                               {"summary", "The user asked for lint and tests."},
                               {"limitations", {"Not a semantic substitute."}}});
  event("user_message", {{"text", "Fix them"}});
  event("tool_call",
        {{"call_id", "call with spaces"}, {"name", "edit.file"}, {"args", {{"path", "a.cc"}}}});
  const fs::path file = dir / ".pixir" / "sessions" / (sid + ".ndjson");
  Write(file, Lines(r));
  return {"pixir", "ids no provider accepts, an orphan result, a call left open", dir / ".pixir"};
}

// ---- agents-kt --------------------------------------------------------------

ForeignHistory AgentsKtSnapshot(const fs::path& dir) {
  json messages = json::array(
      {{{"role", "system"}, {"content", "You are a support agent."}},
       {{"role", "user"}, {"content", "Where is order 42?"}},
       {{"role", "assistant"},
        {"content", ""},
        {"toolCalls", json::array({{{"name", "lookup_order"}, {"arguments", {{"id", 42}}}},
                                   {{"name", "lookup_carrier"}, {"arguments", {{"id", 42}}}}})}},
       {{"role", "tool"}, {"content", "shipped"}},
       {{"role", "tool"}, {"content", "DHL"}},
       {{"role", "tool"}, {"content", "a reply no call asked for"}},
       {{"role", "assistant"}, {"content", "It shipped with DHL."}}});
  json snapshot = {{"requestId", "req-77"},
                   {"sessionId", "support-77"},
                   {"manifestHash", nullptr},
                   {"pendingInterruptCallId", nullptr},
                   {"pendingApprovalGate", false},
                   {"turns", 2},
                   {"toolCalls", 2},
                   {"toolCallLimit", 8},
                   {"tokens", nullptr},
                   {"memory", json::object()},
                   {"messages", messages}};
  const fs::path file = dir / "agents-kt" / (blob::Sha256Hex("support-77") + ".json");
  Write(file, snapshot.dump());
  return {"agents-kt", "parallel tool calls and an extra tool message", file.parent_path()};
}

// ---- extremis ---------------------------------------------------------------

ForeignHistory ExtremisFolder(const fs::path& dir) {
  const std::string id = "A1B2C3D4-0000-4000-8000-00000000EE01";
  auto msg = [](int n, const std::string& role, const std::string& content) {
    char uuid[40];
    std::snprintf(uuid, sizeof uuid, "E0E0E0E0-0000-4000-8000-%012d", n);
    return json{{"id", uuid},
                {"role", role},
                {"content", content},
                {"timestamp", "2025-01-15T10:3" + std::to_string(n) + ":00Z"}};
  };
  json session = {
      {"id", id},
      {"version", 1},
      {"messages",
       {msg(1, "user", "Summarise this"), msg(2, "assistant", "A summary."),
        msg(3, "assistant", "And a second answer in a row."), msg(4, "user", "Shorter")}},
      {"maxMessages", 20},
      {"createdAt", "2025-01-15T10:31:00Z"},
      {"updatedAt", "2025-01-15T10:34:00Z"},
      {"title", "Summary"},
      {"isArchived", false},
      {"summary",
       {{"content", "The user asked for a summary."},
        {"coversMessageCount", 1},
        {"createdAt", "2025-01-15T10:31:30Z"}}}};
  json index = {{"version", 1},
                {"sessions",
                 {{{"id", id},
                   {"title", "Summary"},
                   {"createdAt", "2025-01-15T10:31:00Z"},
                   {"updatedAt", "2025-01-15T10:34:00Z"},
                   {"messageCount", 4},
                   {"isArchived", false}}}},
                {"activeSessionId", id},
                {"lastUpdated", "2025-01-15T10:34:00Z"}};
  const fs::path folder = dir / "Extremis" / "sessions";
  Write(folder / "index.json", index.dump());
  Write(folder / (id + ".json"), session.dump());
  return {"extremis", "a summary and two assistant turns in a row", folder};
}

}  // namespace

std::vector<ForeignHistory> WriteForeignHistories(const fs::path& dir) {
  return {ClaudeCodeParallelCalls(dir),
          ClaudeCodeResultsOnTheirCalls(dir),
          CodexRollout(dir),
          ChatGptExport(dir),
          ClaudeAiExport(dir),
          AcdcHistory(dir),
          PixirLog(dir),
          AgentsKtSnapshot(dir),
          ExtremisFolder(dir)};
}

}  // namespace sessiondb::testing
