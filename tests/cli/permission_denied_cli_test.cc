// Files this user may not read, through the real binary: a store, a file
// given to import or a folder given to export that permissions shut are
// said to be "permission denied", with the path and what to do (exit 7),
// not an I/O error or SQLite's "unable to open database file"; and an
// import of a folder leaves out the transcripts it cannot read, one line
// each on stderr, imports the rest, and says so in its summary and its exit
// code (9).
//
// Permissions do not stop root, whom the suites run as: then the binary runs
// as `nobody` (uid 65534), as read_only_store_test.cc does; another user
// runs it as themselves.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr uid_t kNobodyUid = 65534;

// A Claude Code transcript of one user message, session `session_id`.
std::string ClaudeTranscript(const std::string& session_id, const std::string& text) {
  const json record = {{"type", "user"},
                       {"uuid", "11111111-0000-4000-8000-" + session_id.substr(24)},
                       {"parentUuid", nullptr},
                       {"sessionId", session_id},
                       {"timestamp", "2025-06-01T10:00:00.000Z"},
                       {"message", {{"role", "user"}, {"content", text}}}};
  return record.dump() + "\n";
}

class PermissionDenied : public Cli {
 protected:
  void SetUp() override {
    // The test's folder may be entered by the user the binary runs as; `open_`
    // is where it may write (its store, its HOME).
    chmod(dir_.path().c_str(), 0755);
    open_ = dir_.Sub("open");
    std::filesystem::create_directories(open_);
    chmod(open_.c_str(), 0777);
  }

  // Runs `sessiondb ARGS` as a user permissions apply to (nobody, when the
  // suite runs as root), HOME in `open_`.
  CliRun RunUnprivileged(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const std::string out = open_ + "/.stdout", err = open_ + "/.stderr";
    const pid_t pid = fork();
    if (pid == 0) {
      if (geteuid() == 0 &&
          (setgroups(0, nullptr) != 0 || setgid(kNobodyUid) != 0 || setuid(kNobodyUid) != 0)) {
        _exit(125);
      }
      const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in_fd = open("/dev/null", O_RDONLY);
      if (out_fd < 0 || err_fd < 0 || in_fd < 0) _exit(126);
      dup2(in_fd, STDIN_FILENO);
      dup2(out_fd, STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      setenv("HOME", open_.c_str(), 1);
      unsetenv("SESSIONDB_STORE");
      unsetenv("XDG_DATA_HOME");
      alarm(60);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    CliRun r;
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }

  // A store of root's (the suite's user's) with one session, shut to others.
  std::string ShutStore() {
    EXPECT_FALSE(NewSession({"--title", "Private"}).empty());
    chmod(store_.c_str(), 0700);
    return store_;
  }

  std::string open_;
};

TEST_F(PermissionDenied, AStoreShutToThisUserIsSaidToBeThatWithWhatToDo) {
  const std::string store = ShutStore();
  for (const std::vector<std::string>& verb :
       {std::vector<std::string>{"ls"}, {"new", "--title", "x"}, {"init"}, {"search", "x"}}) {
    std::vector<std::string> args = {"--store", store};
    args.insert(args.end(), verb.begin(), verb.end());
    const CliRun r = RunUnprivileged(args);
    EXPECT_EQ(r.exit_code, 7) << verb[0] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "sessiondb: error: permission denied: "))
        << verb[0] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "may not list the folder " + store + " (drwx------"))
        << verb[0] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "--store DIR")) << "what to do: " << r.err;
    EXPECT_FALSE(Contains(r.err, "no store at")) << r.err;
    EXPECT_FALSE(Contains(r.err, "sqlite")) << r.err;
  }
  // The folder is open, the database file is not: SQLite's words are not shown.
  chmod(store.c_str(), 0755);
  chmod((store + "/sessiondb.db").c_str(), 0600);
  const CliRun db = RunUnprivileged({"--store", store, "ls"});
  EXPECT_EQ(db.exit_code, 7) << db.err;
  EXPECT_TRUE(Contains(db.err, "permission denied: ")) << db.err;
  EXPECT_TRUE(Contains(db.err, "may not read " + store + "/sessiondb.db (-rw-------")) << db.err;
  EXPECT_FALSE(Contains(db.err, "unable to open database file")) << db.err;
  // --json: the same words, in the error document.
  chmod(store.c_str(), 0700);
  const CliRun json_run = RunUnprivileged({"--store", store, "--json", "ls"});
  EXPECT_EQ(json_run.Json()["error"]["code"], "failed_precondition");
  EXPECT_TRUE(
      Contains(json_run.Json()["error"]["message"].get<std::string>(), "permission denied"));
}

TEST_F(PermissionDenied, AStoreInAFolderThisUserMayNotWriteIsNotCreated) {
  const std::string shut = dir_.Sub("shut");
  std::filesystem::create_directories(shut);
  chmod(shut.c_str(), 0755);
  const CliRun r = RunUnprivileged({"--store", shut + "/store", "init"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_TRUE(Contains(r.err, "permission denied: ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "may not create " + shut + "/store: it may not write in " + shut))
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(shut + "/store"));
}

TEST_F(PermissionDenied, AFileGivenToImportOrAFolderToExportIsSaidToBeShut) {
  const std::string id = "aaaaaaaa-0000-4000-8000-000000000001";
  const std::string transcript = WriteFile(id + ".jsonl", ClaudeTranscript(id, "secret"));
  chmod(transcript.c_str(), 0600);
  const std::string store = open_ + "/store";
  // Detected or named: either way it is the permissions that are said.
  for (const std::vector<std::string>& format :
       {std::vector<std::string>{}, {"--format", "claude-code"}}) {
    std::vector<std::string> args = {"--store", store, "import", transcript};
    args.insert(args.end(), format.begin(), format.end());
    const CliRun r = RunUnprivileged(args);
    EXPECT_EQ(r.exit_code, 7) << r.err;
    EXPECT_TRUE(Contains(r.err, "permission denied: this user (uid ")) << r.err;
    EXPECT_TRUE(Contains(r.err, "may not read " + transcript + " (-rw-------")) << r.err;
    EXPECT_FALSE(Contains(r.err, "not in a format")) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(store)) << "a failed import leaves no store behind";

  // Export into a folder this user may not write.
  ASSERT_EQ(RunUnprivileged({"--store", store, "new", "--title", "mine"}).exit_code, 0);
  const std::string shut = dir_.Sub("shut");
  std::filesystem::create_directories(shut);
  chmod(shut.c_str(), 0755);
  const CliRun exported = RunUnprivileged(
      {"--store", store, "export", "--format", "jsonl", "--out", shut + "/all.jsonl"});
  EXPECT_EQ(exported.exit_code, 7) << exported.err;
  EXPECT_TRUE(Contains(exported.err, "permission denied: ")) << exported.err;
  EXPECT_TRUE(Contains(exported.err, "may not create " + shut + "/all.jsonl")) << exported.err;
  EXPECT_TRUE(Contains(exported.err, "choose an --out")) << exported.err;
}

TEST_F(PermissionDenied, AFolderImportSkipsWhatItCannotReadAndImportsTheRest) {
  // A projects tree: two readable transcripts, one shut, a shut sub-folder,
  // and transcripts that are not JSON at all, which must not hide the others
  // from the format's detection (the one it looks at first may be any).
  const std::string projects = dir_.Sub("projects");
  std::filesystem::create_directories(projects + "/app");
  std::filesystem::create_directories(projects + "/hidden");
  const std::string a = "aaaaaaaa-0000-4000-8000-000000000001";
  const std::string b = "bbbbbbbb-0000-4000-8000-000000000002";
  const std::string c = "cccccccc-0000-4000-8000-000000000003";
  WriteFile("projects/app/" + a + ".jsonl", ClaudeTranscript(a, "first"));
  WriteFile("projects/app/" + b + ".jsonl", ClaudeTranscript(b, "second"));
  const std::string shut = WriteFile("projects/app/" + c + ".jsonl", ClaudeTranscript(c, "shut"));
  WriteFile("projects/hidden/dddddddd-0000-4000-8000-000000000004.jsonl",
            ClaudeTranscript("dddddddd-0000-4000-8000-000000000004", "hidden"));
  for (int i = 0; i < 12; ++i) {
    WriteFile("projects/app/garbage-" + std::to_string(i) + ".jsonl",
              std::string("\x00\x01\xff", 3));
  }
  chmod(shut.c_str(), 0600);
  chmod((projects + "/hidden").c_str(), 0700);

  const std::string store = open_ + "/store";
  const CliRun r = RunUnprivileged({"--store", store, "import", projects});
  EXPECT_EQ(r.exit_code, 9) << "files were skipped: " << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "sessiondb: skipped " + shut + ": permission denied\n")) << r.err;
  EXPECT_TRUE(Contains(r.err, "sessiondb: skipped " + projects + "/hidden: permission denied\n"))
      << r.err;
  EXPECT_TRUE(Contains(r.out, "(claude-code): 2 new sessions")) << r.out;
  EXPECT_TRUE(Contains(r.out, "; 2 files skipped")) << r.out;

  const CliRun listed = RunUnprivileged({"--store", store, "--json", "ls"});
  const json sessions = listed.Json()["sessions"];
  std::set<std::string> ids;
  for (const json& s : sessions) ids.insert(s["id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{a, b})) << listed.out << listed.err;

  // --json: the skipped files in the report, the same exit code.
  const CliRun again = RunUnprivileged({"--store", store, "--json", "import", projects});
  EXPECT_EQ(again.exit_code, 9) << again.err;
  const json report = again.Json();
  ASSERT_EQ(report["files_skipped"].size(), 2u) << again.out;
  std::map<std::string, std::string> skipped;
  for (const json& s : report["files_skipped"]) skipped[s["where"]] = s["reason"];
  EXPECT_EQ(skipped,
            (std::map<std::string, std::string>{{shut, "permission denied"},
                                                {projects + "/hidden", "permission denied"}}));
  EXPECT_EQ(report["sessions_unchanged"], 2);

  // A readable folder with nothing shut imports with exit 0, and says nothing of skipping.
  chmod(shut.c_str(), 0644);
  chmod((projects + "/hidden").c_str(), 0755);
  const CliRun open_run = RunUnprivileged({"--store", store, "import", projects});
  EXPECT_EQ(open_run.exit_code, 0) << open_run.err;
  EXPECT_FALSE(Contains(open_run.err, "skipped")) << open_run.err;
  EXPECT_TRUE(Contains(open_run.out, "2 new sessions")) << open_run.out;
}

TEST_F(PermissionDenied, ACodexFolderImportSkipsAShutRolloutToo) {
  const std::string sessions = dir_.Sub("sessions");
  std::filesystem::create_directories(sessions + "/2025/06/01");
  auto rollout = [&](const std::string& id, const std::string& text) {
    const json meta = {{"timestamp", "2025-06-01T10:00:00.000Z"},
                       {"type", "session_meta"},
                       {"payload", {{"id", id}, {"cwd", "/src/app"}}}};
    const json message = {{"timestamp", "2025-06-01T10:00:01.000Z"},
                          {"type", "response_item"},
                          {"payload",
                           {{"type", "message"},
                            {"role", "user"},
                            {"content", json::array({{{"type", "input_text"}, {"text", text}}})}}}};
    return WriteFile("sessions/2025/06/01/rollout-2025-06-01T10-00-00-" + id + ".jsonl",
                     meta.dump() + "\n" + message.dump() + "\n");
  };
  rollout("0197a1b2-0000-7000-8000-000000000001", "readable");
  const std::string shut = rollout("0197a1b2-0000-7000-8000-000000000002", "shut");
  chmod(shut.c_str(), 0600);
  const CliRun r = RunUnprivileged({"--store", open_ + "/store", "import", sessions});
  EXPECT_EQ(r.exit_code, 9) << r.out << r.err;
  EXPECT_TRUE(Contains(r.err, "sessiondb: skipped " + shut + ": permission denied\n")) << r.err;
  EXPECT_TRUE(Contains(r.out, "(codex): 1 new session,")) << r.out;
  EXPECT_TRUE(Contains(r.out, "; 1 file skipped")) << r.out;
}

}  // namespace
}  // namespace sessiondb::testing
