// The claude-code importer on a realistic transcript written by the test:
// content blocks, tool calls and results, an image, thinking, a compaction,
// a side branch, and then corruption of every kind the issue names.
#include <nlohmann/json.hpp>
#include <set>

#include "blob/base64.h"
#include "core/text_rules.h"
#include "interop/import_sink.h"
#include "interop/interop_test_support.h"
#include "projection/window_checks.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

constexpr const char* kSession = "0b9d1c2e-1111-4222-8333-944455556666";

std::string Uuid(int n) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "aaaaaaaa-0000-4000-8000-%012d", n);
  return buf;
}

json Record(const std::string& type, int uuid, int parent, const std::string& ts, json message) {
  json r = {{"parentUuid", parent ? json(Uuid(parent)) : json(nullptr)},
            {"isSidechain", false},
            {"userType", "external"},
            {"cwd", "/home/dev/parser"},
            {"sessionId", kSession},
            {"version", "1.0.80"},
            {"gitBranch", "main"},
            {"type", type},
            {"message", std::move(message)},
            {"uuid", Uuid(uuid)},
            {"timestamp", ts}};
  return r;
}

json Assistant(int uuid, int parent, const std::string& ts, const std::string& msg_id,
               json content) {
  return Record("assistant", uuid, parent, ts,
                {{"id", msg_id},
                 {"type", "message"},
                 {"role", "assistant"},
                 {"model", "claude-sonnet-4-20250514"},
                 {"content", std::move(content)},
                 {"stop_reason", nullptr},
                 {"usage",
                  {{"input_tokens", 12},
                   {"cache_creation_input_tokens", 100},
                   {"cache_read_input_tokens", 2000},
                   {"output_tokens", 55}}}});
}

json User(int uuid, int parent, const std::string& ts, json content) {
  return Record("user", uuid, parent, ts, {{"role", "user"}, {"content", std::move(content)}});
}

// The sample: a main line with a compaction and a side branch off u6.
std::string Transcript(const std::string& png) {
  std::vector<json> r;
  r.push_back({{"type", "summary"}, {"summary", "Fix the parser bug"}, {"leafUuid", Uuid(14)}});
  r.push_back(User(1, 0, "2025-06-01T10:00:00.000Z",
                   json::array({{{"type", "text"}, {"text", "Why does this crash?"}},
                                {{"type", "image"},
                                 {"source",
                                  {{"type", "base64"},
                                   {"media_type", "image/png"},
                                   {"data", blob::Base64Encode(png)}}}}})));
  r.push_back(Assistant(2, 1, "2025-06-01T10:00:05.000Z", "msg_1",
                        json::array({{{"type", "thinking"},
                                      {"thinking", "The stack trace points at the lexer."},
                                      {"signature", "sig"}}})));
  r.push_back(Assistant(3, 2, "2025-06-01T10:00:06.000Z", "msg_1",
                        json::array({{{"type", "text"}, {"text", "Let me read the lexer."}}})));
  r.push_back(Assistant(4, 3, "2025-06-01T10:00:07.000Z", "msg_1",
                        json::array({{{"type", "tool_use"},
                                      {"id", "toolu_01"},
                                      {"name", "Read"},
                                      {"input", {{"file_path", "/home/dev/parser/lex.c"}}}}})));
  json result = User(5, 4, "2025-06-01T10:00:08.000Z",
                     json::array({{{"type", "tool_result"},
                                   {"tool_use_id", "toolu_01"},
                                   {"content", "1\tint main() {\n2\t  return *p;\n"},
                                   {"is_error", false}}}));
  result["toolUseResult"] = {{"type", "text"}};
  r.push_back(result);
  r.push_back(Assistant(6, 5, "2025-06-01T10:00:10.000Z", "msg_2",
                        json::array({{{"type", "text"}, {"text", "Line 2 dereferences null."}}})));
  // The side branch: the user edited their next prompt (u7, u8 off u6).
  r.push_back(User(7, 6, "2025-06-01T10:01:00.000Z", "Try a different approach"));
  r.push_back(Assistant(8, 7, "2025-06-01T10:01:02.000Z", "msg_3",
                        json::array({{{"type", "text"}, {"text", "Alternatively, guard p."}}})));
  // The main line goes on from u6.
  r.push_back(User(10, 6, "2025-06-01T10:02:00.000Z", "Fix it"));
  r.push_back(Assistant(15, 10, "2025-06-01T10:02:03.000Z", "msg_4",
                        json::array({{{"type", "tool_use"},
                                      {"id", "toolu_02"},
                                      {"name", "Bash"},
                                      {"input", {{"command", "make test"}}}}})));
  r.push_back(User(16, 15, "2025-06-01T10:02:09.000Z",
                   json::array({{{"type", "tool_result"},
                                 {"tool_use_id", "toolu_02"},
                                 {"content", json::array({{{"type", "text"}, {"text", "FAIL"}}})},
                                 {"is_error", true}}})));
  json boundary = {{"parentUuid", nullptr},
                   {"logicalParentUuid", Uuid(16)},
                   {"isSidechain", false},
                   {"sessionId", kSession},
                   {"type", "system"},
                   {"subtype", "compact_boundary"},
                   {"content", "Conversation compacted"},
                   {"compactMetadata", {{"trigger", "manual"}, {"preTokens", 1234}}},
                   {"uuid", Uuid(11)},
                   {"timestamp", "2025-06-01T10:03:00.000Z"}};
  r.push_back(boundary);
  json summary = User(12, 11, "2025-06-01T10:03:00.500Z",
                      "This session is being continued from a previous conversation. "
                      "Summary: the lexer dereferences a null pointer; a fix was attempted.");
  summary["isCompactSummary"] = true;
  summary["isVisibleInTranscriptOnly"] = true;
  r.push_back(summary);
  r.push_back(User(13, 12, "2025-06-01T10:04:00.000Z", "Thanks, carry on"));
  r.push_back(Assistant(14, 13, "2025-06-01T10:04:02.000Z", "msg_5",
                        json::array({{{"type", "text"}, {"text", "Done: p is checked."}}})));
  r.push_back(
      {{"type", "file-history-snapshot"}, {"messageId", Uuid(14)}, {"snapshot", json::object()}});
  std::string out;
  for (const json& j : r) out += j.dump() + "\n";
  return out;
}

class ClaudeCodeImport : public ::testing::Test {
 protected:
  void SetUp() override {
    png_ = MakePng(3, 2, "claude-code");
    project_ = dir_.Sub("projects/-home-dev-parser");
    std::filesystem::create_directories(project_);
    file_ = project_ + "/" + kSession + ".jsonl";
    WriteFile(file_, Transcript(png_));
    store_ = OpenTestStore(dir_);
  }

  std::string BranchId() {
    for (const Session& s : AllSessions(*store_)) {
      if (s.id != kSession) return s.id;
    }
    return "";
  }

  TempDir dir_;
  std::string png_;
  std::string project_;
  std::string file_;
  std::unique_ptr<Store> store_;
};

TEST_F(ClaudeCodeImport, DetectsAProjectsTreeAndAFile) {
  EXPECT_EQ(*DetectImportFormat(dir_.Sub("projects")), ImportFormat::kClaudeCode);
  EXPECT_EQ(*DetectImportFormat(file_), ImportFormat::kClaudeCode);
}

TEST_F(ClaudeCodeImport, EveryWindowOfTheSampleReplays) {
  MustImport(*store_, dir_.Sub("projects"), "claude-code");
  ExpectEveryWindowReplays(*store_, "claude-code sample");
}

TEST_F(ClaudeCodeImport, MainLineArrivesFieldByField) {
  ImportReport r = MustImport(*store_, dir_.Sub("projects"), "");
  EXPECT_EQ(r.format, ImportFormat::kClaudeCode);
  EXPECT_EQ(r.sessions_added, 2);
  EXPECT_EQ(r.images_added, 1);
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);

  auto session = store_->GetSession(kSession);
  ASSERT_TRUE(session.has_value());
  EXPECT_EQ(session->title, "Fix the parser bug");
  json meta = json::parse(session->metadata_json);
  EXPECT_EQ(meta["cwd"], "/home/dev/parser");
  EXPECT_EQ(meta["source"], "claude-code");
  EXPECT_EQ(meta["git_branch"], "main");

  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 10u);
  // 1: the user's text and screenshot.
  const Message& m1 = ev[0].message;
  EXPECT_EQ(m1.role, Role::kUser);
  EXPECT_EQ(ev[0].ts_ms, *ParseIsoTime("2025-06-01T10:00:00.000Z"));
  ASSERT_EQ(m1.parts.size(), 2u);
  EXPECT_EQ(m1.parts[0].text, "Why does this crash?");
  ASSERT_EQ(m1.parts[1].type, PartType::kImage);
  EXPECT_EQ(m1.parts[1].resource->width, 3);
  EXPECT_EQ(*store_->ReadBlob(m1.parts[1].resource->content_sha256), png_);
  // 2: three records of one response make one message.
  const Message& m2 = ev[1].message;
  EXPECT_EQ(m2.role, Role::kAssistant);
  EXPECT_EQ(m2.model, "claude-sonnet-4-20250514");
  ASSERT_EQ(m2.parts.size(), 3u);
  EXPECT_EQ(m2.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(m2.parts[0].text, "The stack trace points at the lexer.");
  EXPECT_EQ(m2.parts[1].text, "Let me read the lexer.");
  EXPECT_EQ(m2.parts[2].type, PartType::kToolCall);
  EXPECT_EQ(m2.parts[2].tool_call_id, "toolu_01");
  EXPECT_EQ(m2.parts[2].tool_name, "Read");
  EXPECT_EQ(json::parse(m2.parts[2].arguments_json)["file_path"], "/home/dev/parser/lex.c");
  ASSERT_TRUE(m2.usage.has_value());
  EXPECT_EQ(m2.usage->input_tokens, 2112);
  EXPECT_EQ(m2.usage->cached_tokens, 2000);
  EXPECT_EQ(m2.usage->output_tokens, 55);
  EXPECT_EQ(m2.usage->cache_write_tokens, 100);  // cache_creation_input_tokens, apart
  // 3: the tool result.
  const Message& m3 = ev[2].message;
  EXPECT_EQ(m3.role, Role::kTool);
  ASSERT_EQ(m3.parts.size(), 1u);
  EXPECT_EQ(m3.parts[0].type, PartType::kToolResult);
  EXPECT_EQ(m3.parts[0].tool_call_id, "toolu_01");
  EXPECT_EQ(m3.parts[0].text, "1\tint main() {\n2\t  return *p;\n");
  EXPECT_FALSE(m3.parts[0].is_error);
  EXPECT_EQ(ev[3].message.Text(), "Line 2 dereferences null.");
  // The main line skips the branch and goes on with "Fix it".
  EXPECT_EQ(ev[4].message.Text(), "Fix it");
  EXPECT_EQ(ev[5].message.parts[0].tool_name, "Bash");
  EXPECT_TRUE(ev[6].message.parts[0].is_error);
  EXPECT_EQ(ev[6].message.parts[0].text, "FAIL");
  // The compaction stands in for everything before it, with the summary text.
  ASSERT_EQ(ev[7].type, EventType::kCompaction);
  EXPECT_EQ(ev[7].compaction.from_seq, 1);
  EXPECT_EQ(ev[7].compaction.to_seq, 7);
  EXPECT_NE(ev[7].compaction.summary.find("the lexer dereferences a null pointer"),
            std::string::npos);
  EXPECT_EQ(ev[8].message.Text(), "Thanks, carry on");
  EXPECT_EQ(ev[9].message.Text(), "Done: p is checked.");
}

TEST_F(ClaudeCodeImport, SideBranchIsASessionOfItsOwnNamingItsFork) {
  MustImport(*store_, file_, "claude-code");
  const std::string branch = BranchId();
  ASSERT_FALSE(branch.empty());
  auto s = store_->GetSession(branch);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->parent_id.empty());
  json meta = json::parse(s->metadata_json);
  EXPECT_EQ(meta["forked_from"], kSession);
  EXPECT_EQ(meta["fork_uuid"], Uuid(6));
  std::vector<Event> ev = EventsOf(*store_, branch);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].message.Text(), "Try a different approach");
  EXPECT_EQ(ev[1].message.Text(), "Alternatively, guard p.");
}

TEST_F(ClaudeCodeImport, ReimportAddsNothingAndAGrownFileAddsItsTail) {
  MustImport(*store_, file_, "claude-code");
  ImportReport again = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(again.sessions_added, 0);
  EXPECT_EQ(again.sessions_unchanged, 2);
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(EventsOf(*store_, kSession).size(), 10u);

  AppendFile(file_, User(20, 14, "2025-06-01T10:05:00.000Z", "One more thing").dump() + "\n");
  ImportReport grown = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(grown.sessions_extended, 1);
  EXPECT_EQ(grown.messages_added, 1);
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 11u);
  EXPECT_EQ(ev.back().message.Text(), "One more thing");
}

// Claude Code writes a response as one record per content block. A
// transcript imported while a response was being written holds only its
// first blocks; each later import of the grown file brings the rest, so a
// tool result never stands without its call.
TEST_F(ClaudeCodeImport, AResponseThatGrewAfterAnImportGetsItsMissingBlocks) {
  const std::string u1 = User(1, 0, "2025-06-01T10:00:00.000Z", "Why does this crash?").dump();
  const std::string a2 =
      Assistant(
          2, 1, "2025-06-01T10:00:05.000Z", "msg_1",
          json::array(
              {{{"type", "thinking"}, {"thinking", "Look at the lexer."}, {"signature", "sig"}}}))
          .dump();
  const std::string a3 = Assistant(3, 2, "2025-06-01T10:00:06.000Z", "msg_1",
                                   json::array({{{"type", "text"}, {"text", "Reading it."}}}))
                             .dump();
  const std::string a4 = Assistant(4, 3, "2025-06-01T10:00:07.000Z", "msg_1",
                                   json::array({{{"type", "tool_use"},
                                                 {"id", "toolu_01"},
                                                 {"name", "Read"},
                                                 {"input", {{"file_path", "lex.c"}}}}}))
                             .dump();
  const std::string u5 = User(5, 4, "2025-06-01T10:00:08.000Z",
                              json::array({{{"type", "tool_result"},
                                            {"tool_use_id", "toolu_01"},
                                            {"content", "int main() {}"}}}))
                             .dump();
  const std::string a6 = Assistant(6, 5, "2025-06-01T10:00:10.000Z", "msg_2",
                                   json::array({{{"type", "text"}, {"text", "Found it."}}}))
                             .dump();
  WriteFile(file_, u1 + "\n" + a2 + "\n");
  MustImport(*store_, file_, "claude-code");
  AppendFile(file_, a3 + "\n");
  ImportReport second = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(second.messages_added, 1);
  AppendFile(file_, a4 + "\n" + u5 + "\n" + a6 + "\n");
  ImportReport third = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(third.sessions_extended, 1);
  EXPECT_EQ(third.messages_added, 3);

  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[1].message.parts.at(0).type, PartType::kReasoning);
  EXPECT_EQ(ev[2].message.Text(), "Reading it.");
  ASSERT_EQ(ev[3].message.parts.size(), 1u);
  EXPECT_EQ(ev[3].message.role, Role::kAssistant);
  EXPECT_EQ(ev[3].message.parts[0].tool_call_id, "toolu_01");
  EXPECT_EQ(ev[4].message.role, Role::kTool);
  EXPECT_EQ(ev[5].message.Text(), "Found it.");
  // Every result follows its call.
  std::set<std::string> calls;
  for (const Event& e : ev) {
    for (const Part& p : e.message.parts) {
      if (p.type == PartType::kToolCall) calls.insert(p.tool_call_id);
      if (p.type == PartType::kToolResult) {
        EXPECT_TRUE(calls.contains(p.tool_call_id));
      }
    }
  }
  // The usage of the response is counted once.
  int with_usage = 0;
  for (int i = 1; i <= 3; ++i) with_usage += ev[i].message.usage.has_value() ? 1 : 0;
  EXPECT_EQ(with_usage, 1);
  ImportReport again = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(again.messages_added, 0);
  EXPECT_EQ(again.sessions_unchanged, 1);

  // Imported whole at once, the response is one message, as before.
  TempDir other;
  auto fresh = OpenTestStore(other);
  MustImport(*fresh, file_, "claude-code");
  std::vector<Event> whole = EventsOf(*fresh, kSession);
  ASSERT_EQ(whole.size(), 4u);
  EXPECT_EQ(whole[1].message.parts.size(), 3u);
  // ... and a re-import of that store, whose response is whole, adds nothing.
  EXPECT_EQ(MustImport(*fresh, file_, "claude-code").messages_added, 0);
}

// Reading the graph is the first half of the bar, writing the second: the
// bar moves while the records are written, never back, and ends full.
TEST_F(ClaudeCodeImport, ProgressCoversTheWritingNotJustTheScan) {
  std::string more;
  for (int i = 0; i < 3000; ++i) {
    more +=
        User(100 + i, i == 0 ? 14 : 99 + i, "2025-06-01T11:00:00.000Z", "step " + std::to_string(i))
            .dump() +
        "\n";
  }
  AppendFile(file_, more);
  std::vector<std::pair<int64_t, int64_t>> calls;
  auto report = ImportPath(
      *store_, file_,
      {.format = ImportFormat::kClaudeCode,
       .progress = [&](int64_t done, int64_t total) { calls.emplace_back(done, total); }});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(EventsOf(*store_, kSession).size(), 3010u);
  const int64_t total = static_cast<int64_t>(std::filesystem::file_size(file_));
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), std::make_pair(total, total));
  bool writing_reported = false;
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, total);
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first) << "call " << i;
    }
    writing_reported |= calls[i].first > total / 2 && calls[i].first < total;
  }
  EXPECT_TRUE(writing_reported);
}

// A projects tree of many transcripts shows one bar, not one per file.
TEST_F(ClaudeCodeImport, ProgressCrossesOnceForAllTheTranscripts) {
  const std::string other = dir_.Sub("projects/-home-dev-other");
  std::filesystem::create_directories(other);
  std::string second;
  for (int i = 0; i < 50; ++i) {
    json r = User(500 + i, i == 0 ? 0 : 499 + i, "2025-06-02T09:00:00.000Z",
                  "another project, step " + std::to_string(i));
    r["sessionId"] = "1c2d3e4f-0000-4000-8000-000000000002";
    second += r.dump() + "\n";
  }
  WriteFile(other + "/1c2d3e4f-0000-4000-8000-000000000002.jsonl", second);
  std::vector<std::pair<int64_t, int64_t>> calls;
  auto report = ImportPath(
      *store_, dir_.Sub("projects"),
      {.format = ImportFormat::kClaudeCode,
       .progress = [&](int64_t done, int64_t total) { calls.emplace_back(done, total); }});
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->sessions_added, 3);
  // Files go in path order: -home-dev-other before -home-dev-parser.
  ExpectOneBarAcrossFiles(calls, {static_cast<int64_t>(std::filesystem::file_size(
                                      other + "/1c2d3e4f-0000-4000-8000-000000000002.jsonl")),
                                  static_cast<int64_t>(std::filesystem::file_size(file_))});
}

TEST_F(ClaudeCodeImport, SubAgentFileIsASessionNamingItsParent) {
  json a1 = User(101, 0, "2025-06-01T10:00:20.000Z", "Search the repo for lexers");
  a1["isSidechain"] = true;
  json a2 = Assistant(102, 101, "2025-06-01T10:00:21.000Z", "msg_a",
                      json::array({{{"type", "text"}, {"text", "Found lex.c"}}}));
  a2["isSidechain"] = true;
  WriteFile(project_ + "/agent-5f3a.jsonl", a1.dump() + "\n" + a2.dump() + "\n");
  ImportReport r = MustImport(*store_, project_, "claude-code");
  EXPECT_EQ(r.sessions_added, 3);
  for (const Session& s : AllSessions(*store_)) {
    json meta = json::parse(s.metadata_json);
    if (!meta.contains("subagent_of")) continue;
    EXPECT_EQ(meta["subagent_of"], kSession);
    EXPECT_EQ(meta["agent_id"], "5f3a");
    EXPECT_EQ(EventsOf(*store_, s.id).size(), 2u);
    return;
  }
  ADD_FAILURE() << "no sub-agent session";
}

TEST_F(ClaudeCodeImport, CorruptRecordsAreSkippedWithReasonsAndTheRestImports) {
  std::string t = Transcript(png_);
  // A line that is not JSON, an image that is not what it says, and a
  // truncated last line.
  t += "this is not json\n";
  t += User(30, 14, "2025-06-01T10:06:00.000Z",
            json::array({{{"type", "text"}, {"text", "And this one?"}},
                         {{"type", "image"},
                          {"source",
                           {{"type", "base64"},
                            {"media_type", "image/png"},
                            {"data", blob::Base64Encode("GIF? no, plain text")}}}}}))
           .dump() +
       "\n";
  t += User(31, 30, "2025-06-01T10:07:00.000Z", "cut").dump().substr(0, 60);
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_TRUE(SkippedFor(r, "the line is not valid JSON: ")) << r.skipped.size();
  EXPECT_TRUE(SkippedFor(r, "cut short"));
  EXPECT_TRUE(SkippedFor(r, "not a readable image") || SkippedFor(r, "said to be an image"));
  EXPECT_EQ(r.records_skipped, 3);
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 11u);
  // The message keeps its text without the bad image.
  ASSERT_EQ(ev.back().message.parts.size(), 1u);
  EXPECT_EQ(ev.back().message.Text(), "And this one?");
  EXPECT_EQ(r.images_added, 1);
}

// An editor's byte-order mark before the first record, and a byte that is
// not UTF-8 inside one (both seen in transcripts copied between machines):
// every record still arrives, the bad byte as U+FFFD.
TEST_F(ClaudeCodeImport, AByteOrderMarkAndBadBytesCostNoRecord) {
  std::string t = Transcript(png_);
  const size_t fix = t.find("\"Fix it\"");
  ASSERT_NE(fix, std::string::npos);
  t.replace(fix, 8, "\"Fix\xFF it\"");
  WriteFile(file_, "\xEF\xBB\xBF" + t);
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  // The first line, the summary, still names the session.
  EXPECT_EQ(store_->GetSession(kSession)->title, "Fix the parser bug");
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 10u);
  EXPECT_EQ(ev[4].message.Text(), "Fix\xEF\xBF\xBD it");
}

// A record whose message is a string, one whose content is a number, a
// block that is not an object, a tool_use whose id is a number, and usage
// with a negative count (the store refuses those): each is skipped with its
// line and reason, and everything else arrives.
TEST_F(ClaudeCodeImport, FieldsOfOddTypesAreSkippedWithTheirReasonsAndTheRestImports) {
  std::string t = Transcript(png_);  // 17 lines
  json as_string = User(30, 14, "2025-06-01T10:06:00.000Z", "x");
  as_string["message"] = "What about this?";
  json as_number = User(31, 30, "2025-06-01T10:06:01.000Z", "x");
  as_number["message"]["content"] = 42;
  json odd_blocks =
      Assistant(32, 31, "2025-06-01T10:06:02.000Z", "msg_9",
                json::array({"a block that is a string",
                             {{"type", "text"}, {"text", "This block is fine."}},
                             {{"type", "tool_use"}, {"id", 7}, {"name", "Bash"}, {"input", {}}}}));
  odd_blocks["message"]["usage"]["input_tokens"] = -5;
  t += as_string.dump() + "\n" + as_number.dump() + "\n" + odd_blocks.dump() + "\n";
  WriteFile(file_, t);
  auto report = ImportPath(*store_, file_, {.format = ImportFormat::kClaudeCode});
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  const std::string label = std::string(kSession) + ".jsonl:";
  auto skipped_at = [&](int line, const std::string& words) {
    for (const auto& s : report->skipped) {
      if (s.where == label + std::to_string(line) && s.reason.find(words) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(skipped_at(18, "message is a string, not an object")) << report->skipped.size();
  EXPECT_TRUE(skipped_at(19, "message.content is a number"));
  EXPECT_TRUE(skipped_at(20, "block 1 of the message is a string, not an object"));
  EXPECT_TRUE(skipped_at(20, "block 3 of the message (tool_use) has 'id' as a number"));
  EXPECT_EQ(report->records_skipped, 4);
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 11u);
  ASSERT_EQ(ev.back().message.parts.size(), 1u);
  EXPECT_EQ(ev.back().message.Text(), "This block is fine.");
  ASSERT_TRUE(ev.back().message.usage.has_value());
  EXPECT_EQ(ev.back().message.usage->input_tokens, 2100);  // the -5 counts as nothing
}

// Before, such a file left an empty session dated 1970 behind.
TEST_F(ClaudeCodeImport, AFileWithNothingReadableLeavesNoEmptySession) {
  json r = User(1, 0, "2025-06-01T10:00:00.000Z", "x");
  r["message"] = "only a string";
  WriteFile(file_, r.dump() + "\n");
  ImportReport report = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(report.records_skipped, 1);
  EXPECT_EQ(report.sessions_added, 0);
  EXPECT_TRUE(AllSessions(*store_).empty());
}

// Transcripts written by other tools (or damaged) may leave every parentUuid
// null: the file's order is the conversation's.
TEST_F(ClaudeCodeImport, RecordsWithoutParentsReadAsOneConversationInFileOrder) {
  std::string t;
  t += User(1, 0, "2025-06-01T10:00:00.000Z", "first").dump() + "\n";
  t += Assistant(2, 0, "2025-06-01T10:00:01.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", "second"}}}))
           .dump() +
       "\n";
  t += User(3, 0, "2025-06-01T10:00:02.000Z", "third").dump() + "\n";
  t += Assistant(4, 0, "2025-06-01T10:00:03.000Z", "msg_2",
                 json::array({{{"type", "text"}, {"text", "fourth"}}}))
           .dump() +
       "\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(r.sessions_added, 1);
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].message.Text(), "first");
  EXPECT_EQ(ev[1].message.Text(), "second");
  EXPECT_EQ(ev[2].message.Text(), "third");
  EXPECT_EQ(ev[3].message.Text(), "fourth");
}

// A user or assistant record without a uuid is kept where the file has it;
// records that are not conversation (file snapshots) are left out as before.
TEST_F(ClaudeCodeImport, ConversationRecordsWithoutAUuidAreKeptInFileOrder) {
  json no_uuid = User(0, 2, "2025-06-01T10:00:02.000Z", "no uuid here");
  no_uuid.erase("uuid");
  json numeric_uuid = Assistant(0, 0, "2025-06-01T10:00:03.000Z", "msg_2",
                                json::array({{{"type", "text"}, {"text", "a number for a uuid"}}}));
  numeric_uuid["uuid"] = 12345;
  std::string t;
  t += User(1, 0, "2025-06-01T10:00:00.000Z", "first").dump() + "\n";
  t += Assistant(2, 1, "2025-06-01T10:00:01.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", "second"}}}))
           .dump() +
       "\n";
  t += no_uuid.dump() + "\n" + numeric_uuid.dump() + "\n";
  t += json({{"type", "file-history-snapshot"}, {"snapshot", json::object()}}).dump() + "\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(r.records_skipped, 0) << (r.skipped.empty() ? "" : r.skipped[0].reason);
  EXPECT_EQ(r.sessions_added, 1);
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[2].message.Text(), "no uuid here");
  EXPECT_EQ(ev[3].message.Text(), "a number for a uuid");
  // And a second import finds them where it left them.
  EXPECT_EQ(MustImport(*store_, file_, "claude-code").messages_added, 0);
}

// A file holding another session's records (here at its end, where the main
// line was taken from) keeps each conversation under its own name.
TEST_F(ClaudeCodeImport, AFileMixingTwoSessionsKeepsEachConversationUnderItsOwnName) {
  const std::string other = "1c2d3e4f-0000-4000-8000-000000000009";
  auto of_other = [&](json r) {
    r["sessionId"] = other;
    r["cwd"] = "/home/dev/other";
    // The branch switches midway: the session is listed on the last one.
    r["gitBranch"] = r["uuid"] == Uuid(50) ? "main" : "fix/parser";
    return r.dump() + "\n";
  };
  std::string t;
  t += User(1, 0, "2025-06-01T10:00:00.000Z", "mine, first").dump() + "\n";
  t += Assistant(2, 1, "2025-06-01T10:00:01.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", "mine, second"}}}))
           .dump() +
       "\n";
  t += of_other(User(50, 0, "2025-06-01T11:00:00.000Z", "theirs, first"));
  t += of_other(Assistant(51, 50, "2025-06-01T11:00:01.000Z", "msg_9",
                          json::array({{{"type", "text"}, {"text", "theirs, second"}}})));
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(r.sessions_added, 2);
  std::vector<Event> mine = EventsOf(*store_, kSession);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].message.Text(), "mine, first");
  EXPECT_EQ(mine[1].message.Text(), "mine, second");
  EXPECT_EQ(json::parse(store_->GetSession(kSession)->metadata_json)["source_session_id"],
            kSession);
  const std::string theirs = BranchId();
  ASSERT_FALSE(theirs.empty());
  json meta = json::parse(store_->GetSession(theirs)->metadata_json);
  EXPECT_EQ(meta["source_session_id"], other);
  EXPECT_EQ(meta["cwd"], "/home/dev/other");
  EXPECT_EQ(meta["git_branch"], "fix/parser");
  EXPECT_FALSE(meta.contains("forked_from"));
  std::vector<Event> ev = EventsOf(*store_, theirs);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].message.Text(), "theirs, first");
  EXPECT_EQ(ev[1].message.Text(), "theirs, second");
}

// A session resumed into a new file starts with the old session's records
// (their own sessionId) and goes on from its last one: the new session holds
// only its own records and names where it continues from.
TEST_F(ClaudeCodeImport, AResumedSessionNamesTheRecordItContinuesFrom) {
  const std::string earlier = "1c2d3e4f-0000-4000-8000-000000000008";
  auto of_earlier = [&](json r) {
    r["sessionId"] = earlier;
    return r.dump() + "\n";
  };
  std::string t;
  t += of_earlier(User(1, 0, "2025-06-01T10:00:00.000Z", "before the resume"));
  t += of_earlier(Assistant(2, 1, "2025-06-01T10:00:01.000Z", "msg_1",
                            json::array({{{"type", "text"}, {"text", "answered then"}}})));
  t += User(3, 2, "2025-06-02T09:00:00.000Z", "after the resume").dump() + "\n";
  WriteFile(file_, t);
  MustImport(*store_, file_, "claude-code");
  std::vector<Event> mine = EventsOf(*store_, kSession);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].message.Text(), "after the resume");
  json meta = json::parse(store_->GetSession(kSession)->metadata_json);
  EXPECT_EQ(meta["fork_uuid"], Uuid(2));
  const std::string copy = meta["forked_from"];
  json copy_meta = json::parse(store_->GetSession(copy)->metadata_json);
  EXPECT_EQ(copy_meta["source_session_id"], earlier);
  EXPECT_EQ(EventsOf(*store_, copy).size(), 2u);
}

// A record of tens of MiB (a pasted log, a file the agent wrote) is parsed
// without copies of its long strings and keeps the first 8 MiB of its text,
// ending in a note, with a reason; an image too big to keep whole whose
// first bytes are no image's is left out saying so (a real one keeps its
// descriptor: long_record_test.cc); a long record under the budget arrives
// whole. (Memory: bench/interop/long_record.py.)
TEST_F(ClaudeCodeImport, AHugeRecordKeepsItsFirstMiBsAndSaysWhereItWasCut) {
  std::string piece = "a line of a very long log: caf\xC3\xA9 \"quoted\" \\ tab\t end\n";
  std::string huge;
  while (huge.size() < (size_t{10} << 20)) huge += piece;
  std::string five;
  while (five.size() < (size_t{5} << 20)) five += piece;
  std::string t = Transcript(png_);  // 17 lines
  t += Assistant(40, 14, "2025-06-01T10:09:00.000Z", "msg_big",
                 json::array({{{"type", "text"}, {"text", huge}}}))
           .dump() +
       "\n";
  t += User(41, 40, "2025-06-01T10:09:01.000Z",
            json::array({{{"type", "text"}, {"text", "and this picture"}},
                         {{"type", "image"},
                          {"source",
                           {{"type", "base64"},
                            {"media_type", "image/png"},
                            {"data", std::string(size_t{9} << 20, 'A')}}}}}))
           .dump() +
       "\n";
  t += User(42, 41, "2025-06-01T10:09:02.000Z", five).dump() + "\n";
  WriteFile(file_, t);
  t.clear();
  ImportReport r = MustImport(*store_, file_, "claude-code");
  const std::string label = std::string(kSession) + ".jsonl:";
  auto skipped_at = [&](int line, const std::string& words) {
    for (const auto& s : r.skipped) {
      if (s.where == label + std::to_string(line) && s.reason.find(words) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(skipped_at(18, "8 MiB of text the import keeps of one record"));
  EXPECT_TRUE(skipped_at(19, "is said to be an image but its first bytes are"));
  // Line 19 is listed for its image only: no text of it was cut to a note.
  EXPECT_EQ(r.records_skipped, 2) << (r.skipped.empty() ? "" : r.skipped.back().reason);
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 13u);
  const std::string& kept = ev[10].message.parts.at(0).text;
  const std::string note = "[... cut by the import: sessiondb keeps 8 MiB of text of one record]";
  ASSERT_GT(kept.size(), note.size());
  EXPECT_LE(kept.size(), (size_t{8} << 20) + note.size() + 1);
  EXPECT_TRUE(kept.ends_with(note));
  EXPECT_EQ(kept.substr(0, 1000), huge.substr(0, 1000));
  EXPECT_TRUE(IsValidUtf8(kept));
  ASSERT_EQ(ev[11].message.parts.size(), 1u);
  EXPECT_EQ(ev[11].message.Text(), "and this picture");
  EXPECT_EQ(ev[12].message.Text(), five);
}

// One message gathers at most 8 MiB of a response's records: a longer
// response goes on in a message of its own, its usage counted once.
TEST_F(ClaudeCodeImport, AResponseOfMoreThanEightMiBGoesOnInASecondMessage) {
  const std::string block(size_t{5} << 20, 'z');
  std::string t = User(1, 0, "2025-06-01T10:00:00.000Z", "write two big files").dump() + "\n";
  t += Assistant(2, 1, "2025-06-01T10:00:01.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", block}}}))
           .dump() +
       "\n";
  t += Assistant(3, 2, "2025-06-01T10:00:02.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", block}}}))
           .dump() +
       "\n";
  WriteFile(file_, t);
  t.clear();
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(r.records_skipped, 0);
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[1].message.Text(), block);
  EXPECT_EQ(ev[2].message.Text(), block);
  EXPECT_TRUE(ev[1].message.usage.has_value());
  EXPECT_FALSE(ev[2].message.usage.has_value());
  EXPECT_EQ(MustImport(*store_, file_, "claude-code").messages_added, 0);
}

TEST_F(ClaudeCodeImport, AnAbsurdlyLongLineIsSkippedWithoutBeingHeld) {
  std::string t = Transcript(png_);
  t += "{\"type\":\"user\",\"message\":{\"content\":\"" + std::string(65u << 20, 'x') + "\"}}\n";
  t += User(40, 14, "2025-06-01T10:08:00.000Z", "after the long line").dump() + "\n";
  WriteFile(file_, t);
  t.clear();
  t.shrink_to_fit();
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_TRUE(SkippedFor(r, "longer than the limit"));
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 11u);
  EXPECT_EQ(ev.back().message.Text(), "after the long line");
}

TEST_F(ClaudeCodeImport, AFolderWithoutTranscriptsIsRefusedAndNothingIsWritten) {
  std::filesystem::create_directories(dir_.Sub("empty"));
  auto r = ImportPath(*store_, dir_.Sub("empty"), {.format = ImportFormat::kClaudeCode});
  EXPECT_FALSE(r.has_value());
  EXPECT_TRUE(AllSessions(*store_).empty());
}

// A prompt of nothing but whitespace (a stray Enter) has nothing to keep:
// it is skipped with its reason, and the rest of the file comes in.
TEST_F(ClaudeCodeImport, AWhitespaceOnlyPromptIsSkippedNotTheImport) {
  std::string t;
  t += User(1, 0, "2025-06-01T10:00:00.000Z", "first").dump() + "\n";
  t += User(2, 1, "2025-06-01T10:00:01.000Z", " \n\t ").dump() + "\n";
  t += User(3, 2, "2025-06-01T10:00:02.000Z", json::array({{{"type", "text"}, {"text", "\n\n"}}}))
           .dump() +
       "\n";
  t += Assistant(4, 3, "2025-06-01T10:00:03.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", "last"}}}))
           .dump() +
       "\n";
  WriteFile(file_, t);
  auto report = ImportPath(*store_, file_, {.format = ImportFormat::kClaudeCode});
  ASSERT_TRUE(report.has_value()) << report.error().message();
  EXPECT_EQ(report->records_skipped, 2);
  EXPECT_TRUE(SkippedFor(*report, "whitespace"));
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].message.Text(), "first");
  EXPECT_EQ(ev[1].message.Text(), "last");
  // A second import skips them again and adds nothing.
  EXPECT_EQ(MustImport(*store_, file_, "claude-code").messages_added, 0);
}

// Claude Code writes an inline sub-agent run as side-chain records; when one
// ends the file, the session is still the conversation, and the run is a
// branch of its own.
TEST_F(ClaudeCodeImport, ATrailingSideChainDoesNotBecomeTheMainSession) {
  std::string t;
  t += User(1, 0, "2025-06-01T10:00:00.000Z", "Find the lexer").dump() + "\n";
  t += Assistant(2, 1, "2025-06-01T10:00:01.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", "Asking a sub-agent."}}}))
           .dump() +
       "\n";
  json s1 = User(3, 0, "2025-06-01T10:00:02.000Z", "Search the repo for lexers");
  s1["isSidechain"] = true;
  json s2 = Assistant(4, 3, "2025-06-01T10:00:03.000Z", "msg_s",
                      json::array({{{"type", "text"}, {"text", "Found lex.c"}}}));
  s2["isSidechain"] = true;
  t += s1.dump() + "\n" + s2.dump() + "\n";
  WriteFile(file_, t);
  ImportReport r = MustImport(*store_, file_, "claude-code");
  EXPECT_EQ(r.sessions_added, 2);
  std::vector<Event> main = EventsOf(*store_, kSession);
  ASSERT_EQ(main.size(), 2u);
  EXPECT_EQ(main[0].message.Text(), "Find the lexer");
  EXPECT_EQ(main[1].message.Text(), "Asking a sub-agent.");
  json main_meta = json::parse(store_->GetSession(kSession)->metadata_json);
  EXPECT_FALSE(main_meta.contains("sidechain"));
  const std::string branch = BranchId();
  ASSERT_FALSE(branch.empty());
  json meta = json::parse(store_->GetSession(branch)->metadata_json);
  EXPECT_EQ(meta["sidechain"], true);
  std::vector<Event> side = EventsOf(*store_, branch);
  ASSERT_EQ(side.size(), 2u);
  EXPECT_EQ(side[0].message.Text(), "Search the repo for lexers");
  EXPECT_EQ(side[1].message.Text(), "Found lex.c");
}

// A screenshot pasted with no words is the person's message, not a tool's.
// (A tool result's images stay with the tool message: see the sample.)
TEST_F(ClaudeCodeImport, AnImageOnlyPromptIsTheUsers) {
  json image = {
      {"type", "image"},
      {"source",
       {{"type", "base64"}, {"media_type", "image/png"}, {"data", blob::Base64Encode(png_)}}}};
  std::string t;
  t += User(1, 0, "2025-06-01T10:00:00.000Z", json::array({image})).dump() + "\n";
  t += Assistant(2, 1, "2025-06-01T10:00:01.000Z", "msg_1",
                 json::array({{{"type", "text"}, {"text", "A screenshot of a crash."}}}))
           .dump() +
       "\n";
  WriteFile(file_, t);
  MustImport(*store_, file_, "claude-code");
  std::vector<Event> ev = EventsOf(*store_, kSession);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].message.role, Role::kUser);
  ASSERT_EQ(ev[0].message.parts.size(), 1u);
  EXPECT_EQ(ev[0].message.parts[0].type, PartType::kImage);
}

// A file in a shape no importer knows, named with --format (here JSON Lines
// of an analytics log): every line passed over, and the report said "0
// new sessions ... 0 skipped". It now says nothing here was readable, and
// the store is as it was.
TEST(ImportOfAnUnknownShape, ReportsThatNothingWasRecognised) {
  TempDir dir;
  auto store = OpenTestStore(dir);
  ASSERT_TRUE(store->CreateSession({.id = "kept", .title = "Before"}));
  const std::string file = dir.Sub("events.jsonl");
  WriteFile(file, "{\"event\":\"click\",\"x\":1}\n{\"event\":\"scroll\",\"y\":240}\n");
  ImportReport r = MustImport(*store, file, "claude-code");
  EXPECT_EQ(r.sessions_added, 0);
  EXPECT_EQ(r.records_skipped, 1);
  ASSERT_FALSE(r.skipped.empty());
  EXPECT_EQ(r.skipped[0].where, file);
  EXPECT_NE(r.skipped[0].reason.find("nothing was imported"), std::string::npos)
      << r.skipped[0].reason;
  // Codex says it in its own words (a rollout with nothing to import).
  ImportReport codex = MustImport(*store, file, "codex");
  EXPECT_EQ(codex.sessions_added, 0);
  EXPECT_EQ(codex.records_skipped, 1);
  std::vector<Session> all = AllSessions(*store);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].title, "Before");
}

}  // namespace
}  // namespace sessiondb::testing
