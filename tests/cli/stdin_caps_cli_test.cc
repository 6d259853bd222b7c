// What `sessiondb mcp` and `sessiondb hook claude-code` read from stdin,
// bounded while reading: a line (an event) past the cap is refused without
// being held. Before: both buffered a whole 1 GB line before refusing it.
#include <sstream>
#include <string>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class StdinCapsCli : public Cli {};

constexpr size_t kBigLine = size_t{64} << 20;  // 64 MiB, no newline in it

TEST_F(StdinCapsCli, McpRefusesAHugeLineAndServesTheNextOne) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);  // mcp serves an existing store
  std::string input(kBigLine, 'x');
  input += "\n";
  input += R"({"jsonrpc":"2.0","id":7,"method":"ping"})"
           "\n";
  CliRun r = Run({"mcp"}, {.input = input});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  const json a = json::parse(first, nullptr, false);
  ASSERT_TRUE(a.is_object()) << first.substr(0, 200);
  EXPECT_EQ(a["error"]["code"], -32600);
  EXPECT_TRUE(Contains(a["error"]["message"].get<std::string>(), "the limit is 4194304")) << first;
  EXPECT_TRUE(Contains(a["error"]["message"].get<std::string>(), std::to_string(kBigLine)))
      << first;
  const json b = json::parse(second, nullptr, false);
  ASSERT_TRUE(b.is_object()) << second;
  EXPECT_EQ(b["id"], 7);
  EXPECT_TRUE(b.contains("result"));
}

TEST_F(StdinCapsCli, McpAnswersAHugeLastLineWithoutANewline) {
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);  // mcp serves an existing store
  CliRun r = Run({"mcp"}, {.input = std::string(kBigLine, '[')});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "-32600")) << r.out.substr(0, 200);
}

TEST_F(StdinCapsCli, TheHookAllowsAnEventPastItsCapAndExitsZero) {
  std::string event =
      R"({"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/tmp/a.py","content":")";
  event += std::string(kBigLine, 'a');
  CliRun r = Run({"hook", "claude-code"}, {.input = event});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(Contains(r.err, "larger than 4194304 bytes")) << r.err;
}

}  // namespace
}  // namespace sessiondb::testing
