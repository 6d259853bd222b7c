// `sessiondb show` reads an agent's tool calls as what they did
// (core/tool_call_text.h): an Edit as a diff under its path, a Bash call as
// `$ command` and its output, an MCP call as its server and tool; each result
// under its call though it came in a later message, which then only points
// up to it; a long output cut with its size; arguments no rule can read as
// they are. --json keeps every byte.
#include "cli_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

class ShowToolCalls : public Cli {
 protected:
  void SetUp() override {
    auto store = Store::Open(store_);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "agent", .title = "Agent"}));
    Message calls;
    calls.role = Role::kAssistant;
    calls.parts = {
        Part::ToolCall(
            "e1", "Edit",
            R"({"file_path":"src/app.py","old_string":"a = 1\nb = 2\n","new_string":"a = 1\nb = 3\nc = 4\n"})"),
        Part::ToolCall("b1", "Bash", R"({"command":"make test"})"),
        Part::ToolCall("l1", "Bash", R"({"command":"make check"})"),
        Part::ToolCall("m1", "mcp__github__create_issue", R"({"title":"Bug"})"),
        Part::ToolCall("x1", "Write", R"({"file_path":3,"content":null})"),
        Part::ToolCall("n1", "Read", R"({"file_path":"README.md"})")};
    ASSERT_TRUE((*store)->Append("agent", calls));
    for (int i = 0; i < 60; ++i) long_output_ += "row " + std::to_string(i) + "\n";
    Message results;
    results.role = Role::kTool;
    results.parts = {
        Part::ToolResult("e1", "updated"),    Part::ToolResult("b1", "ok\n"),
        Part::ToolResult("l1", long_output_), Part::ToolResult("m1", "denied", /*is_error=*/true),
        Part::ToolResult("x1", "refused"),    Part::ToolResult("zz", "orphan")};
    ASSERT_TRUE((*store)->Append("agent", results));
  }

  std::string long_output_;
};

TEST_F(ShowToolCalls, CallsReadAsWhatTheyDidWithTheirResultsUnderThem) {
  CliRun r = Sdb({"show", "agent"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& out = r.out;
  EXPECT_TRUE(Contains(out,
                       "    [tool_call e1] Edit: Edited src/app.py: +2 \xE2\x88\x92"
                       "1\n"
                       "      --- src/app.py\n      +++ src/app.py\n       a = 1\n      -b = 2\n"
                       "      +b = 3\n      +c = 4\n      Output:\n      updated\n"))
      << out;
  EXPECT_TRUE(Contains(out, "    [tool_call b1] Bash: $ make test\n      $ make test\n      ok\n"));
  EXPECT_TRUE(Contains(out,
                       "    [tool_call m1] mcp__github__create_issue: github \xE2\x80\xBA "
                       "create_issue (error)\n"));
  EXPECT_TRUE(Contains(out, "      Error:\n      denied\n"));
  // Arguments no rule can read: as they are, with the result still under them.
  EXPECT_TRUE(Contains(out,
                       "    [tool_call x1] Write\n      {\"file_path\":3,\"content\":null}\n"
                       "      Output:\n      refused\n"));
  // A call with no result is the call alone.
  EXPECT_TRUE(Contains(out, "    [tool_call n1] Read: Read README.md\n\n#2"));
  // The results' message points up to their calls; a result with no call is its output.
  EXPECT_TRUE(Contains(out, "    [tool_result e1] shown with its call above\n"));
  EXPECT_TRUE(Contains(out, "    [tool_result m1, error] shown with its call above\n"));
  EXPECT_TRUE(Contains(out, "    [tool_result zz]\n      Output:\n      orphan\n"));
}

TEST_F(ShowToolCalls, ALongOutputIsCutWithItsSize) {
  const std::string out = Sdb({"show", "agent"}).out;
  EXPECT_TRUE(Contains(out, "      Output, 60 lines, 410 bytes:\n      row 0\n")) << out;
  EXPECT_TRUE(Contains(out, "      row 19\n      \xE2\x80\xA6 40 more lines (--json shows all)\n"));
  EXPECT_FALSE(Contains(out, "row 20\n"));
  // --json keeps the whole output.
  const json j = Sdb({"--json", "show", "agent"}).Json();
  EXPECT_EQ(j["messages"][1]["parts"][2]["text"], long_output_);
}

TEST_F(ShowToolCalls, AResultWhoseCallIsOutOfViewIsShownWhole) {
  CliRun r = Sdb({"show", "agent", "--last", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "    [tool_result e1]\n      Output:\n      updated\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "    [tool_result m1, error]\n      Error:\n      denied\n"));
  EXPECT_FALSE(Contains(r.out, "shown with its call above"));
}

}  // namespace
}  // namespace sessiondb::testing
