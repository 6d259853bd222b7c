// A store this user may not write (another user's, or on a read-only disk)
// opens read-only by itself: ls, show, search and export work, and a write
// fails with "the store at DIR is read-only: ..." (exit 7) and changes
// nothing. Tests run as root, whom permissions do not stop, so the binary
// runs as `nobody` (uid 65534) on a store whose files are world-readable.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "cli/cli_fixture.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

constexpr uid_t kNobody = 65534;

class ReadOnlyStore : public Cli {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run the binary as another user";
    auto store = Store::Open(store_);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s1", .title = "Readable"}));
    Message m;
    m.parts = {Part::Text("kept safe"), Part::ImageFromBytes(MakePng(4, 3, "ro"), "image/png")};
    ASSERT_TRUE((*store)->Append("s1", m));
    store->reset();
    // Others may enter and read, not write: as after `chmod -R go-w`.
    chmod(dir_.path().c_str(), 0755);
    for (const auto& e : std::filesystem::recursive_directory_iterator(store_)) {
      chmod(e.path().c_str(), e.is_directory() ? 0755 : 0644);
    }
    chmod(store_.c_str(), 0755);
    out_dir_ = dir_.Sub("out");
    std::filesystem::create_directories(out_dir_);
    chmod(out_dir_.c_str(), 0777);
  }

  // Runs `sessiondb --store <store> ARGS` as nobody, with `input` on stdin.
  CliRun RunAsNobody(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const std::string out = out_dir_ + "/stdout", err = out_dir_ + "/stderr";
    const std::string in = out_dir_ + "/stdin";
    { std::ofstream(in, std::ios::binary) << input; }
    const pid_t pid = fork();
    if (pid == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(125);
      const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in_fd = open(in.c_str(), O_RDONLY);
      if (out_fd < 0 || err_fd < 0 || in_fd < 0) _exit(126);
      dup2(in_fd, STDIN_FILENO);
      dup2(out_fd, STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      setenv("HOME", out_dir_.c_str(), 1);
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

  // The store's files and their bytes, to prove a refused write changed nothing.
  std::map<std::string, std::string> Snapshot() {
    std::map<std::string, std::string> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(store_)) {
      if (e.is_regular_file()) files[e.path().string()] = Slurp(e.path().string());
    }
    return files;
  }

  std::string out_dir_;
};

TEST_F(ReadOnlyStore, AnotherUsersStoreCanBeListedShownSearchedAndExported) {
  const auto before = Snapshot();
  CliRun ls = RunAsNobody({"ls"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_TRUE(Contains(ls.out, "s1")) << ls.out;
  EXPECT_TRUE(Contains(ls.out, "Readable")) << ls.out;

  CliRun show = RunAsNobody({"--json", "show", "s1"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(Contains(show.out, "kept safe")) << show.out;

  // Keyword search reads the index the appends kept; vector and hybrid
  // search first embed what is new, which is a write (see docs/cli.md).
  CliRun search = RunAsNobody({"search", "kept", "--mode", "keyword"});
  EXPECT_EQ(search.exit_code, 0) << search.err;
  EXPECT_TRUE(Contains(search.out, "s1")) << search.out;

  CliRun exported = RunAsNobody({"export", "--format", "jsonl", "--out", out_dir_ + "/all.jsonl"});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(Contains(Slurp(out_dir_ + "/all.jsonl"), "kept safe"));

  EXPECT_EQ(RunAsNobody({"verify"}).exit_code, 0);
  EXPECT_EQ(Snapshot(), before) << "reading changed the store's files";
}

TEST_F(ReadOnlyStore, WritesFailWithAClearErrorAndChangeNothing) {
  const auto before = Snapshot();
  for (const std::vector<std::string>& write : {std::vector<std::string>{"new", "--title", "x"},
                                                {"append", "s1", "more"},
                                                {"rename", "s1", "Renamed"},
                                                {"rm", "s1", "--yes"},
                                                {"gc"}}) {
    CliRun r = RunAsNobody(write);
    EXPECT_EQ(r.exit_code, 7) << write[0] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "the store at " + store_ + " is read-only: its folder"))
        << write[0] << ": " << r.err;
  }
  EXPECT_EQ(Snapshot(), before);
  // Its owner still writes.
  EXPECT_EQ(Sdb({"append", "s1", "owner writes"}).exit_code, 0);
}

// Found from outside (issue 33): `reindex` on a read-only store, and the
// Claude Code hook's stderr, showed the SQL statement SQLite refused. They
// say what failed and what to do, and change nothing.
TEST_F(ReadOnlyStore, ReindexAndTheHookSayTheStoreIsReadOnlyWithoutSql) {
  const auto before = Snapshot();
  auto no_sql = [](const std::string& text) {
    for (const char* sql : {"INSERT", "SELECT", "UPDATE", "DELETE", "BEGIN", "sqlite code"}) {
      if (Contains(text, sql)) return false;
    }
    return true;
  };
  CliRun reindex = RunAsNobody({"reindex"});
  EXPECT_EQ(reindex.exit_code, 7) << reindex.err;
  EXPECT_TRUE(Contains(reindex.err, "read-only")) << reindex.err;
  EXPECT_TRUE(no_sql(reindex.err)) << reindex.err;

  const json event = {{"session_id", "cc-session-1"},
                      {"transcript_path", out_dir_ + "/t.jsonl"},
                      {"cwd", "/work/project"},
                      {"hook_event_name", "PostToolUse"},
                      {"tool_name", "Write"},
                      {"tool_input", {{"file_path", "/work/project/a.py"}, {"content", "x = 1\n"}}},
                      {"tool_response", {{"success", true}}}};
  CliRun hook = RunAsNobody({"hook", "claude-code"}, event.dump());
  EXPECT_EQ(hook.exit_code, 0) << hook.err;  // the tool call is never held up
  EXPECT_TRUE(Contains(hook.err, "read-only")) << hook.err;
  EXPECT_TRUE(no_sql(hook.err)) << hook.err;
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ReadOnlyStore, AReaderSeesWritesStillInTheWriteAheadLog) {
  // The owner keeps the store open: its last append sits in the -wal, and the
  // -shm (mode 0644) is one the reader may not write.
  auto writer = Store::Open(store_);
  ASSERT_TRUE(writer);
  Message m;
  m.parts = {Part::Text("only in the wal")};
  ASSERT_TRUE((*writer)->Append("s1", m));
  ASSERT_TRUE(std::filesystem::exists(store_ + "/sessiondb.db-wal"));
  CliRun show = RunAsNobody({"--json", "show", "s1"});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(Contains(show.out, "only in the wal")) << show.out << show.err;
}

}  // namespace
}  // namespace sessiondb::testing
