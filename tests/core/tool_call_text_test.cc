// Tool calls read as text (core/tool_call_text.h), the rules `show` and the
// Markdown export share: the line diff, each known tool's summary and blocks,
// the results paired with their calls, and arguments that are missing, of
// another type or not JSON at all falling back to the raw arguments.
#include "core/tool_call_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/text_rules.h"

namespace sessiondb::testing {
namespace {

std::string DiffText(const std::vector<DiffLine>& lines) {
  std::string out;
  for (const DiffLine& l : lines) out += static_cast<char>(l.op) + l.text + "\n";
  return out;
}

ToolCallText Describe(std::string name, std::string args, const Part* result = nullptr) {
  return DescribeToolCall(Part::ToolCall("toolu_1", std::move(name), std::move(args)), result);
}

TEST(DiffLines, KeepsCommonLinesAndMarksTheChangedOnes) {
  auto diff = DiffLines("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
  ASSERT_TRUE(diff);
  EXPECT_EQ(DiffText(*diff), " a\n-b\n+B\n c\n d\n+e\n");
}

TEST(DiffLines, EmptyOldTextIsAllAddedAndAFinalNewlineMakesNoLine) {
  auto diff = DiffLines("", "x\ny\n");
  ASSERT_TRUE(diff);
  EXPECT_EQ(DiffText(*diff), "+x\n+y\n");
  EXPECT_EQ(CountLines("x\ny\n"), 2u);
  EXPECT_EQ(CountLines("x\ny"), 2u);
  EXPECT_EQ(CountLines(""), 0u);
}

TEST(DiffLines, FindsTheLongestCommonSubsequenceInTheMiddle) {
  auto diff = DiffLines("h\n1\n2\n3\nt", "h\n2\nx\n3\nt");
  ASSERT_TRUE(diff);
  EXPECT_EQ(DiffText(*diff), " h\n-1\n 2\n+x\n 3\n t\n");
}

TEST(DiffLines, RefusesInputsPastTheCellCapButNotTheirCommonHeadAndTail) {
  std::string old_text, new_text;
  for (int i = 0; i < 3000; ++i) {
    old_text += "old " + std::to_string(i) + "\n";
    new_text += "new " + std::to_string(i) + "\n";
  }
  EXPECT_FALSE(DiffLines(old_text, new_text));
  // The same lengths with only one line changed compare at once: the common
  // head and tail are taken first.
  std::string changed = old_text;
  changed.replace(changed.find("old 1500\n"), 9, "NEW 1500\n");
  auto diff = DiffLines(old_text, changed);
  ASSERT_TRUE(diff);
  EXPECT_EQ(diff->size(), 3001u);
}

TEST(ToolCallText, AnEditIsADiffUnderItsPathAndTheSummarySaysWhatChanged) {
  const ToolCallText t = Describe(
      "Edit",
      R"({"file_path":"src/app.py","old_string":"a = 1\nb = 2\n","new_string":"a = 1\nb = 3\nc = 4\n"})");
  EXPECT_EQ(t.summary,
            "Edited src/app.py: +2 \xE2\x88\x92"
            "1");
  ASSERT_EQ(t.blocks.size(), 1u);
  EXPECT_EQ(t.blocks[0].language, "diff");
  EXPECT_EQ(t.blocks[0].text, "--- src/app.py\n+++ src/app.py\n a = 1\n-b = 2\n+b = 3\n+c = 4");
}

TEST(ToolCallText, AMultiEditIsOneDiffWithAHunkPerEdit) {
  const ToolCallText t = Describe(
      "MultiEdit",
      R"({"file_path":"a.cc","edits":[{"old_string":"x","new_string":"y"},{"old_string":"p","new_string":""}]})");
  EXPECT_EQ(t.summary,
            "Edited a.cc: +1 \xE2\x88\x92"
            "2 (2 edits)");
  ASSERT_EQ(t.blocks.size(), 1u);
  EXPECT_EQ(t.blocks[0].text,
            "--- a.cc\n+++ a.cc\n@@ edit 1 of 2 @@\n-x\n+y\n@@ edit 2 of 2 @@\n-p");
}

TEST(ToolCallText, AWriteIsTheFileWithItsLanguageAndPath) {
  const ToolCallText t =
      Describe("Write", R"({"file_path":"/w/tool.rs","content":"fn main() {}\n"})");
  EXPECT_EQ(t.summary, "Wrote /w/tool.rs (1 line)");
  ASSERT_EQ(t.blocks.size(), 1u);
  EXPECT_EQ(t.blocks[0].caption, "/w/tool.rs");
  EXPECT_EQ(t.blocks[0].language, "rust");
  EXPECT_EQ(t.blocks[0].text, "fn main() {}\n");
  EXPECT_EQ(LanguageForPath("x/CMakeLists.txt"), "cmake");
  EXPECT_EQ(LanguageForPath("README"), "");
  EXPECT_EQ(LanguageForPath(".bashrc"), "");
}

TEST(ToolCallText, ABashCallIsTheCommandAndItsOutputInOneConsoleBlock) {
  const Part result = Part::ToolResult("toolu_1", "ok\n2 passed\n");
  const ToolCallText t =
      Describe("Bash", R"({"command":"make test","description":"Run the tests"})", &result);
  EXPECT_EQ(t.summary, "$ make test");
  ASSERT_EQ(t.blocks.size(), 1u);
  EXPECT_EQ(t.blocks[0].language, "console");
  EXPECT_EQ(t.blocks[0].text, "$ make test\nok\n2 passed");
}

TEST(ToolCallText, ALongOutputIsABlockOfItsOwnWithItsSize) {
  std::string output;
  for (int i = 0; i < 312; ++i) output += "line " + std::to_string(i) + "\n";
  const Part result = Part::ToolResult("toolu_1", output, /*is_error=*/true);
  const ToolCallText t = Describe("Bash", R"({"command":"make"})", &result);
  EXPECT_EQ(t.summary, "$ make (error)");
  ASSERT_EQ(t.blocks.size(), 2u);
  EXPECT_EQ(t.blocks[0].text, "$ make");
  EXPECT_EQ(t.blocks[1].caption, "Error, 312 lines, " + FormatBytes(output.size()));
  EXPECT_TRUE(IsLongOutput(output));
  EXPECT_FALSE(IsLongOutput("short\n"));
}

TEST(ToolCallText, CodexShellArgvIsOneCommandLine) {
  EXPECT_EQ(Describe("shell", R"({"command":["bash","-lc","ls -la | head"]})").summary,
            "$ ls -la | head");
  EXPECT_EQ(Describe("shell", R"({"command":["git","commit","-m","it's done"]})").summary,
            "$ git commit -m 'it'\\''s done'");
  EXPECT_EQ(Describe("exec_command", R"({"cmd":"cargo build"})").summary, "$ cargo build");
  // A long, several-line command is cut in the summary, whole in the block.
  const ToolCallText t = Describe("Bash", R"({"command":"echo one\necho two"})");
  EXPECT_EQ(t.summary, "$ echo one\xE2\x80\xA6");
  EXPECT_EQ(t.blocks[0].text, "$ echo one\necho two");
}

TEST(ToolCallText, ACodexPatchIsADiffNamingItsFiles) {
  const std::string patch =
      "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n+y = 3\n*** End Patch";
  const ToolCallText t = Describe("apply_patch", nlohmann::json{{"input", patch}}.dump());
  EXPECT_EQ(t.summary,
            "Patched src/a.py: +2 \xE2\x88\x92"
            "1");
  ASSERT_EQ(t.blocks.size(), 1u);
  EXPECT_EQ(t.blocks[0].language, "diff");
  EXPECT_EQ(t.blocks[0].text, patch);
  // The patch as the arguments themselves, not JSON.
  EXPECT_EQ(Describe("apply_patch", patch).summary,
            "Patched src/a.py: +2 \xE2\x88\x92"
            "1");
}

TEST(ToolCallText, AReadIsTheFileAndItsLines) {
  EXPECT_EQ(Describe("Read", R"({"file_path":"a.py","offset":10,"limit":20})").summary,
            "Read a.py (lines 10\xE2\x80\x93"
            "29)");
  EXPECT_EQ(Describe("Read", R"({"file_path":"a.py","offset":"5"})").summary,
            "Read a.py (from line 5)");
  EXPECT_EQ(Describe("Read", R"({"file_path":"a.py","limit":"many"})").summary, "Read a.py");
}

TEST(ToolCallText, AnMcpCallIsItsServerAndTool) {
  const ToolCallText t = Describe("mcp__github__create_issue", R"({"title":"Bug"})");
  EXPECT_EQ(t.summary, "github \xE2\x80\xBA create_issue");
  ASSERT_EQ(t.blocks.size(), 1u);
  EXPECT_EQ(t.blocks[0].language, "json");
  EXPECT_NE(t.blocks[0].text.find("\"title\": \"Bug\""), std::string::npos);
}

TEST(ToolCallText, OtherToolsAndUnreadableArgumentsFallBackToTheRawArguments) {
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::string>>{
           {"zoom", R"({"x":1})"},
           {"Edit", "{not json"},
           {"Edit", R"({"old_string":"a","new_string":"b"})"},  // no path
           {"Edit", R"({"file_path":7,"old_string":"a"})"},     // a path of another type
           {"Write", R"({"file_path":"a.py","content":["x"]})"},
           {"Bash", R"({"command":42})"},
           {"Bash", R"(["ls"])"},
           {"MultiEdit", R"({"file_path":"a","edits":"none"})"},
           {"Read", "null"},
           {"apply_patch", R"({"input":"no patch here"})"},
       }) {
    const ToolCallText t = Describe(name, args);
    EXPECT_EQ(t.summary, "") << name << " " << args;
    ASSERT_EQ(t.blocks.size(), 1u) << name << " " << args;
    EXPECT_EQ(t.blocks[0].language, "json");
    EXPECT_EQ(t.blocks[0].text, args);
  }
  EXPECT_EQ(Describe("zoom", "").blocks[0].text, "{}");
}

TEST(ToolCallText, AResultAloneIsItsOutput) {
  EXPECT_TRUE(DescribeToolResult(Part::ToolResult("c", "")).blocks.empty());
  const ToolCallText t = DescribeToolResult(Part::ToolResult("c", "boom\n", /*is_error=*/true));
  ASSERT_EQ(t.blocks.size(), 1u);
  EXPECT_EQ(t.blocks[0].caption, "Error");
  EXPECT_EQ(t.blocks[0].text, "boom");
}

TEST(ToolResultPairing, FindsTheFirstLaterResultOfTheSameIdOnce) {
  Message call;
  call.parts = {Part::ToolCall("a", "Bash", "{}"), Part::ToolCall("b", "Read", "{}"),
                Part::ToolCall("", "x", "{}")};
  Message results;
  results.parts = {Part::ToolResult("b", "B"), Part::ToolResult("a", "A"),
                   Part::ToolResult("", "none")};
  Message again;
  again.parts = {Part::ToolCall("a", "Bash", "{}")};  // an id used again, answered by nothing
  ToolResultPairing pairing;
  pairing.Add(call);
  pairing.Add(results);
  pairing.Add(again);
  EXPECT_FALSE(pairing.TakenWithCall(results.parts[1]));
  EXPECT_EQ(pairing.TakeResultFor(call.parts[0]), &results.parts[1]);
  EXPECT_EQ(pairing.TakeResultFor(call.parts[1]), &results.parts[0]);
  EXPECT_EQ(pairing.TakeResultFor(call.parts[2]), nullptr);  // no id, no pair
  EXPECT_EQ(pairing.TakeResultFor(again.parts[0]), nullptr);
  EXPECT_TRUE(pairing.TakenWithCall(results.parts[1]));
  EXPECT_FALSE(pairing.TakenWithCall(results.parts[2]));
  // A result before its call is not its answer.
  Message early;
  early.parts = {Part::ToolResult("z", "Z")};
  Message late;
  late.parts = {Part::ToolCall("z", "Bash", "{}")};
  ToolResultPairing order;
  order.Add(early);
  order.Add(late);
  EXPECT_EQ(order.TakeResultFor(late.parts[0]), nullptr);
}

}  // namespace
}  // namespace sessiondb::testing
