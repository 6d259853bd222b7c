// `sessiondb hook serve` (src/cli/hook_server.h): the real server process,
// real hook processes asking it over its socket, and raw sockets playing
// hostile clients and a server that fails. The answers must be the ones a
// hook gives alone; a server that is absent, stalled, killed, of another
// store or in a folder others can enter must leave the hook answering alone.
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "hook_server_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

const char* kLedgerCode = "def settle_invoice_totals(ledger):\n    return sum(ledger)\n";
const char* kBillingCode = "def settle_invoice_totals(book):\n    return max(book)\n";

TEST_F(HookServerCli, TheServerGivesTheAnswersTheHookGivesAlone) {
  // The same calls on two stores: one answered by a server, one alone.
  const std::string alone = dir_.Sub("alone-store");
  const std::string log = dir_.Sub("server.log");
  ASSERT_EQ(
      Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode), {}, alone).exit_code,
      0);
  ASSERT_EQ(Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode)).exit_code, 0);
  const std::string socket_path = StartServer(store_, log);
  ASSERT_FALSE(socket_path.empty());
  EXPECT_EQ(fs::status(Folder()).permissions() & fs::perms::all, fs::perms::owner_all);

  const std::vector<std::pair<std::string, std::vector<std::string>>> calls = {
      {ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode), {}},
      {ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode), {}},
      {ClaudeWriteEvent("PreToolUse", "/work/billing.py", kLedgerCode), {"--seen", "file"}},
      {ClaudeWriteEvent("PostToolUse", "/work/billing.py", kBillingCode), {"--no-checkpoints"}},
      {ClaudeWriteEvent("PreToolUse", "/work/other.py", kBillingCode), {"--seen", "sometimes"}},
  };
  for (const auto& [event, extra] : calls) {
    CliRun served = Hook(event, extra);
    CliRun by_itself = Hook(event, extra, alone);
    EXPECT_EQ(served.exit_code, 0);
    EXPECT_EQ(served.out, by_itself.out) << event;
    EXPECT_EQ(served.err, by_itself.err) << event;
  }
  CliRun first = Hook(ClaudeWriteEvent("PreToolUse", "/work/third.py", kBillingCode));
  EXPECT_TRUE(Contains(first.out, "\"permissionDecision\":\"deny\"")) << first.out << first.err;
  EXPECT_TRUE(Contains(first.out, "/work/ledger.py")) << first.out;
  // Every call on the served store went through the server.
  const int served_calls = static_cast<int>(calls.size()) + 1;
  EXPECT_EQ(Answered(log, served_calls), served_calls) << Slurp(log);

  // What it wrote is in the store: a hook alone sees the write as seen.
  EXPECT_EQ(StopServer(), 0);
  EXPECT_FALSE(fs::exists(socket_path)) << "SIGTERM removes the socket";
  EXPECT_TRUE(Contains(Slurp(log), "ended (asked to stop)")) << Slurp(log);
  CliRun after = Hook(ClaudeWriteEvent("PreToolUse", "/work/third.py", kBillingCode));
  EXPECT_EQ(after.out, "");
  EXPECT_TRUE(Contains(after.err, "seen before")) << after.err;
}

TEST_F(HookServerCli, OnPostgresTheServerAnswersForItsNamespaceAlone) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  const std::vector<std::string> served_ns = {"--namespace", "served"};
  const std::vector<std::string> alone_ns = {"--namespace", "alone"};
  for (const auto* ns : {&served_ns, &alone_ns}) {
    ASSERT_EQ(Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode), *ns, pg.uri())
                  .exit_code,
              0);
  }
  const std::string log = dir_.Sub("pg-server.log");
  ASSERT_FALSE(StartServer(pg.uri(), log, served_ns).empty());
  for (const std::string& event :
       {ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode),
        ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode),
        ClaudeWriteEvent("PostToolUse", "/work/billing.py", kBillingCode)}) {
    CliRun served = Hook(event, served_ns, pg.uri());
    CliRun by_itself = Hook(event, alone_ns, pg.uri());
    EXPECT_EQ(served.exit_code, 0);
    EXPECT_EQ(served.out, by_itself.out) << served.err;
    EXPECT_EQ(served.err, by_itself.err);
  }
  // Three calls of its namespace went through it, none of the other's.
  EXPECT_EQ(Answered(log, 3), 3) << Slurp(log);
  EXPECT_EQ(StopServer(), 0);
}

TEST_F(HookServerCli, OneServerPerStoreAndItsPidIsInTheLockFile) {
  const std::string socket_path = StartServer(store_, dir_.Sub("one.log"));
  ASSERT_FALSE(socket_path.empty());
  const std::string lock = socket_path.substr(0, socket_path.size() - 5) + ".lock";
  EXPECT_EQ(Slurp(lock), std::to_string(last_server_) + "\n");
  CliRun second = Run({"hook", "serve"}, {.env = Env()});
  EXPECT_EQ(second.exit_code, 5) << second.err;
  EXPECT_TRUE(Contains(second.err, "already running")) << second.err;
  // The first is untouched by the second's attempt.
  EXPECT_TRUE(fs::exists(socket_path));
  EXPECT_EQ(Hook(ClaudeWriteEvent("PreToolUse", "/work/a.py", kBillingCode)).exit_code, 0);
  EXPECT_EQ(Answered(dir_.Sub("one.log"), 1), 1);
}

TEST_F(HookServerCli, AServerEndsAfterItsIdleTimeAndTakesItsSocket) {
  const std::string log = dir_.Sub("idle.log");
  const std::string socket_path = StartServer(store_, log, {"--idle-exit", "3"});
  ASSERT_FALSE(socket_path.empty());
  // A call restarts the wait: two seconds in, one call, and a second and a
  // half later it still listens (four and a half after its start).
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Hook(ClaudeWriteEvent("PreToolUse", "/work/a.py", kBillingCode)).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE(fs::exists(socket_path)) << "ended 3 s after its start, not after its last call";
  int status = 0;
  ASSERT_EQ(waitpid(last_server_, &status, 0), last_server_);
  servers_.clear();
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(socket_path));
  EXPECT_TRUE(Contains(Slurp(log), "ended (idle)")) << Slurp(log);
  EXPECT_EQ(Answered(log, 1), 1);
}

TEST_F(HookServerCli, ResidentStartsAServerThatLeavesTheAgentsPipesAtOnce) {
  // The hook's stdout and stderr are pipes, as Claude Code gives them: the
  // call must end (EOF on both) while the server it started lives on.
  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  const std::string in =
      WriteFile("event.json", ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode));
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("XDG_RUNTIME_DIR", run_dir_.c_str(), 1);
    const int in_fd = open(in.c_str(), O_RDONLY);
    dup2(in_fd, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(err[0]);
    execl(SESSIONDB_CLI_PATH, SESSIONDB_CLI_PATH, "--store", store_.c_str(), "hook", "claude-code",
          "--resident", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  const auto started = std::chrono::steady_clock::now();
  const std::string said = ReadToClose(out[0]) + ReadToClose(err[0]);
  const auto waited = std::chrono::steady_clock::now() - started;
  close(out[0]);
  close(err[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_LT(waited, std::chrono::seconds(8)) << "the pipes stayed open: " << said;
  EXPECT_TRUE(Contains(said, "recorded 1 write(s)")) << said;
  EXPECT_FALSE(Contains(said, "no resident server")) << said;

  // The server comes up, holds its lock and listens.
  std::string lock;
  for (int i = 0; i < 500 && lock.empty(); ++i) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(Folder(), ec)) {
      if (e.path().extension() == ".lock") lock = e.path().string();
    }
    if (lock.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(lock.empty()) << "no server started";
  const std::string socket_path = lock.substr(0, lock.size() - 5) + ".sock";
  int fd = -1;
  for (int i = 0; i < 500 && fd < 0; ++i) {
    fd = ConnectUnix(socket_path);
    if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(fd, 0) << "no server at " << socket_path;
  close(fd);
  const int lock_fd = open(lock.c_str(), O_RDONLY);
  EXPECT_NE(flock(lock_fd, LOCK_EX | LOCK_NB), 0) << "the server holds its lock";
  close(lock_fd);
  const pid_t server = std::stoi(Slurp(lock));
  servers_.push_back(server);  // not our child: TearDown's kill is what ends it
  EXPECT_EQ(kill(server, 0), 0);

  // The next call is answered by it: the write recorded above is recalled.
  CliRun next =
      Hook(ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode), {"--resident"});
  EXPECT_TRUE(Contains(next.out, "deny")) << next.err;
  EXPECT_TRUE(Contains(next.out, "/work/ledger.py")) << next.out;
  kill(server, SIGTERM);
  for (int i = 0; i < 500 && kill(server, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(fs::exists(socket_path)) << "SIGTERM removes the socket";
}

TEST_F(HookServerCli, HostileCallsAreRefusedAndTheServerGoesOnServing) {
  ASSERT_EQ(Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode)).exit_code, 0);
  const std::string log = dir_.Sub("hostile.log");
  const std::string socket_path = StartServer(store_, log, {"--request-timeout-ms", "300"});
  ASSERT_FALSE(socket_path.empty());
  auto send_raw = [&](const std::string& bytes) { return SendRaw(socket_path, bytes); };
  // A hook that sends nothing gets the greeting alone, then the door.
  const std::string greeting = send_raw("");
  EXPECT_TRUE(Contains(greeting, "sessiondb-hook-server 1 ")) << greeting;
  EXPECT_TRUE(Contains(greeting, store_)) << greeting;
  // An event longer than the limit is said, not read.
  std::string reply = send_raw("content 1 1073741824\n");
  EXPECT_TRUE(Contains(reply, "the event is 1073741824 bytes; the limit is 4194304")) << reply;
  EXPECT_FALSE(Contains(reply, "deny"));
  // A line that is not a request, one past 128 bytes with no newline, a
  // length of twenty digits, an event shorter than its length: no answer.
  for (const std::string& bad :
       {std::string("hello\n"), std::string(4096, 'x'),
        std::string("content 1 99999999999999999999\n"), std::string("content 1 50\n{\"short\":1}"),
        std::string("content 2 5\nabcde")}) {
    EXPECT_EQ(send_raw(bad), greeting) << bad.substr(0, 40);
  }
  const std::string text = Slurp(log);
  EXPECT_TRUE(Contains(text, "a request line that is not MODE CHECKPOINTS LENGTH")) << text;
  EXPECT_TRUE(Contains(text, "no request line")) << text;
  EXPECT_TRUE(Contains(text, "whose length is not a number")) << text;
  EXPECT_TRUE(Contains(text, "shorter than its length")) << text;
  // It still serves, and the store still holds the write from before.
  CliRun after = Hook(ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode));
  EXPECT_TRUE(Contains(after.out, "/work/ledger.py")) << after.out << after.err;
  EXPECT_EQ(Answered(log, 2), 2) << Slurp(log);  // the huge one and this one
}

TEST_F(HookServerCli, AServerKilledOrStalledLeavesTheHookAnsweringAlone) {
  ASSERT_EQ(Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode)).exit_code, 0);
  std::string socket_path = StartServer(store_, dir_.Sub("killed.log"));
  ASSERT_FALSE(socket_path.empty());
  // Stalled: the hook waits for the greeting a moment, then answers alone.
  kill(last_server_, SIGSTOP);
  CliRun stalled = Hook(ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode));
  EXPECT_EQ(stalled.exit_code, 0);
  EXPECT_TRUE(Contains(stalled.out, "/work/ledger.py")) << stalled.out << stalled.err;
  EXPECT_TRUE(Contains(stalled.err, "did not greet; answered alone")) << stalled.err;
  // Killed: its socket stays behind, nobody listens; the hook answers alone
  // and says nothing of it.
  kill(last_server_, SIGKILL);
  waitpid(last_server_, nullptr, 0);
  servers_.clear();
  ASSERT_TRUE(fs::exists(socket_path));
  CliRun killed = Hook(ClaudeWriteEvent("PreToolUse", "/work/other.py", kBillingCode));
  EXPECT_TRUE(Contains(killed.out, "deny")) << killed.err;
  EXPECT_FALSE(Contains(killed.err, "server")) << killed.err;
  // A new server takes the dead one's place.
  socket_path = StartServer(store_, dir_.Sub("again.log"));
  ASSERT_FALSE(socket_path.empty());
  EXPECT_EQ(Hook(ClaudeWriteEvent("PreToolUse", "/work/third.py", kBillingCode)).exit_code, 0);
  EXPECT_EQ(Answered(dir_.Sub("again.log"), 1), 1);
}

TEST_F(HookServerCli, AStoreSwappedUnderTheServerEndsItAndTheCallGoesToTheNewOne) {
  ASSERT_EQ(Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode)).exit_code, 0);
  const std::string log = dir_.Sub("swapped.log");
  ASSERT_FALSE(StartServer(store_, log).empty());
  // As a conversion swaps the folder: the old one aside, a new one in place.
  fs::rename(store_, store_ + ".before");
  ASSERT_EQ(Run({"init"}, {.env = Env()}).exit_code, 0);
  CliRun r = Hook(ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "did not greet; answered alone")) << r.err;
  EXPECT_FALSE(Contains(r.out, "/work/ledger.py")) << "answered from the new, empty store";
  int status = 0;
  ASSERT_EQ(waitpid(last_server_, &status, 0), last_server_);
  servers_.clear();
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(Contains(Slurp(log), "database file was replaced or removed")) << Slurp(log);
}

TEST_F(HookServerCli, AServerLostAfterTheEventLetsTheCallGoOnWithoutASecondAnswer) {
  // A fake server at the real one's path greets with the store's key, takes
  // the event and closes: the write may have been kept, so the hook does not
  // answer it again.
  ASSERT_EQ(Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode)).exit_code, 0);
  const std::string socket_path = StartServer(store_, dir_.Sub("real.log"));
  ASSERT_FALSE(socket_path.empty());
  const int probe = ConnectUnix(socket_path);
  const std::string key = ReadGreetingKey(probe);
  close(probe);
  EXPECT_TRUE(Contains(key, store_)) << key;
  EXPECT_EQ(StopServer(), 0);

  CliRun lost;
  const std::string taken = FakeServerOnce(socket_path, key, "", [&] {
    lost = Hook(ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode));
  });
  EXPECT_EQ(lost.exit_code, 0);
  EXPECT_EQ(lost.out, "");
  EXPECT_TRUE(Contains(lost.err, "took the event and gave no answer; allowed")) << lost.err;
  EXPECT_TRUE(Contains(taken, "/work/billing.py")) << taken;
  // Nothing was answered here: a hook alone still denies the first time.
  fs::remove(socket_path);
  CliRun alone = Hook(ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode));
  EXPECT_TRUE(Contains(alone.out, "deny")) << alone.err;
}

TEST_F(HookServerCli, AServerOfAnotherStoreIsNotAsked) {
  const std::string other = dir_.Sub("other-store");
  ASSERT_EQ(
      Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode), {}, other).exit_code,
      0);
  // Where this store's server would listen...
  const std::string mine = StartServer(store_, dir_.Sub("mine.log"));
  ASSERT_FALSE(mine.empty());
  EXPECT_EQ(StopServer(), 0);
  // ...the other store's server is moved (a socket can be renamed).
  const std::string theirs = StartServer(other, dir_.Sub("theirs.log"));
  ASSERT_FALSE(theirs.empty());
  ASSERT_NE(mine, theirs);
  fs::rename(theirs, mine);
  CliRun r = Hook(ClaudeWriteEvent("PreToolUse", "/work/billing.py", kBillingCode));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "serves another store; answered alone")) << r.err;
  // Answered from this store, which holds no ledger.py.
  EXPECT_FALSE(Contains(r.out, "/work/ledger.py")) << r.out;
  EXPECT_EQ(Answered(dir_.Sub("theirs.log"), 0), 0);
}

TEST_F(HookServerCli, AFolderOthersCanEnterIsNeverUsed) {
  fs::create_directories(Folder());
  fs::permissions(Folder(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  CliRun serve = Run({"hook", "serve"}, {.env = Env()});
  EXPECT_EQ(serve.exit_code, 7) << serve.err;
  EXPECT_TRUE(Contains(serve.err, "is not a private folder of this user (mode 0755")) << serve.err;
  EXPECT_TRUE(fs::is_empty(Folder()));
  // The hook answers alone; --resident says why it starts nothing.
  CliRun hook =
      Hook(ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kLedgerCode), {"--resident"});
  EXPECT_EQ(hook.exit_code, 0);
  EXPECT_TRUE(Contains(hook.err, "recorded 1 write(s)")) << hook.err;
  EXPECT_TRUE(Contains(hook.err, "no resident server")) << hook.err;
  EXPECT_TRUE(fs::is_empty(Folder()));
}

}  // namespace
}  // namespace sessiondb::testing
