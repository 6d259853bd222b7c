// Demo history never enters a real store: `serve --demo` seeds only a store
// with no sessions at all, every demo session is marked ("demo": true), and
// `sessiondb demo --remove` deletes exactly those. On an empty store `serve`
// names the agents' history folders it sees and the command that imports
// each, and imports nothing by itself. All through the real binary.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

class Demo : public Cli {
 protected:
  // Runs `sessiondb --store STORE serve --port 0 ARGS` until it listens, then
  // stops it with SIGTERM (as Ctrl-C would); returns its exit code and what it
  // wrote on stderr.
  CliRun Serve(const std::vector<std::string>& args) { return ServeStore(store_, args); }

  // The same on any store (a directory or a postgresql:// URI).
  CliRun ServeStore(const std::string& store, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store, "serve", "--port", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const std::string err = dir_.Sub("serve.err");
    int out[2];
    if (pipe(out) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("HOME", home_.c_str(), 1);
      unsetenv("SESSIONDB_STORE");
      unsetenv("XDG_DATA_HOME");
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out[1], STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      close(out[0]);
      alarm(60);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    close(out[1]);
    std::string seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline && !Contains(seen, "http://")) {
      pollfd p{out[0], POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char buf[512];
      const ssize_t n = read(out[0], buf, sizeof(buf));
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
    close(out[0]);
    EXPECT_TRUE(Contains(seen, "sessiondb: serving")) << seen << Slurp(err);
    kill(pid, SIGTERM);
    int status = 0;
    CliRun r;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.out = seen;
    r.err = Slurp(err);
    return r;
  }

  // Every session of the store (default: the test's), archived ones included.
  json AllSessions(const std::string& store = "") {
    CliRun r = store.empty() ? Sdb({"--json", "ls", "--all", "--limit", "1000"})
                             : Run({"--store", store, "--json", "ls", "--all", "--limit", "1000"},
                                   {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.Json()["sessions"];
  }

  static bool Marked(const json& session) {
    return session["metadata"].value("demo", json()) == json(true);
  }
};

TEST_F(Demo, ServeDemoAddsNothingToAStoreWithARealSession) {
  const std::string real = NewSession({"--title", "Real work"});
  CliRun served = Serve({"--demo"});
  EXPECT_EQ(served.exit_code, 0) << served.err;
  EXPECT_FALSE(Contains(served.err, "seeded")) << served.err;
  json sessions = AllSessions();
  ASSERT_EQ(sessions.size(), 1u) << sessions.dump();
  EXPECT_EQ(sessions[0]["id"], real);
}

TEST_F(Demo, ServeDemoAddsNothingWhenTheOnlySessionIsArchived) {
  const std::string real = NewSession({"--title", "Old"});
  ASSERT_EQ(Sdb({"archive", real}).exit_code, 0);
  ASSERT_EQ(Serve({"--demo"}).exit_code, 0);
  EXPECT_EQ(AllSessions().size(), 1u);
}

TEST_F(Demo, ServeDemoSeedsAnEmptyStoreWithMarkedSessionsOnce) {
  CliRun served = Serve({"--demo"});
  EXPECT_EQ(served.exit_code, 0) << served.err;
  EXPECT_TRUE(Contains(served.err, "demo --remove")) << served.err;
  json sessions = AllSessions();
  ASSERT_GE(sessions.size(), 5u) << sessions.dump();  // a fork and an archived one among them
  for (const json& s : sessions) EXPECT_TRUE(Marked(s)) << s.dump();

  // `demo` lists the same sessions.
  CliRun listed = Sdb({"--json", "demo"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.Json().size(), sessions.size());

  // Serving again with --demo adds nothing: the store is no longer empty.
  ASSERT_EQ(Serve({"--demo"}).exit_code, 0);
  EXPECT_EQ(AllSessions().size(), sessions.size());
}

TEST_F(Demo, DemoRemoveDeletesExactlyTheMarkedSessions) {
  ASSERT_EQ(Serve({"--demo"}).exit_code, 0);
  const size_t seeded = AllSessions().size();
  const std::string real = NewSession({"--title", "Real work"});
  ASSERT_EQ(Sdb({"append", real, "hello"}).exit_code, 0);
  // Look-alikes that are not the mark: a string "true", and false.
  const std::string string_true = NewSession({"--meta", "demo=true"});
  const std::string fork = Sdb({"fork", real}).out;
  ASSERT_FALSE(fork.empty());

  CliRun removed = Sdb({"demo", "--remove"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(removed.out, "removed " + std::to_string(seeded) + " demo sessions\n");

  std::set<std::string> left;
  for (const json& s : AllSessions()) left.insert(s["id"].get<std::string>());
  EXPECT_EQ(left, (std::set<std::string>{real, string_true, fork.substr(0, fork.size() - 1)}));
  EXPECT_EQ(MessageCount(real), 1u);

  CliRun again = Sdb({"--json", "demo", "--remove"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.Json()["removed"], 0);
  EXPECT_EQ(AllSessions().size(), 3u);
}

// The mark is read the same on PostgreSQL, where metadata is jsonb.
TEST_F(Demo, DemoRemoveWorksOnAPostgresStoreToo) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  ASSERT_EQ(ServeStore(pg.uri(), {"--demo"}).exit_code, 0);
  const size_t seeded = AllSessions(pg.uri()).size();
  ASSERT_GE(seeded, 5u);
  CliRun real = Run({"--store", pg.uri(), "new", "--id", "real-one", "--meta", "demo=true"},
                    {.with_store = false});
  ASSERT_EQ(real.exit_code, 0) << real.err;
  CliRun removed = Run({"--store", pg.uri(), "demo", "--remove"}, {.with_store = false});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(removed.out, "removed " + std::to_string(seeded) + " demo sessions\n");
  json left = AllSessions(pg.uri());
  ASSERT_EQ(left.size(), 1u) << left.dump();
  EXPECT_EQ(left[0]["id"], "real-one");
}

TEST_F(Demo, ServeOnAnEmptyStoreNamesTheImportCommandsAndImportsNothing) {
  fs::create_directories(home_ + "/.claude/projects/-src-app");
  const json record = {{"type", "user"},
                       {"uuid", "aaaaaaaa-0000-4000-8000-000000000001"},
                       {"parentUuid", nullptr},
                       {"sessionId", "0b9d1c2e-cccc-4222-8333-944455556666"},
                       {"timestamp", "2025-06-01T10:00:00.000Z"},
                       {"message", {{"role", "user"}, {"content", "hello"}}}};
  WriteFile("home/.claude/projects/-src-app/0b9d1c2e-cccc-4222-8333-944455556666.jsonl",
            record.dump() + "\n");
  fs::create_directories(home_ + "/.codex/sessions");
  CliRun served = Serve({});
  EXPECT_EQ(served.exit_code, 0) << served.err;
  const std::string store = fs::path(store_).lexically_normal().string();
  EXPECT_TRUE(Contains(served.err, "--store " + store + " import " + home_ + "/.claude/projects\n"))
      << served.err;
  EXPECT_TRUE(Contains(served.err, "--store " + store + " import " + home_ + "/.codex/sessions\n"))
      << served.err;
  EXPECT_EQ(AllSessions().size(), 0u);  // nothing imported on its own

  // The printed command is the one to run: it imports into this store.
  CliRun imported =
      Run({"--store", store, "import", home_ + "/.claude/projects"}, {.with_store = false});
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(AllSessions().size(), 1u);

  // Once the store holds sessions, serve says nothing about them.
  CliRun quiet = Serve({});
  EXPECT_FALSE(Contains(quiet.err, "import")) << quiet.err;
}

TEST_F(Demo, ServeWithoutAgentFoldersSuggestsNothing) {
  fs::create_directories(home_);
  CliRun served = Serve({});
  EXPECT_EQ(served.exit_code, 0) << served.err;
  EXPECT_FALSE(Contains(served.err, "import")) << served.err;
}

}  // namespace
}  // namespace sessiondb::testing
