// Many `sessiondb` processes at once against a PostgreSQL server with few
// connection slots (docs/postgres.md, "Many agents: connections and
// PgBouncer"): every one of them gets its turn and exits 0, where a connect
// refused with "too many clients" used to reach the user. Scaled down from
// the 1,000 processes against max_connections = 100 to 80 against
// 8 (ten to a slot, as there), so the test stays quick even when every
// process runs under the sanitizers.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pg_test_database.h"

extern char** environ;

// A namespace of its own: the suite's files share unity batches.
namespace sessiondb::testing::pg_many_clients {
namespace {

int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Starts `args` with stdout into `out` ("" discards it) and stderr into `err`.
pid_t Start(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.empty() ? "/dev/null" : out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

TEST(PgManyClientsCli, EightyProcessesShareEightConnectionSlots) {
  const std::string dir = "/tmp/sdbpgm-" + std::to_string(::getpid());
  const std::string work = dir + "-out";
  std::filesystem::create_directories(work);
  ASSERT_EQ(Shell("bash " SESSIONDB_PG_CLUSTER_SCRIPT " start " + dir +
                  " '-c max_connections=8' >" + work + "/uri"),
            0);
  const std::string uri = Slurp(work + "/uri");
  ASSERT_FALSE(uri.empty());
  const std::string cli = SESSIONDB_CLI_PATH;
  ASSERT_EQ(Wait(Start({cli, "--store", uri, "init"}, "", work + "/init.err")), 0)
      << Slurp(work + "/init.err");
  ASSERT_EQ(Wait(Start({cli, "--store", uri, "new", "--title", "crowd"}, work + "/sid",
                       work + "/new.err")),
            0);
  const std::string sid = Slurp(work + "/sid");
  ASSERT_FALSE(sid.empty());

  constexpr int kProcesses = 80;
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcesses; ++i) {
    std::vector<std::string> args = {cli, "--store", uri};
    if (i % 2 == 0) {
      args.insert(args.end(), {"append", sid, "message from process " + std::to_string(i)});
    } else {
      args.push_back("ls");
    }
    pids.push_back(Start(args, "", work + "/" + std::to_string(i) + ".err"));
  }
  int failed = 0;
  for (int i = 0; i < kProcesses; ++i) {
    const int code = Wait(pids[i]);
    if (code != 0) {
      ++failed;
      ADD_FAILURE() << "process " << i << " exited " << code << ": "
                    << Slurp(work + "/" + std::to_string(i) + ".err");
    }
  }
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(PgQuery(uri, "SELECT count(*) FROM events"), std::to_string(kProcesses / 2));
  Shell("bash " SESSIONDB_PG_CLUSTER_SCRIPT " stop " + dir);
  std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace sessiondb::testing::pg_many_clients
