// The hook never waits on the file a tool call names. Before: a file_path
// of /dev/zero read forever (1.8 GB in 3 s) and a FIFO blocked the hook, and
// the agent waiting on it, forever.
#include <sys/stat.h>

#include <string>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class HookFilesCli : public Cli {};

std::string WithEvent(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::string HookEvent(const std::string& tool, const std::string& path) {
  json input = {{"file_path", path}};
  if (tool == "Write") input["content"] = "def f():\n    return 2\n";
  if (tool == "Edit") {
    input["old_string"] = "1";
    input["new_string"] = "2";
  }
  return json{{"hook_event_name", "PreToolUse"},
              {"tool_name", tool},
              {"session_id", "s1"},
              {"cwd", "/tmp"},
              {"tool_input", input}}
      .dump();
}

// Each would hang before (the fixture's 60 s alarm then kills the process:
// exit_code -1).
TEST_F(HookFilesCli, TheHookAllowsFilesItMustNotReadAndExitsZero) {
  const std::string fifo = dir_.Sub("pipe.py");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string sparse = dir_.Sub("sparse.py");
  { std::ofstream(sparse) << "x"; }
  std::filesystem::resize_file(sparse, uintmax_t{16} << 30);
  for (const std::string& tool : {std::string("Write"), std::string("Edit")}) {
    for (const std::string& path : {std::string("/dev/zero"), fifo, dir_.path().string(), sparse}) {
      SCOPED_TRACE(tool + " " + path);
      CliRun r = Run({"hook", "claude-code"}, {.input = HookEvent(tool, path)});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out, "") << "the call must be allowed";
      EXPECT_TRUE(Contains(r.err, "allowed")) << r.err;
    }
  }
  // The hook still works for a regular file afterwards.
  const std::string code = WriteFile("ok.py", "def f():\n    return 1\n");
  CliRun post = Run({"hook", "claude-code"},
                    {.input = WithEvent(HookEvent("Write", code), "PreToolUse", "PostToolUse")});
  EXPECT_EQ(post.exit_code, 0) << post.err;
}

}  // namespace
}  // namespace sessiondb::testing
