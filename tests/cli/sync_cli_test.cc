// `sessiondb sync OTHER` and `serve --sync-to` through the real binary: both
// ways in one run, a second run says nothing changed, and a store that does
// not exist, a server that refuses and the same store twice are clear errors
// that change nothing.
#include <signal.h>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class SyncCli : public Cli {
 protected:
  std::string other_ = dir_.Sub("other");

  CliRun Other(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"--store", other_};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv, {.with_store = false});
  }
};

TEST_F(SyncCli, SyncsBothWaysAndASecondRunChangesNothing) {
  const std::string here = NewSession();
  ASSERT_EQ(Sdb({"append", here, "written here"}).exit_code, 0);
  ASSERT_EQ(Other({"init"}).exit_code, 0);
  CliRun made = Other({"new", "--title", "There"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string there = made.out.substr(0, made.out.find('\n'));
  ASSERT_EQ(Other({"append", there, "written there"}).exit_code, 0);

  CliRun first = Sdb({"--json", "sync", other_});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  json j = first.Json();
  EXPECT_EQ(j["sessions_examined"], 2);
  EXPECT_EQ(j["here"]["sessions_created"], 1);
  EXPECT_EQ(j["there"]["sessions_created"], 1);
  EXPECT_EQ(j["there"]["messages_copied"], 1);
  EXPECT_EQ(j["unchanged"], false);
  EXPECT_TRUE(Contains(Other({"show", here}).out, "written here"));
  EXPECT_TRUE(Contains(Sdb({"show", there}).out, "written there"));

  CliRun second = Sdb({"sync", other_});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(Contains(second.out, "synced 2 sessions: here nothing; there nothing")) << second.out;
}

TEST_F(SyncCli, AMissingStoreARefusingServerAndTheSameStoreAreErrorsThatChangeNothing) {
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "stay"}).exit_code, 0);
  const std::string missing = dir_.Sub("missing");
  CliRun r = Sdb({"sync", missing});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Contains(r.err, "no store at")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(missing));

  // A database the server refuses (it has no such database).
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  const std::string refused = PgUriWithDatabase(pg.cluster_uri(), "sdb_no_such_database");
  r = Sdb({"sync", refused});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "sdb_no_such_database")) << r.err;

  r = Sdb({"--json", "sync", store_});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "same store")) << r.err;
  json shown = Sdb({"--json", "ls"}).Json();
  EXPECT_EQ(shown["sessions"].size(), 1u);

  // --create makes the other store.
  r = Sdb({"sync", missing, "--create"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(missing));
}

TEST_F(SyncCli, ServeSyncToKeepsTheOtherStoreUpToDate) {
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "served and synced"}).exit_code, 0);
  ASSERT_EQ(Other({"init"}).exit_code, 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    setenv("HOME", home_.c_str(), 1);
    execl(SESSIONDB_CLI_PATH, SESSIONDB_CLI_PATH, "--store", store_.c_str(), "serve", "--port", "0",
          "--retain-every", "0", "--no-embed", "--sync-to", other_.c_str(), "--sync-every", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  bool arrived = false;
  for (int i = 0; i < 200 && !arrived; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    arrived = Contains(Other({"show", sid}).out, "served and synced");
  }
  EXPECT_TRUE(arrived);
  // Written after the first run: the next tick brings it.
  ASSERT_EQ(Sdb({"append", sid, "a tick later"}).exit_code, 0);
  arrived = false;
  for (int i = 0; i < 200 && !arrived; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    arrived = Contains(Other({"show", sid}).out, "a tick later");
  }
  EXPECT_TRUE(arrived);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << status;
}

}  // namespace
}  // namespace sessiondb::testing
