// The Claude Code hook keeps code checkpoints (docs/memory.md, "What the
// hook keeps"): the real `sessiondb hook claude-code` process is fed events
// as Claude Code sends them, and the file versions it kept are read back
// through the library, on an embedded store and on PostgreSQL. Each test
// names what would be lost if the hook got it wrong: the content before an
// edit, a file the agent created, a change made through the shell, an agent
// left waiting on a FIFO.
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "blob/sha256.h"
#include "cli_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace checkpoint_hook_cli {

constexpr char kAgent[] = "agent-session-1";

class CheckpointHookCli : public Cli, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      pg_ = std::make_unique<PgTestDatabase>();
      ASSERT_TRUE(pg_->ok());
      location_ = pg_->uri();
    } else {
      location_ = store_;
    }
    std::filesystem::create_directories(project_);
  }

  // An event as Claude Code sends it; PostToolUse carries the tool's response.
  std::string Event(const std::string& name, const std::string& tool, const std::string& call,
                    const json& input, const std::string& session = kAgent) {
    json e = {{"session_id", session}, {"transcript_path", dir_.Sub("transcript.jsonl")},
              {"cwd", project_},       {"hook_event_name", name},
              {"tool_name", tool},     {"tool_input", input},
              {"tool_use_id", call}};
    if (name == "PostToolUse") e["tool_response"] = {{"success", true}};
    return e.dump();
  }

  CliRun Hook(const std::string& event, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--store", location_, "hook", "claude-code"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Run(args, {.input = event, .with_store = false});
  }

  // Runs the event through the hook and expects the call to be let go.
  CliRun HookAllows(const std::string& event, const std::vector<std::string>& extra = {}) {
    CliRun r = Hook(event, extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "") << "the call must go on";
    return r;
  }

  // Runs the event as the agent lives it: a PreToolUse the code memory
  // denies (it recalls similar code, once) is retried, the same call, and
  // then goes on.
  CliRun HookAsAgent(const std::string& event) {
    CliRun r = Hook(event);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (!r.out.empty()) {
      EXPECT_TRUE(Contains(r.out, "\"permissionDecision\":\"deny\"")) << r.out;
      r = Hook(event);
    }
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "") << "the retry goes on";
    return r;
  }

  std::unique_ptr<Store> OpenStore() {
    StoreOptions options;
    options.create_if_missing = false;
    auto store = Store::Open(location_, options);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  std::vector<FileVersion> Versions(const FileVersionQuery& query = {}) {
    auto store = OpenStore();
    if (!store) return {};
    auto list = store->ListFileVersions(query);
    EXPECT_TRUE(list) << list.error().ToString();
    return list ? *list : std::vector<FileVersion>{};
  }

  std::string Content(const FileVersion& v) {
    auto store = OpenStore();
    if (!store) return "";
    auto bytes = store->ReadBlob(v.sha256);
    EXPECT_TRUE(bytes) << bytes.error().ToString();
    return bytes ? *bytes : "";
  }

  int64_t Blobs() {
    auto store = OpenStore();
    auto stats = store ? store->Stats() : Result<StorageStats>(Err(Status::NotFound("no store")));
    EXPECT_TRUE(stats);
    return stats ? stats->blobs : -1;
  }

  std::string ProjectFile(const std::string& name, const std::string& bytes) {
    const std::string path = project_ + "/" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return path;
  }

  std::unique_ptr<PgTestDatabase> pg_;
  std::string location_;
  std::string project_ = dir_.Sub("project");
};

TEST_P(CheckpointHookCli, AnEditKeepsTheFileAsItWasBeforeTheCallAndAsItLeftIt) {
  const std::string path = ProjectFile("app.py", "def f():\n    return 1\n");
  // Claude Code names files absolutely; a "./" in it is the same file.
  const json input = {{"file_path", project_ + "/./app.py"},
                      {"old_string", "return 1"},
                      {"new_string", "return 2"}};
  HookAllows(Event("PreToolUse", "Edit", "toolu_edit", input));
  ProjectFile("app.py", "def f():\n    return 2\n");
  HookAllows(Event("PostToolUse", "Edit", "toolu_edit", input));

  std::vector<FileVersion> v = Versions();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].phase, FileVersionPhase::kBefore);
  EXPECT_EQ(v[1].phase, FileVersionPhase::kAfter);
  for (const FileVersion& version : v) {
    EXPECT_EQ(version.file_path, path) << "absolute and normal";
    EXPECT_EQ(version.agent_session, kAgent);
    EXPECT_EQ(version.tool_use_id, "toolu_edit");
    EXPECT_EQ(version.tool, "Edit");
    EXPECT_EQ(version.source, "hook");
    EXPECT_EQ(version.project, project_);
    EXPECT_TRUE(version.exists);
  }
  EXPECT_EQ(Content(v[0]), "def f():\n    return 1\n");
  EXPECT_EQ(Content(v[1]), "def f():\n    return 2\n");
  EXPECT_EQ(v[1].sha256, blob::Sha256Hex("def f():\n    return 2\n"));
}

TEST_P(CheckpointHookCli, AFileTheAgentCreatesHasNoFileBeforeIt) {
  // A relative path is the file under the event's cwd.
  const json input = {{"file_path", "pkg/new.py"}, {"content", "X = 1\n"}};
  HookAllows(Event("PreToolUse", "Write", "toolu_new", input));
  std::filesystem::create_directories(project_ + "/pkg");
  ProjectFile("pkg/new.py", "X = 1\n");
  HookAllows(Event("PostToolUse", "Write", "toolu_new", input));

  std::vector<FileVersion> v = Versions();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].file_path, project_ + "/pkg/new.py");
  EXPECT_EQ(v[0].phase, FileVersionPhase::kBefore);
  EXPECT_FALSE(v[0].exists);
  EXPECT_EQ(v[0].sha256, "");
  EXPECT_TRUE(v[1].exists);
  EXPECT_EQ(Content(v[1]), "X = 1\n");
}

TEST_P(CheckpointHookCli, ANotebookEditNamesItsFileByNotebookPath) {
  const std::string path = ProjectFile("book.ipynb", "{\"cells\": []}\n");
  const json input = {{"notebook_path", path}, {"new_source", "print(1)"}, {"cell_number", 0}};
  HookAllows(Event("PreToolUse", "NotebookEdit", "toolu_nb", input));
  ProjectFile("book.ipynb", "{\"cells\": [\"print(1)\"]}\n");
  HookAllows(Event("PostToolUse", "NotebookEdit", "toolu_nb", input));
  std::vector<FileVersion> v = Versions();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].tool, "NotebookEdit");
  EXPECT_EQ(Content(v[0]), "{\"cells\": []}\n");
  EXPECT_EQ(Content(v[1]), "{\"cells\": [\"print(1)\"]}\n");
}

// The code memory denies a write the first time it has something to say:
// the "before" is kept all the same, and the retry keeps it once.
TEST_P(CheckpointHookCli, ACallTheHookDeniesStillKeepsItsBeforeAndItsRetryKeepsItOnce) {
  const char* past = "def settle_invoice_totals(ledger):\n    return sum(ledger)\n";
  const char* next = "def settle_invoice_totals(book):\n    return max(book)\n";
  ProjectFile("ledger.py", past);
  HookAllows(Event("PostToolUse", "Write", "toolu_past",
                   {{"file_path", project_ + "/ledger.py"}, {"content", past}}));
  const std::string billing = ProjectFile("billing.py", "# billing\n");
  const std::string pre =
      Event("PreToolUse", "Write", "toolu_billing", {{"file_path", billing}, {"content", next}});
  CliRun denied = Hook(pre);
  ASSERT_EQ(denied.exit_code, 0) << denied.err;
  ASSERT_TRUE(Contains(denied.out, "\"permissionDecision\":\"deny\"")) << denied.out << denied.err;
  HookAllows(pre);  // the retry, the same call

  FileVersionQuery of_billing;
  of_billing.file_path = billing;
  std::vector<FileVersion> v = Versions(of_billing);
  ASSERT_EQ(v.size(), 1u) << "kept once per session, call, path and phase";
  EXPECT_EQ(v[0].phase, FileVersionPhase::kBefore);
  EXPECT_EQ(Content(v[0]), "# billing\n");
}

TEST_P(CheckpointHookCli, AShellCommandThatChangedASeenFileKeepsAShellVersion) {
  const std::string a = ProjectFile("a.py", "a = 1\n");
  const std::string b = ProjectFile("b.py", "b = 1\n");
  const std::string c = ProjectFile("c.py", "c = 1\n");
  for (const std::string& path : {a, b}) {
    const json input = {{"file_path", path}, {"content", "# agent\n"}};
    HookAsAgent(Event("PreToolUse", "Write", "toolu_w" + path, input));
    ProjectFile(std::filesystem::path(path).filename().string(), "# agent\n");
    HookAllows(Event("PostToolUse", "Write", "toolu_w" + path, input));
  }
  // c.py is another session's: this session's shell check leaves it alone.
  HookAsAgent(Event("PreToolUse", "Write", "toolu_other", {{"file_path", c}, {"content", "x"}},
                    "agent-session-2"));
  const size_t recorded = Versions().size();
  ASSERT_EQ(recorded, 5u);

  // `sed -i ... a.py && rm b.py`, and c.py changed by the other session.
  ProjectFile("a.py", "# agent\n# sed\n");
  std::filesystem::remove(b);
  ProjectFile("c.py", "c = 2\n");
  const json bash = {{"command", "sed -i '$a # sed' a.py && rm b.py"}};
  HookAllows(Event("PreToolUse", "Bash", "toolu_bash", bash));
  EXPECT_EQ(Versions().size(), recorded) << "before a shell command nothing is read";
  HookAllows(Event("PostToolUse", "Bash", "toolu_bash", bash));

  FileVersionQuery after;
  after.after_id = Versions().at(recorded - 1).id;
  std::vector<FileVersion> shell = Versions(after);
  ASSERT_EQ(shell.size(), 2u);
  std::sort(shell.begin(), shell.end(),
            [](const FileVersion& x, const FileVersion& y) { return x.file_path < y.file_path; });
  EXPECT_EQ(shell[0].file_path, a);
  EXPECT_TRUE(shell[0].exists);
  EXPECT_EQ(Content(shell[0]), "# agent\n# sed\n");
  EXPECT_EQ(shell[1].file_path, b);
  EXPECT_FALSE(shell[1].exists) << "removed by the shell";
  for (const FileVersion& v : shell) {
    EXPECT_EQ(v.phase, FileVersionPhase::kAfter);
    EXPECT_EQ(v.source, "shell");
    EXPECT_EQ(v.tool, "Bash");
    EXPECT_EQ(v.tool_use_id, "toolu_bash");
    EXPECT_EQ(v.agent_session, kAgent);
  }

  // Nothing changed since: another command keeps nothing, and reading the
  // unchanged files adds no blob.
  const int64_t blobs = Blobs();
  HookAllows(Event("PostToolUse", "Bash", "toolu_ls", {{"command", "ls"}}));
  HookAllows(Event("PostToolUse", "Grep", "toolu_grep", {{"pattern", "agent"}}));
  EXPECT_EQ(Versions().size(), recorded + 2);
  EXPECT_EQ(Blobs(), blobs);
}

// The second call's "before" is the first call's "after": not kept again.
TEST_P(CheckpointHookCli, AnUnchangedFileEditedAgainAddsARowButNoBlob) {
  const std::string path = ProjectFile("same.py", "same = 1\n");
  const json input = {{"file_path", path}, {"old_string", "nothing"}, {"new_string", "else"}};
  HookAllows(Event("PreToolUse", "Edit", "toolu_1", input));
  HookAllows(Event("PostToolUse", "Edit", "toolu_1", input));  // the edit failed: same bytes
  const int64_t blobs = Blobs();
  HookAsAgent(Event("PreToolUse", "Edit", "toolu_2", input));
  HookAllows(Event("PostToolUse", "Edit", "toolu_2", input));
  std::vector<FileVersion> v = Versions();
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].phase, FileVersionPhase::kBefore);
  EXPECT_EQ(v[1].tool_use_id, "toolu_1");
  EXPECT_EQ(v[2].tool_use_id, "toolu_2");
  EXPECT_EQ(v[2].phase, FileVersionPhase::kAfter);
  for (const FileVersion& version : v) EXPECT_EQ(version.sha256, v[0].sha256);
  EXPECT_EQ(Blobs(), blobs);

  // Changed by hand before the next call: that "before" is kept.
  ProjectFile("same.py", "same = 2\n");
  HookAsAgent(Event("PreToolUse", "Edit", "toolu_3", input));
  v = Versions();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[3].tool_use_id, "toolu_3");
  EXPECT_EQ(v[3].phase, FileVersionPhase::kBefore);
  EXPECT_NE(v[3].sha256, v[0].sha256);
}

// Before: nothing. Without the safe reader a FIFO would block the open and
// the agent with it (the fixture's alarm would kill the process: exit -1).
TEST_P(CheckpointHookCli, AFifoOrAFileOfFiveMebibytesIsNotKeptAndTheCallGoesOn) {
  const std::string fifo = project_ + "/pipe.py";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = ProjectFile("big.py", std::string(5 * 1024 * 1024, 'x'));
  CliRun on_fifo = HookAllows(
      Event("PreToolUse", "Write", "toolu_fifo", {{"file_path", fifo}, {"content", "x"}}));
  EXPECT_TRUE(Contains(on_fifo.err, "FIFO")) << on_fifo.err;
  CliRun on_big = HookAllows(Event("PreToolUse", "Edit", "toolu_big",
                                   {{"file_path", big}, {"old_string", "x"}, {"new_string", "y"}}));
  EXPECT_TRUE(Contains(on_big.err, "bytes")) << on_big.err;
  HookAllows(Event("PostToolUse", "Edit", "toolu_big",
                   {{"file_path", big}, {"old_string", "x"}, {"new_string", "y"}}));
  EXPECT_EQ(Versions().size(), 0u);

  // A seen file that a command turned into a FIFO is skipped by the shell check.
  const std::string seen = ProjectFile("seen.py", "seen = 1\n");
  HookAllows(Event("PostToolUse", "Write", "toolu_seen", {{"file_path", seen}, {"content", "s"}}));
  ASSERT_EQ(Versions().size(), 1u);
  std::filesystem::remove(seen);
  ASSERT_EQ(mkfifo(seen.c_str(), 0600), 0);
  CliRun shell = HookAllows(Event("PostToolUse", "Bash", "toolu_mkfifo", {{"command", "mkfifo"}}));
  EXPECT_TRUE(Contains(shell.err, "skipped")) << shell.err;
  EXPECT_EQ(Versions().size(), 1u);
}

TEST_P(CheckpointHookCli, NoCheckpointsKeepsNoVersionButStillTheCodeMemory) {
  const std::string path = ProjectFile("off.py", "off = 1\n");
  const json input = {{"file_path", path}, {"content", "def turned_off():\n    return 0\n"}};
  HookAllows(Event("PreToolUse", "Write", "toolu_off", input), {"--no-checkpoints"});
  ProjectFile("off.py", "def turned_off():\n    return 0\n");
  CliRun post = HookAllows(Event("PostToolUse", "Write", "toolu_off", input), {"--no-checkpoints"});
  EXPECT_TRUE(Contains(post.err, "recorded 1 write(s)")) << post.err;
  HookAllows(Event("PostToolUse", "Bash", "toolu_sh", {{"command", "ls"}}), {"--no-checkpoints"});
  EXPECT_EQ(Versions().size(), 0u);
}

TEST_P(CheckpointHookCli, AnEventWithoutASessionKeepsNothingAndGoesOn) {
  const std::string path = ProjectFile("anon.py", "anon = 1\n");
  CliRun r = HookAllows(
      Event("PreToolUse", "Write", "toolu_anon", {{"file_path", path}, {"content", "x"}}, ""));
  EXPECT_TRUE(Contains(r.err, "no session_id")) << r.err;
  EXPECT_EQ(Versions().size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, CheckpointHookCli, ::testing::Values("embedded", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace checkpoint_hook_cli
}  // namespace sessiondb::testing
