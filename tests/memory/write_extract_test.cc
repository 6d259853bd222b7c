// Code writes found in tool calls: Claude Code Write/Edit/MultiEdit, Codex
// apply_patch (bare, wrapped, in a shell heredoc), malformed input; and the
// tool calls as the claude-code and codex importers actually store them.
#include "memory/write_extract.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interop/interop_test_support.h"

namespace sessiondb::memory {
namespace {

using nlohmann::json;

void ExpectWrite(const ExtractedWrite& w, const std::string& path, const std::string& old_code,
                 const std::string& new_code, bool whole_file, const std::string& tool) {
  EXPECT_EQ(w.file_path, path);
  EXPECT_EQ(w.old_code, old_code);
  EXPECT_EQ(w.new_code, new_code);
  EXPECT_EQ(w.whole_file, whole_file);
  EXPECT_EQ(w.tool, tool);
}

// --- Claude Code ---

TEST(ExtractWrites, ClaudeCodeWriteIsAWholeFile) {
  const json args = {{"file_path", "/src/a.py"}, {"content", "def f():\n    pass\n"}};
  auto w = ExtractWrites("Write", args.dump());
  ASSERT_EQ(w.size(), 1u);
  ExpectWrite(w[0], "/src/a.py", "", "def f():\n    pass\n", true, "Write");
}

TEST(ExtractWrites, ClaudeCodeEditIsASnippet) {
  const json args = {{"file_path", "/src/a.py"},
                     {"old_string", "return 1"},
                     {"new_string", "return 2"},
                     {"replace_all", false}};
  auto w = ExtractWrites("Edit", args.dump());
  ASSERT_EQ(w.size(), 1u);
  ExpectWrite(w[0], "/src/a.py", "return 1", "return 2", false, "Edit");
  // Deleting text is an edit too.
  auto d = ExtractWrites("Edit",
                         json{{"file_path", "/a"}, {"old_string", "x"}, {"new_string", ""}}.dump());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].new_code, "");
}

TEST(ExtractWrites, ClaudeCodeMultiEditGivesOneWritePerEdit) {
  const json args = {{"file_path", "/src/b.ts"},
                     {"edits", json::array({{{"old_string", "a"}, {"new_string", "b"}},
                                            {{"old_string", "c"}, {"new_string", "d"}}})}};
  auto w = ExtractWrites("MultiEdit", args.dump());
  ASSERT_EQ(w.size(), 2u);
  ExpectWrite(w[0], "/src/b.ts", "a", "b", false, "MultiEdit");
  ExpectWrite(w[1], "/src/b.ts", "c", "d", false, "MultiEdit");
}

TEST(ExtractWrites, MalformedClaudeCodeArgumentsGiveNothing) {
  EXPECT_TRUE(ExtractWrites("Write", "{not json").empty());
  EXPECT_TRUE(ExtractWrites("Write", "").empty());
  EXPECT_TRUE(ExtractWrites("Write", R"({"content":"x"})").empty());  // no file_path
  EXPECT_TRUE(ExtractWrites("Write", R"({"file_path":"","content":"x"})").empty());
  EXPECT_TRUE(ExtractWrites("Write", R"({"file_path":7,"content":"x"})").empty());
  EXPECT_TRUE(ExtractWrites("Write", R"({"file_path":"/a"})").empty());  // no content
  EXPECT_TRUE(ExtractWrites("Write", R"(["/a","x"])").empty());
  EXPECT_TRUE(ExtractWrites("Edit", R"({"file_path":"/a","new_string":"x"})").empty());
  EXPECT_TRUE(ExtractWrites("MultiEdit", R"({"file_path":"/a","edits":"x"})").empty());
  // One bad edit spoils the call, as MultiEdit applies all or none.
  EXPECT_TRUE(ExtractWrites("MultiEdit",
                            R"({"file_path":"/a","edits":[{"old_string":"a","new_string":"b"},)"
                            R"({"old_string":"c"}]})")
                  .empty());
}

TEST(ExtractWrites, OtherToolsGiveNothing) {
  EXPECT_TRUE(ExtractWrites("Read", R"({"file_path":"/a"})").empty());
  EXPECT_TRUE(ExtractWrites("Bash", R"({"command":"ls"})").empty());
  EXPECT_TRUE(ExtractWrites("shell", R"({"command":["rg","-n","apply"]})").empty());
}

// --- Codex apply_patch ---

constexpr const char* kPatch =
    "*** Begin Patch\n"
    "*** Add File: src/new.py\n"
    "+def hello():\n"
    "+    return 'hi'\n"
    "*** Update File: src/app.py\n"
    "@@ def load():\n"
    " def load():\n"
    "-    return 1\n"
    "+    return 2\n"
    "@@ class A:\n"
    "@@     def f(self):\n"
    "     x = 1\n"
    "-    y = 2\n"
    "+    y = 3\n"
    "+    z = 4\n"
    "*** End of File\n"
    "*** Update File: old/name.py\n"
    "*** Move to: new/name.py\n"
    "@@\n"
    "-import os\n"
    "+import sys\n"
    "*** Delete File: src/gone.py\n"
    "*** End Patch\n";

void ExpectPatchWrites(const std::vector<ExtractedWrite>& w, const std::string& tool) {
  ASSERT_EQ(w.size(), 4u);
  ExpectWrite(w[0], "src/new.py", "", "def hello():\n    return 'hi'\n", true, tool);
  ExpectWrite(w[1], "src/app.py", "def load():\n    return 1", "def load():\n    return 2", false,
              tool);
  // Consecutive @@ anchors belong to one hunk.
  ExpectWrite(w[2], "src/app.py", "    x = 1\n    y = 2", "    x = 1\n    y = 3\n    z = 4", false,
              tool);
  ExpectWrite(w[3], "new/name.py", "import os", "import sys", false, tool);
}

TEST(ExtractWrites, ApplyPatchAddUpdateWithTwoHunksMoveAndDelete) {
  ExpectPatchWrites(ExtractWrites("apply_patch", kPatch), "apply_patch");
}

TEST(ExtractWrites, ApplyPatchAcceptsInputOrPatchWrappers) {
  ExpectPatchWrites(ExtractWrites("apply_patch", json{{"input", kPatch}}.dump()), "apply_patch");
  ExpectPatchWrites(ExtractWrites("apply_patch", json{{"patch", kPatch}}.dump()), "apply_patch");
  ExpectPatchWrites(ExtractWrites("apply_patch", json(kPatch).dump()), "apply_patch");
}

TEST(ExtractWrites, ApplyPatchOfOnlyADeleteGivesNothing) {
  EXPECT_TRUE(
      ExtractWrites("apply_patch", "*** Begin Patch\n*** Delete File: a.py\n*** End Patch\n")
          .empty());
}

TEST(ExtractWrites, ShellHeredocApplyPatch) {
  const std::string script = std::string("apply_patch <<'EOF'\n") + kPatch + "EOF\n";
  const json args = {{"command", json::array({"bash", "-lc", script})},
                     {"workdir", "/home/dev/app"},
                     {"timeout_ms", 10000}};
  ExpectPatchWrites(ExtractWrites("shell", args.dump()), "shell");
  // The folder it ran in comes along: the patch's paths are relative to it.
  for (const ExtractedWrite& w : ExtractWrites("shell", args.dump())) {
    EXPECT_EQ(w.workdir, "/home/dev/app");
  }
  // A command string, an unquoted delimiter, something before the call.
  const std::string script2 = std::string("cd /x && apply_patch << PATCH\n") + kPatch + "PATCH";
  ExpectPatchWrites(ExtractWrites("exec_command", json{{"cmd", script2}}.dump()), "exec_command");
  // local_shell stores its action: {"type":"exec","command":[...]}.
  const json action = {{"type", "exec"}, {"command", json::array({"bash", "-lc", script})}};
  ExpectPatchWrites(ExtractWrites("local_shell", action.dump()), "local_shell");
  // ["apply_patch", patch]: the patch as the argument.
  ExpectPatchWrites(
      ExtractWrites("shell", json{{"command", json::array({"apply_patch", kPatch})}}.dump()),
      "shell");
}

TEST(ExtractWrites, MalformedPatchesGiveNothing) {
  // No "*** End Patch".
  EXPECT_TRUE(
      ExtractWrites("apply_patch", "*** Begin Patch\n*** Add File: a.py\n+x = 1\n").empty());
  // No "*** Begin Patch".
  EXPECT_TRUE(ExtractWrites("apply_patch", "*** Add File: a.py\n+x = 1\n*** End Patch\n").empty());
  // A hunk line that is neither context, '-' nor '+'.
  EXPECT_TRUE(ExtractWrites("apply_patch",
                            "*** Begin Patch\n*** Update File: a.py\n@@\n-a\n?b\n*** End Patch\n")
                  .empty());
  // An Add File line without '+'.
  EXPECT_TRUE(
      ExtractWrites("apply_patch", "*** Begin Patch\n*** Add File: a.py\nx = 1\n*** End Patch\n")
          .empty());
  // A header without a path; an unknown header.
  EXPECT_TRUE(
      ExtractWrites("apply_patch", "*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n").empty());
  EXPECT_TRUE(
      ExtractWrites("apply_patch", "*** Begin Patch\n*** Rename File: a\n*** End Patch\n").empty());
  EXPECT_TRUE(ExtractWrites("apply_patch", R"({"other":"x"})").empty());
  EXPECT_TRUE(ExtractWrites("apply_patch", "").empty());
  // A heredoc that never ends, and bad shell arguments.
  const std::string unterminated = std::string("apply_patch <<'EOF'\n") + kPatch;
  EXPECT_TRUE(
      ExtractWrites("shell", json{{"command", json::array({"bash", "-lc", unterminated})}}.dump())
          .empty());
  EXPECT_TRUE(ExtractWrites("shell", "{\"command\": [\"bash\", ").empty());
  EXPECT_TRUE(ExtractWrites("shell", R"({"command":[1,2]})").empty());
  EXPECT_TRUE(ExtractWrites("shell", R"({"workdir":"/x"})").empty());
}

// --- As the importers store them ---

using sessiondb::testing::EventsOf;
using sessiondb::testing::MustImport;
using sessiondb::testing::OpenTestStore;
using sessiondb::testing::TempDir;
using sessiondb::testing::WriteFile;

std::vector<ExtractedWrite> WritesOfSession(Store& store, const std::string& session_id) {
  std::vector<ExtractedWrite> out;
  for (const Event& e : EventsOf(store, session_id)) {
    for (const Part& p : e.message.parts) {
      if (p.type != PartType::kToolCall) continue;
      for (ExtractedWrite& w : ExtractWrites(p.tool_name, p.arguments_json)) {
        out.push_back(std::move(w));
      }
    }
  }
  return out;
}

constexpr const char* kSmallPatch =
    "*** Begin Patch\n*** Update File: src/app.css\n@@\n-display: flex\n+display: grid\n"
    "*** End Patch";

TEST(ExtractWritesFromImports, CodexRolloutToolCallsAsTheImporterStoresThem) {
  constexpr const char* kId = "0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f8";
  auto line = [](const std::string& ts, const std::string& type, json payload) {
    return json{{"timestamp", ts}, {"type", type}, {"payload", std::move(payload)}}.dump() + "\n";
  };
  std::string rollout;
  rollout += line("2025-10-29T00:59:38.317Z", "session_meta",
                  {{"id", kId}, {"timestamp", "2025-10-29T00:59:38.308Z"}, {"cwd", "/app"}});
  // A freeform custom tool call: stored as {"input": patch}.
  rollout += line("2025-10-29T00:59:45.000Z", "response_item",
                  {{"type", "custom_tool_call"},
                   {"call_id", "call_1"},
                   {"name", "apply_patch"},
                   {"input", kSmallPatch}});
  // A function call whose arguments are the bare patch (not JSON): wrapped the same way.
  rollout +=
      line("2025-10-29T00:59:46.000Z", "response_item",
           {{"type", "function_call"},
            {"call_id", "call_2"},
            {"name", "apply_patch"},
            {"arguments", "*** Begin Patch\n*** Add File: b.go\n+package b\n*** End Patch"}});
  // The shell tool running apply_patch through a heredoc: arguments kept as JSON.
  const std::string script =
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n"
      "-\tprintln(1)\n+\tprintln(2)\n*** End Patch\nEOF\n";
  rollout +=
      line("2025-10-29T00:59:47.000Z", "response_item",
           {{"type", "function_call"},
            {"call_id", "call_3"},
            {"name", "shell"},
            {"arguments",
             json{{"command", json::array({"bash", "-lc", script})}, {"workdir", "/app"}}.dump()}});
  rollout += line("2025-10-29T00:59:48.000Z", "response_item",
                  {{"type", "local_shell_call"},
                   {"call_id", "call_4"},
                   {"status", "completed"},
                   {"action",
                    {{"type", "exec"},
                     {"command", json::array({"apply_patch", kSmallPatch})},
                     {"working_directory", "/app"}}}});
  // Not a write.
  rollout += line("2025-10-29T00:59:49.000Z", "response_item",
                  {{"type", "function_call"},
                   {"call_id", "call_5"},
                   {"name", "shell"},
                   {"arguments", R"({"command":["rg","-n","flex"]})"}});

  TempDir dir;
  const std::string file = dir.Sub("rollout-2025-10-29T00-59-38-" + std::string(kId) + ".jsonl");
  WriteFile(file, rollout);
  auto store = OpenTestStore(dir);
  MustImport(*store, file, "codex");
  const std::vector<ExtractedWrite> w = WritesOfSession(*store, kId);
  ASSERT_EQ(w.size(), 4u);
  ExpectWrite(w[0], "src/app.css", "display: flex", "display: grid", false, "apply_patch");
  ExpectWrite(w[1], "b.go", "", "package b\n", true, "apply_patch");
  ExpectWrite(w[2], "main.go", "\tprintln(1)", "\tprintln(2)", false, "shell");
  ExpectWrite(w[3], "src/app.css", "display: flex", "display: grid", false, "local_shell");
}

TEST(ExtractWritesFromImports, ClaudeCodeToolUsesAsTheImporterStoresThem) {
  constexpr const char* kSession = "0b9d1c2e-1111-4222-8333-944455556667";
  auto record = [&](const std::string& type, int uuid, int parent, json message) {
    auto id = [](int n) { return "aaaaaaaa-0000-4000-8000-00000000000" + std::to_string(n); };
    return json{{"parentUuid", parent ? json(id(parent)) : json(nullptr)},
                {"isSidechain", false},
                {"cwd", "/home/dev/app"},
                {"sessionId", kSession},
                {"type", type},
                {"message", std::move(message)},
                {"uuid", id(uuid)},
                {"timestamp", "2025-06-01T10:00:0" + std::to_string(uuid) + ".000Z"}}
               .dump() +
           "\n";
  };
  auto tool_use = [](const std::string& id, const std::string& name, json input) {
    return json{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", std::move(input)}};
  };
  std::string transcript;
  transcript += record("user", 1, 0, {{"role", "user"}, {"content", "Fix the app"}});
  transcript += record(
      "assistant", 2, 1,
      {{"id", "msg_1"},
       {"role", "assistant"},
       {"model", "claude-sonnet-4-20250514"},
       {"content",
        json::array(
            {tool_use(
                 "toolu_1", "Write",
                 {{"file_path", "/home/dev/app/a.py"}, {"content", "def f():\n    return 1\n"}}),
             tool_use("toolu_2", "Edit",
                      {{"file_path", "/home/dev/app/a.py"},
                       {"old_string", "return 1"},
                       {"new_string", "return 2"}}),
             tool_use("toolu_3", "MultiEdit",
                      {{"file_path", "/home/dev/app/b.py"},
                       {"edits", json::array({{{"old_string", "x"}, {"new_string", "y"}}})}}),
             tool_use("toolu_4", "Read", {{"file_path", "/home/dev/app/a.py"}})})}});

  TempDir dir;
  const std::string project = dir.Sub("projects/-home-dev-app");
  std::filesystem::create_directories(project);
  const std::string file = project + "/" + kSession + ".jsonl";
  WriteFile(file, transcript);
  auto store = OpenTestStore(dir);
  MustImport(*store, file, "claude-code");
  const std::vector<ExtractedWrite> w = WritesOfSession(*store, kSession);
  ASSERT_EQ(w.size(), 3u);
  ExpectWrite(w[0], "/home/dev/app/a.py", "", "def f():\n    return 1\n", true, "Write");
  ExpectWrite(w[1], "/home/dev/app/a.py", "return 1", "return 2", false, "Edit");
  ExpectWrite(w[2], "/home/dev/app/b.py", "x", "y", false, "MultiEdit");
}

}  // namespace
}  // namespace sessiondb::memory
