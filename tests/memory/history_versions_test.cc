// File versions learned from stored tool calls (memory/history_versions.h),
// through CodeMemory::LearnFromHistory on a store of each backend: a Write
// gives the file outright, an Edit or a Codex patch hunk gives it only
// applied to a version already known, and an edit that does not fit what is
// known leaves the file unknown until its next whole write.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sessiondb/memory.h"
#include "sessiondb/store.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

Message Call(const std::string& id, const std::string& tool, const nlohmann::json& args) {
  Message m;
  m.role = Role::kAssistant;
  m.parts.push_back(Part::ToolCall(id, tool, args.dump()));
  return m;
}

class HistoryVersionsTest : public BackendTest {
 protected:
  // The "after" versions of `path`, content by content, in order.
  std::vector<std::string> AfterContents(const std::string& path) {
    std::vector<std::string> out;
    auto versions = store_->ListFileVersions({.file_path = path});
    EXPECT_TRUE(versions) << versions.error().ToString();
    if (!versions) return out;
    for (const FileVersion& v : *versions) {
      if (v.phase != FileVersionPhase::kAfter) continue;
      auto bytes = store_->ReadBlob(v.sha256);
      EXPECT_TRUE(bytes) << bytes.error().ToString();
      if (bytes) out.push_back(*bytes);
    }
    return out;
  }

  HistoryScan Learn() {
    auto memory = CodeMemory::Open(*store_);
    EXPECT_TRUE(memory) << memory.error().ToString();
    if (!memory) return {};
    auto scan = (*memory)->LearnFromHistory();
    EXPECT_TRUE(scan) << scan.error().ToString();
    return scan ? *scan : HistoryScan{};
  }
};

TEST_P(HistoryVersionsTest, WritesAndTheEditsThatFollowThemBecomeVersions) {
  ASSERT_TRUE(store_->CreateSession(
      {.id = "s", .metadata_json = R"({"cwd":"/repo","source_session_id":"claude-1"})"}));
  const std::vector<Message> calls = {
      Call("w1", "Write", {{"file_path", "/repo/a.py"}, {"content", "x = 1\ny = 2\n"}}),
      Call("e1", "Edit",
           {{"file_path", "/repo/a.py"}, {"old_string", "y = 2"}, {"new_string", "y = 3"}}),
      Call("m1", "MultiEdit",
           {{"file_path", "a.py"},  // relative: against the session's cwd
            {"edits",
             {{{"old_string", "x = 1"}, {"new_string", "x = 10"}},
              {{"old_string", "x = 10\n"}, {"new_string", "x = 10\nz = 0\n"}}}}}),
      // An edit of a file nobody saw: no version.
      Call("e2", "Edit",
           {{"file_path", "/repo/unseen.py"}, {"old_string", "a"}, {"new_string", "b"}}),
      // An edit that does not fit what is known: a.py is unknown from here...
      Call("e3", "Edit",
           {{"file_path", "/repo/a.py"}, {"old_string", "not there"}, {"new_string", "q"}}),
      Call("e4", "Edit",
           {{"file_path", "/repo/a.py"}, {"old_string", "z = 0"}, {"new_string", "z = 1"}}),
      // ...until its next whole write.
      Call("w2", "Write", {{"file_path", "/repo/a.py"}, {"content", "fresh\n"}}),
      Call("e5", "Edit",
           {{"file_path", "/repo/a.py"}, {"old_string", "fresh"}, {"new_string", "fresher"}}),
  };
  ASSERT_TRUE(store_->AppendBatch("s", calls));
  HistoryScan scan = Learn();
  EXPECT_EQ(AfterContents("/repo/a.py"),
            (std::vector<std::string>{"x = 1\ny = 2\n", "x = 1\ny = 3\n", "x = 10\nz = 0\ny = 3\n",
                                      "fresh\n", "fresher\n"}));
  EXPECT_TRUE(AfterContents("/repo/unseen.py").empty());
  EXPECT_EQ(scan.file_versions, 5);

  auto versions = store_->ListFileVersions({.file_path = "/repo/a.py"});
  ASSERT_TRUE(versions);
  for (const FileVersion& v : *versions) {
    // Under the agent's own session id, so the hook's rows of a call are the ones kept.
    EXPECT_EQ(v.agent_session, "claude-1");
    EXPECT_EQ(v.source, "import");
  }
  // The edit's "before" is the file as the Write left it: not kept again,
  // the Write's "after" just before it says it (what a rewind puts back).
  ASSERT_GE(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].tool_use_id, "w1");
  EXPECT_EQ((*versions)[0].phase, FileVersionPhase::kAfter);
  EXPECT_EQ(*store_->ReadBlob((*versions)[0].sha256), "x = 1\ny = 2\n");
  EXPECT_EQ((*versions)[1].tool_use_id, "e1");
  EXPECT_EQ((*versions)[1].phase, FileVersionPhase::kAfter);

  // Learning again adds nothing.
  const size_t count = versions->size();
  Learn();
  EXPECT_EQ(store_->ListFileVersions({})->size(), count);
}

TEST_P(HistoryVersionsTest, ACodexPatchUpdatesTheFileItAdded) {
  ASSERT_TRUE(store_->CreateSession({.id = "codex", .metadata_json = R"({"cwd":"/work"})"}));
  const std::string add =
      "*** Begin Patch\n*** Add File: src/m.rs\n+fn main() {\n+    println!(\"hi\");\n+}\n"
      "*** End Patch\n";
  const std::string update =
      "*** Begin Patch\n*** Update File: src/m.rs\n@@\n fn main() {\n-    println!(\"hi\");\n"
      "+    println!(\"hello\");\n }\n*** End Patch\n";
  const std::vector<Message> calls = {Call("p1", "apply_patch", {{"input", add}}),
                                      Call("p2", "apply_patch", {{"input", update}})};
  ASSERT_TRUE(store_->AppendBatch("codex", calls));
  Learn();
  EXPECT_EQ(AfterContents("/work/src/m.rs"),
            (std::vector<std::string>{"fn main() {\n    println!(\"hi\");\n}\n",
                                      "fn main() {\n    println!(\"hello\");\n}\n"}));
  auto versions = store_->ListFileVersions({.file_path = "/work/src/m.rs"});
  ASSERT_TRUE(versions);
  ASSERT_FALSE(versions->empty());
  EXPECT_EQ(versions->front().agent_session, "codex");  // no source id: the store's own
}

SESSIONDB_FOR_EACH_BACKEND(HistoryVersionsTest);

}  // namespace
}  // namespace sessiondb::testing
