// Code checkpoints put to use (include/sessiondb/code_checkpoints.h), over
// versions recorded in-process through Store::RecordFileVersion and real
// files in a temporary folder: a rewind to every seq restores the exact
// bytes (fresh, and one rewind after another), a file the agent created is
// removed, a conflict refuses everything unless forced, a symbolic link is
// never written through, and blame attributes lines across an outside edit.
#include "sessiondb/code_checkpoints.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "core/unified_diff.h"
#include "memory/checkpoint_files.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

using FileState = std::optional<std::string>;  // nullopt: no file

class CodeCheckpointsTest : public BackendTest {
 protected:
  std::string WorkPath(const std::string& name) { return work_.Sub(name); }

  static FileState Disk(const std::string& path) {
    if (!std::filesystem::exists(std::filesystem::symlink_status(path))) return std::nullopt;
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  }

  // A change made outside any recorded call.
  static void Put(const std::string& path, const FileState& content) {
    if (!content) {
      std::filesystem::remove(path);
      return;
    }
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << *content;
  }

  FileVersion Record(const std::string& agent, const std::string& call, const std::string& path,
                     FileVersionPhase phase, const FileState& content,
                     const std::string& tool = "Write") {
    FileVersion v;
    v.agent_session = agent;
    v.tool_use_id = call;
    v.file_path = path;
    v.phase = phase;
    v.exists = content.has_value();
    v.tool = tool;
    v.source = "hook";
    auto r = store_->RecordFileVersion(v, content.value_or(""));
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : v;
  }

  // What the hook sees of one tool call: the file before, the call in the
  // conversation, the write, the file after. Returns the call's seq.
  int64_t AgentWrites(const std::string& session, const std::string& agent, const std::string& path,
                      const FileState& content) {
    const std::string call = "toolu_" + std::to_string(++calls_);
    now_ms_ += 1000;
    Record(agent, call, path, FileVersionPhase::kBefore, Disk(path));
    Message m;
    m.role = Role::kAssistant;
    m.parts.push_back(Part::ToolCall(call, "Write", "{}"));
    auto appended = store_->Append(session, m);
    EXPECT_TRUE(appended) << appended.error().ToString();
    Put(path, content);
    Record(agent, call, path, FileVersionPhase::kAfter, content);
    return appended ? appended->seq : 0;
  }

  int64_t UserSays(const std::string& session, const std::string& text) {
    now_ms_ += 1000;
    return AppendText(session, text).seq;
  }

  // A session imported from agent `agent` (it carries its id).
  std::string ImportedSession(const std::string& agent) {
    auto s = store_->CreateSession(
        NewSession{.metadata_json = "{\"source_session_id\":\"" + agent + "\"}"});
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? s->id : "";
  }

  struct Scenario {
    std::string session, agent, a, b;
    std::map<int64_t, std::pair<FileState, FileState>> at;  // seq -> (a, b) after it
    int64_t last_seq = 0;
  };

  // Two files over eight seqs: created, edited, removed and created again.
  Scenario Build(const std::string& folder) {
    Scenario s;
    s.agent = "claude-" + folder;
    s.session = ImportedSession(s.agent);
    s.a = WorkPath(folder + "/src/a.txt");
    s.b = WorkPath(folder + "/b.txt");
    auto snap = [&](int64_t seq) { s.at[seq] = {Disk(s.a), Disk(s.b)}; };
    snap(0);
    snap(UserSays(s.session, "make a"));
    snap(AgentWrites(s.session, s.agent, s.a, "one\n"));
    snap(AgentWrites(s.session, s.agent, s.a, "one\ntwo\n"));
    snap(UserSays(s.session, "now b"));
    snap(AgentWrites(s.session, s.agent, s.b, "b\n"));
    snap(AgentWrites(s.session, s.agent, s.a, "zero\none\ntwo"));  // no final newline
    snap(AgentWrites(s.session, s.agent, s.b, std::nullopt));
    s.last_seq = AgentWrites(s.session, s.agent, s.b, std::string("b\0again\n", 8));
    snap(s.last_seq);
    return s;
  }

  // Rewinds the code of `session` to `seq` as `rewind --code-only` does.
  Status RewindCode(const std::string& session, int64_t seq, bool force = false) {
    auto plan = PlanCodeRewind(*store_, session, seq);
    if (!plan) return plan.error();
    Status s = ApplyFileRestores(plan->files, force);
    Status recorded = RecordFileRestores(*store_, plan->files, plan->agent_session, "rewind");
    EXPECT_TRUE(recorded.ok()) << recorded.ToString();
    return s;
  }

  TempDir work_;
  int calls_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Backends, CodeCheckpointsTest,
                         ::testing::Values(Backend::kEmbedded, Backend::kPostgres,
                                           Backend::kPostgresEncrypted),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return BackendName(info.param);
                         });

TEST_P(CodeCheckpointsTest, RewindingToEverySeqRestoresTheExactBytes) {
  const Scenario first = Build("probe");
  for (int64_t seq = 0; seq <= first.last_seq; ++seq) {
    const Scenario s = Build("at" + std::to_string(seq));
    ASSERT_TRUE(RewindCode(s.session, seq).ok()) << "to #" << seq;
    EXPECT_EQ(Disk(s.a), s.at.at(seq).first) << "a.txt at #" << seq;
    EXPECT_EQ(Disk(s.b), s.at.at(seq).second) << "b.txt at #" << seq;
  }
}

TEST_P(CodeCheckpointsTest, OneRewindAfterAnotherBackwardsAndForwards) {
  const Scenario s = Build("chain");
  // Each rewind records what it wrote, so the next one sees no conflict;
  // to the last seq brings back the end.
  for (int64_t seq : {6, 2, 0, 8, 7, 3, 8, 5, 1, 4}) {
    ASSERT_TRUE(RewindCode(s.session, seq).ok()) << "to #" << seq;
    EXPECT_EQ(Disk(s.a), s.at.at(seq).first) << "a.txt at #" << seq;
    EXPECT_EQ(Disk(s.b), s.at.at(seq).second) << "b.txt at #" << seq;
  }
}

TEST_P(CodeCheckpointsTest, AFileTheAgentCreatedIsRemovedAndItsFolderKept) {
  const Scenario s = Build("created");
  auto plan = PlanCodeRewind(*store_, s.session, 1);
  ASSERT_TRUE(plan) << plan.error().ToString();
  ASSERT_EQ(plan->files.size(), 2u);
  EXPECT_EQ(plan->files[0].file_path, s.b);  // by path: ".../b.txt" < ".../src/a.txt"
  EXPECT_EQ(plan->files[1].action, FileRestoreAction::kRemove);
  EXPECT_EQ(plan->files[0].action, FileRestoreAction::kRemove);
  ASSERT_TRUE(ApplyFileRestores(plan->files, false).ok());
  EXPECT_FALSE(std::filesystem::exists(s.a));
  EXPECT_FALSE(std::filesystem::exists(s.b));
  EXPECT_TRUE(std::filesystem::is_directory(std::filesystem::path(s.a).parent_path()));
}

TEST_P(CodeCheckpointsTest, AConflictRefusesEverythingUnlessForced) {
  const Scenario s = Build("conflict");
  Put(s.b, "someone else's b\n");  // an outside change after the agent's last write
  auto plan = PlanCodeRewind(*store_, s.session, 3);
  ASSERT_TRUE(plan) << plan.error().ToString();
  ASSERT_TRUE(plan->HasConflict());
  for (const FileRestore& f : plan->files) {
    EXPECT_EQ(!f.conflict.empty(), f.file_path == s.b) << f.file_path << ": " << f.conflict;
  }
  Status refused = ApplyFileRestores(plan->files, /*force=*/false);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("--force"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find(s.b), std::string::npos) << refused.message();
  // Nothing at all changed: not even a.txt, which had no conflict.
  EXPECT_EQ(Disk(s.a), s.at.at(s.last_seq).first);
  EXPECT_EQ(Disk(s.b), "someone else's b\n");

  ASSERT_TRUE(ApplyFileRestores(plan->files, /*force=*/true).ok());
  EXPECT_EQ(Disk(s.a), s.at.at(3).first);
  EXPECT_EQ(Disk(s.b), s.at.at(3).second);
}

TEST_P(CodeCheckpointsTest, AFileRemovedOutsideIsAConflictToo) {
  const Scenario s = Build("removed");
  std::filesystem::remove(s.a);
  auto plan = PlanCodeRewind(*store_, s.session, 3);
  ASSERT_TRUE(plan);
  const auto a = std::find_if(plan->files.begin(), plan->files.end(),
                              [&](const FileRestore& f) { return f.file_path == s.a; });
  ASSERT_NE(a, plan->files.end());
  EXPECT_NE(a->conflict.find("removed"), std::string::npos) << a->conflict;
}

TEST_P(CodeCheckpointsTest, PlanningChangesNothingAndItsDiffGoesFromNowToTheRestored) {
  const Scenario s = Build("dry");
  auto plan = PlanCodeRewind(*store_, s.session, 3);
  ASSERT_TRUE(plan) << plan.error().ToString();
  EXPECT_EQ(Disk(s.a), s.at.at(s.last_seq).first);
  EXPECT_EQ(Disk(s.b), s.at.at(s.last_seq).second);
  const auto a = std::find_if(plan->files.begin(), plan->files.end(),
                              [&](const FileRestore& f) { return f.file_path == s.a; });
  ASSERT_NE(a, plan->files.end());
  EXPECT_EQ(a->action, FileRestoreAction::kRestore);
  const std::string diff = FileRestoreDiff(*a);
  EXPECT_NE(diff.find("\n-zero\n"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("+zero"), std::string::npos) << diff;
  EXPECT_NE(diff.find("--- " + s.a + " (now)"), std::string::npos) << diff;
}

TEST_P(CodeCheckpointsTest, ASeqOutsideTheLogIsRefused) {
  const Scenario s = Build("range");
  auto plan = PlanCodeRewind(*store_, s.session, s.last_seq + 1);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PlanCodeRewind(*store_, "no-such-session", 0).error().code(), StatusCode::kNotFound);
}

TEST_P(CodeCheckpointsTest, ASymbolicLinkIsNeverWrittenThrough) {
  const Scenario s = Build("link");
  // The file itself becomes a link to a file the agent never wrote.
  const std::string victim = WorkPath("victim.txt");
  Put(victim, "keep me\n");
  std::filesystem::remove(s.a);
  std::filesystem::create_symlink(victim, s.a);
  auto plan = PlanCodeRewind(*store_, s.session, 3);
  ASSERT_TRUE(plan) << plan.error().ToString();
  EXPECT_TRUE(plan->HasRefusal());
  Status st = ApplyFileRestores(plan->files, /*force=*/true);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_EQ(Disk(victim), "keep me\n");
  EXPECT_EQ(Disk(s.b), s.at.at(s.last_seq).second);  // refused means nothing is written

  // A parent folder that is a link: the write is refused, the target untouched.
  const std::string real = WorkPath("real");
  std::filesystem::create_directories(real);
  std::filesystem::create_symlink(real, WorkPath("alias"));
  EXPECT_EQ(memory::WriteDiskFile(WorkPath("alias/x.txt"), "x").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(std::filesystem::exists(real + "/x.txt"));
  EXPECT_EQ(memory::RemoveDiskFile(s.a).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(std::filesystem::is_symlink(s.a));
}

TEST_P(CodeCheckpointsTest, WritesAreAtomicKeepTheModeAndRefuseAbnormalPaths) {
  const std::string path = WorkPath("deep/er/f.sh");
  ASSERT_TRUE(memory::WriteDiskFile(path, "#!/bin/sh\n").ok());  // parents made
  ASSERT_EQ(::chmod(path.c_str(), 0750), 0);
  ASSERT_TRUE(memory::WriteDiskFile(path, "#!/bin/sh\necho\n").ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(Disk(path), "#!/bin/sh\necho\n");
  // No temporary file left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(WorkPath("deep/er")), {}), 1);
  for (const std::string bad : {"relative/f.txt", "/a/../b", "/a/./b", "/a//b", "/a/b/", "/"}) {
    EXPECT_EQ(memory::WriteDiskFile(bad, "x").code(), StatusCode::kInvalidArgument) << bad;
  }
  auto big = memory::ReadDiskFile(path, 4);
  ASSERT_TRUE(big);
  EXPECT_TRUE(big->exists && big->too_large);
  auto none = memory::ReadDiskFile(WorkPath("missing/dir/f"), 100);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->exists);
}

TEST_P(CodeCheckpointsTest, AVersionIsPlacedByItsCallElseByItsTime) {
  const std::string agent = "claude-place";
  const std::string session = ImportedSession(agent);
  const std::string path = WorkPath("place.txt");
  UserSays(session, "first");                                         // #1
  const int64_t call_seq = AgentWrites(session, agent, path, "x\n");  // #2
  UserSays(session, "third");                                         // #3, at t
  const int64_t t = now_ms_;
  now_ms_ += 500;
  Record(agent, "toolu_not_in_the_log", path, FileVersionPhase::kAfter, "y\n", "Bash");
  now_ms_ += 1000;
  UserSays(session, "fourth");  // #4
  auto placed = SessionFileVersions(*store_, session);
  ASSERT_TRUE(placed) << placed.error().ToString();
  ASSERT_EQ(placed->size(), 3u);
  EXPECT_EQ((*placed)[0].seq, call_seq);
  EXPECT_EQ((*placed)[1].seq, call_seq);
  EXPECT_EQ((*placed)[2].seq, 3) << "the last event at or before " << t + 500;
  // A version of another agent is not this session's.
  Record("someone-else", "toolu_x", path, FileVersionPhase::kAfter, "z\n");
  EXPECT_EQ(SessionFileVersions(*store_, session)->size(), 3u);
}

TEST_P(CodeCheckpointsTest, FileHistoryNumbersTheWritesWithTheirPromptAndDiff) {
  const Scenario s = Build("history");
  auto history = ReadFileHistory(*store_, s.a, /*with_diffs=*/true);
  ASSERT_TRUE(history) << history.error().ToString();
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ((*history)[0].number, 1);
  EXPECT_EQ((*history)[2].number, 3);
  EXPECT_EQ((*history)[0].placed.session_id, s.session);
  EXPECT_EQ((*history)[0].placed.seq, 2);
  EXPECT_EQ((*history)[0].prompt, "make a");
  EXPECT_EQ((*history)[2].prompt, "now b");
  EXPECT_NE((*history)[0].diff.find("--- /dev/null"), std::string::npos) << (*history)[0].diff;
  EXPECT_NE((*history)[1].diff.find("\n+two\n"), std::string::npos) << (*history)[1].diff;
  EXPECT_EQ((*history)[1].diff.find("+one"), std::string::npos) << (*history)[1].diff;

  auto restore = PlanFileRestore(*store_, s.a, 1);
  ASSERT_TRUE(restore) << restore.error().ToString();
  std::vector<FileRestore> files = {*restore};
  ASSERT_TRUE(ApplyFileRestores(files, false).ok());
  EXPECT_EQ(Disk(s.a), "one\n");
  EXPECT_EQ(PlanFileRestore(*store_, s.a, 4).error().code(), StatusCode::kNotFound);
}

TEST_P(CodeCheckpointsTest, BlameAttributesLinesAcrossAnOutsideEdit) {
  const std::string path = WorkPath("blame.py");
  const std::string s1 = ImportedSession("agent-one");
  const std::string s2 = ImportedSession("agent-two");
  UserSays(s1, "write it");
  const int64_t seq1 = AgentWrites(s1, "agent-one", path, "a\nb\nc\n");
  Put(path, "a\nB\nc\n");  // by hand, between the calls
  UserSays(s2, "add d");
  UserSays(s2, "really");
  const int64_t seq2 = AgentWrites(s2, "agent-two", path, "a\nB\nc\nd\n");
  Put(path, "a\nB\nc\nd\ne\n");  // by hand, after

  auto lines = BlameFile(*store_, path);
  ASSERT_TRUE(lines) << lines.error().ToString();
  ASSERT_EQ(lines->size(), 5u);
  const std::vector<std::string> texts = {"a", "B", "c", "d", "e"};
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ((*lines)[i].text, texts[i]);
    EXPECT_EQ((*lines)[i].line, static_cast<int64_t>(i) + 1);
  }
  ASSERT_TRUE((*lines)[0].by);
  EXPECT_EQ((*lines)[0].by->session_id, s1);
  EXPECT_EQ((*lines)[0].by->seq, seq1);
  EXPECT_EQ((*lines)[0].by->version.agent_session, "agent-one");
  EXPECT_FALSE((*lines)[1].by) << "B was typed by hand";
  ASSERT_TRUE((*lines)[2].by);
  EXPECT_EQ((*lines)[2].by->session_id, s1);
  ASSERT_TRUE((*lines)[3].by);
  EXPECT_EQ((*lines)[3].by->session_id, s2);
  EXPECT_EQ((*lines)[3].by->seq, seq2);
  EXPECT_EQ((*lines)[3].by->version.phase, FileVersionPhase::kAfter);
  EXPECT_FALSE((*lines)[4].by) << "e was typed by hand";

  EXPECT_EQ(BlameFile(*store_, WorkPath("nothing.py")).error().code(), StatusCode::kNotFound);
}

TEST_P(CodeCheckpointsTest, BlameAfterARewindNamesTheCallsThatFirstWroteTheLines) {
  const std::string agent = "agent-back";
  const std::string session = ImportedSession(agent);
  const std::string path = WorkPath("back.py");
  UserSays(session, "start");
  const int64_t first = AgentWrites(session, agent, path, "a\nb\n");
  const int64_t second = AgentWrites(session, agent, path, "a\nB\nc\n");
  ASSERT_TRUE(RewindCode(session, first).ok());
  auto lines = BlameFile(*store_, path);
  ASSERT_TRUE(lines) << lines.error().ToString();
  ASSERT_EQ(lines->size(), 2u);
  for (const BlameLine& l : *lines) {
    ASSERT_TRUE(l.by) << l.text;
    EXPECT_EQ(l.by->seq, first) << l.text << ": the call that wrote it, not the rewind";
    EXPECT_EQ(l.by->version.tool, "Write");
  }
  ASSERT_TRUE(RewindCode(session, second).ok());  // forwards again
  lines = BlameFile(*store_, path);
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 3u);
  EXPECT_EQ((*lines)[0].by->seq, first);
  EXPECT_EQ((*lines)[1].by->seq, second);
  EXPECT_EQ((*lines)[2].by->seq, second);
}

TEST_P(CodeCheckpointsTest, BlameGivesAShellWriteItsLinesAndAnUnknownFileNone) {
  const std::string path = WorkPath("shell.txt");
  Put(path, "mine\n");
  Record("agent-sh", "", path, FileVersionPhase::kAfter, "mine\nshell\n", "Bash");
  Put(path, "mine\nshell\n");
  auto lines = BlameFile(*store_, path);
  ASSERT_TRUE(lines);
  ASSERT_EQ(lines->size(), 2u);
  // No "before" was recorded: the first write is all the model knows.
  ASSERT_TRUE((*lines)[1].by);
  EXPECT_EQ((*lines)[1].by->version.tool, "Bash");
  EXPECT_TRUE((*lines)[1].by->session_id.empty()) << "no store session holds agent-sh";

  const std::string other = WorkPath("plain.txt");
  Put(other, "x\ny\n");
  auto plain = BlameFile(*store_, other);
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->size(), 2u);
  EXPECT_FALSE((*plain)[0].by);
  EXPECT_FALSE((*plain)[1].by);
}

TEST(UnifiedDiff, HunksContextAndTheCap) {
  EXPECT_EQ(UnifiedDiff("same\n", "same\n"), "");
  EXPECT_EQ(UnifiedDiff("a\nb\n", "a\nc\n", {.old_label = "x", .new_label = "y"}),
            "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
  EXPECT_EQ(UnifiedDiff("", "n\n", {.old_label = "/dev/null", .new_label = "y"}),
            "--- /dev/null\n+++ y\n@@ -0,0 +1 @@\n+n\n");
  std::string old_text, new_text;
  for (int i = 0; i < 30; ++i) {
    old_text += std::to_string(i) + "\n";
    new_text += (i == 3 || i == 25 ? "changed" : std::to_string(i)) + std::string("\n");
  }
  const std::string two = UnifiedDiff(old_text, new_text);
  EXPECT_NE(two.find("@@ -1,7 +1,7 @@"), std::string::npos) << two;
  EXPECT_NE(two.find("@@ -23,7 +23,7 @@"), std::string::npos) << two;
  const std::string capped = UnifiedDiff(old_text, new_text, {.max_lines = 3});
  EXPECT_NE(capped.find("... 15 more lines\n"), std::string::npos) << capped;
  EXPECT_NE(UnifiedDiff("a", "a\n").find("only the final newline"), std::string::npos);
  EXPECT_NE(UnifiedDiff(std::string("a\0b", 3), "ab").find("Binary files differ"),
            std::string::npos);
}

}  // namespace
}  // namespace sessiondb::testing
