// `ls` and `show` answered by the resident server (src/cli/served_reads.h):
// real `sessiondb hook serve` and CLI processes, raw sockets for hostile
// requests and a server that fails. A served read must print exactly what
// the command prints alone (stdout, stderr, exit code), see what other
// processes wrote since the server started, and a request the server does
// not take must leave the command answering alone with nothing changed.
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "hook_server_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

class ServedReadsCli : public HookServerCli {
 protected:
  // `sessiondb --store STORE ARGS` with the test's runtime folder and `env`.
  CliRun Read(const std::vector<std::string>& args,
              std::map<std::string, std::optional<std::string>> env = {},
              const std::string& store = "") {
    std::vector<std::string> argv = {"--store", store.empty() ? store_ : store};
    argv.insert(argv.end(), args.begin(), args.end());
    env.insert({"XDG_RUNTIME_DIR", run_dir_});
    return Run(argv, {.with_store = false, .env = env});
  }

  // The reads of `sessions` every test compares, with what each gives.
  static std::vector<std::vector<std::string>> ReadsOf(const std::vector<std::string>& sessions) {
    const std::string& a = sessions[0];
    const std::string& b = sessions[1];
    return {
        {"ls"},
        {"ls", "--all"},
        {"ls", "--all", "--json"},
        {"ls", "--limit", "1"},
        {"ls", "--archived"},
        {"ls", "--full", "--meta", "project=/src/app"},
        {"show", a},
        {"show", a, "--json"},
        {"show", a, "--last", "1"},
        {"show", b.substr(0, 12), "--from", "2", "--limit", "1"},
        {"--json", "show", b},
        {"show", "no-such-session"},              // not found: exit 3 and its error
        {"show", a, "--data-uris"},               // without --json: exit 2
        {"show", "-"},                            // no active session
        {"ls", "--cursor", "not-a-real-cursor"},  // a bad cursor
    };
  }

  // Two sessions, a title with an escape the terminal must not see raw, one archived,
  // one with metadata.
  std::vector<std::string> Seed() {
    const std::string a =
        NewSession({"--title", "Bug triage \x1b[31m red", "--meta", "project=/src/app"});
    const std::string b = NewSession({"--title", "Second"});
    EXPECT_EQ(Sdb({"append", a, "first, with a tab\tand \u00e9 accents"}).exit_code, 0);
    EXPECT_EQ(Sdb({"append", a, "--role", "assistant", "an answer"}).exit_code, 0);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(Sdb({"append", b, "message " + std::to_string(i)}).exit_code, 0);
    }
    EXPECT_EQ(Sdb({"archive", b}).exit_code, 0);
    return {a, b};
  }
};

TEST_F(ServedReadsCli, ServedReadsPrintWhatTheCommandPrintsAlone) {
  const std::vector<std::string> sessions = Seed();
  const std::map<std::string, std::optional<std::string>> env = {{"TZ", "Asia/Kathmandu"},
                                                                 {"COLUMNS", "44"}};
  std::vector<CliRun> alone;
  for (const auto& args : ReadsOf(sessions)) alone.push_back(Read(args, env));
  // The reads depend on TZ and COLUMNS: a server started without them must
  // use the caller's.
  const CliRun utc = Read({"ls", "--all"}, {{"TZ", "UTC"}, {"COLUMNS", "44"}});
  const CliRun wide = Read({"ls", "--all"}, {{"TZ", "Asia/Kathmandu"}, {"COLUMNS", "200"}});
  ASSERT_NE(utc.out, alone[1].out) << "the times do not depend on TZ: the test proves nothing";
  ASSERT_NE(wide.out, alone[1].out) << "the table does not depend on COLUMNS";

  const std::string log = dir_.Sub("server.log");
  ASSERT_FALSE(StartServer(store_, log).empty());
  const auto reads = ReadsOf(sessions);
  for (size_t i = 0; i < reads.size(); ++i) {
    const CliRun r = Read(reads[i], env);
    EXPECT_EQ(r.exit_code, alone[i].exit_code) << reads[i][0] << " " << r.err;
    EXPECT_EQ(r.out, alone[i].out) << reads[i][0];
    EXPECT_EQ(r.err, alone[i].err) << reads[i][0];
  }
  const int served = static_cast<int>(reads.size());
  EXPECT_EQ(alone[6].exit_code, 0);
  EXPECT_TRUE(Contains(alone[6].out, "an answer")) << alone[6].out;
  EXPECT_EQ(alone[11].exit_code, 3);
  EXPECT_TRUE(Contains(alone[11].err, "does not exist")) << alone[11].err;
  EXPECT_EQ(alone[12].exit_code, 2);
  // Every read went through the server, and the hook's calls are still its.
  EXPECT_EQ(Answered(log, served, "answered a read"), served) << Slurp(log);
  EXPECT_EQ(Answered(log, 0), 0);
  // Nothing of one call's TZ and COLUMNS stays in the server: a read
  // without them is answered as a process without them answers it.
  const std::map<std::string, std::optional<std::string>> unset = {{"TZ", std::nullopt},
                                                                   {"COLUMNS", std::nullopt}};
  const CliRun plain_served = Read({"ls", "--all"}, unset);
  EXPECT_EQ(Answered(log, served + 1, "answered a read"), served + 1) << Slurp(log);
  EXPECT_EQ(StopServer(), 0);
  const CliRun plain_alone = Read({"ls", "--all"}, unset);
  EXPECT_EQ(plain_served.out, plain_alone.out);
  EXPECT_NE(plain_served.out, alone[1].out);
}

TEST_F(ServedReadsCli, AServedReadSeesWhatOthersWroteSinceTheServerStarted) {
  const std::string first = NewSession({"--title", "Before"});
  const std::string log = dir_.Sub("fresh.log");
  ASSERT_FALSE(StartServer(store_, log).empty());
  ASSERT_TRUE(Contains(Read({"ls"}).out, "Before"));
  // Other processes write; the server's next answers hold their writes.
  const std::string second = NewSession({"--title", "After"});
  ASSERT_EQ(Sdb({"append", first, "written while the server ran"}).exit_code, 0);
  const CliRun ls = Read({"ls"});
  EXPECT_TRUE(Contains(ls.out, "After")) << ls.out;
  const CliRun show = Read({"show", first});
  EXPECT_TRUE(Contains(show.out, "written while the server ran")) << show.out;
  ASSERT_EQ(Sdb({"rm", second}).exit_code, 0);
  EXPECT_FALSE(Contains(Read({"ls"}).out, "After"));
  EXPECT_EQ(Answered(log, 4, "answered a read"), 4) << Slurp(log);
}

TEST_F(ServedReadsCli, OnPostgresReadsAreServedForTheServersNamespaceOnly) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  auto in = [&](const std::string& ns, std::vector<std::string> args) {
    args.insert(args.begin(), {"--namespace", ns});
    return args;
  };
  std::map<std::string, std::string> session;
  for (const std::string ns : {"served", "other"}) {
    ASSERT_EQ(Read(in(ns, {"init"}), {}, pg.uri()).exit_code, 0);
    const CliRun made = Read(in(ns, {"new", "--title", "In " + ns}), {}, pg.uri());
    ASSERT_EQ(made.exit_code, 0) << made.err;
    session[ns] = made.out.substr(0, made.out.find('\n'));
    ASSERT_EQ(Read(in(ns, {"append", session[ns], "hello from " + ns}), {}, pg.uri()).exit_code, 0);
  }
  const std::vector<std::vector<std::string>> reads = {
      {"ls"}, {"ls", "--json"}, {"show", session["served"]}, {"show", session["other"]}};
  std::vector<CliRun> alone;
  for (const auto& args : reads) alone.push_back(Read(in("served", args), {}, pg.uri()));
  EXPECT_TRUE(Contains(alone[2].out, "hello from served"));
  EXPECT_EQ(alone[3].exit_code, 3) << "a session of another namespace is not found";

  const std::string log = dir_.Sub("pg.log");
  ASSERT_FALSE(StartServer(pg.uri(), log, {"--namespace", "served"}).empty());
  for (size_t i = 0; i < reads.size(); ++i) {
    const CliRun r = Read(in("served", reads[i]), {}, pg.uri());
    EXPECT_EQ(r.exit_code, alone[i].exit_code) << r.err;
    EXPECT_EQ(r.out, alone[i].out);
    EXPECT_EQ(r.err, alone[i].err);
  }
  // The other namespace's reads are not this server's.
  const CliRun other = Read(in("other", {"show", session["other"]}), {}, pg.uri());
  EXPECT_TRUE(Contains(other.out, "hello from other")) << other.err;
  EXPECT_EQ(Answered(log, 4, "answered a read"), 4) << Slurp(log);
  EXPECT_EQ(StopServer(), 0);
}

TEST_F(ServedReadsCli, HostileReadRequestsAreClosedAndChangeNothing) {
  const std::vector<std::string> sessions = Seed();
  const CliRun before = Read({"ls", "--all", "--json"});
  const std::string log = dir_.Sub("hostile.log");
  const std::string socket_path = StartServer(store_, log, {"--request-timeout-ms", "300"});
  ASSERT_FALSE(socket_path.empty());
  auto send_raw = [&](const std::string& bytes) {
    const std::string reply = SendRaw(socket_path, bytes);
    return reply.substr(reply.find('\n') + 1);  // after the greeting's line: its key
  };
  auto request = [](const std::string& body) {
    return "read " + std::to_string(body.size()) + "\n" + body;
  };
  const std::string key = send_raw("");
  const std::string nul(1, '\0');
  const std::vector<std::string> hostile = {
      "read 2000000\n" + std::string(1000, 'x'),                    // over the 1 MiB limit
      "read 99999999999999999999\n",                                // twenty digits
      "read 40\n" + nul + "ls" + nul,                               // shorter than its length
      request(nul + "ls"),                                          // no final NUL
      request("LD_PRELOAD=/tmp/evil.so" + nul + nul + "ls" + nul),  // a variable not forwarded
      request("TZ=UTC" + nul + "ls" + nul),                         // variables never ended
      request(nul),                                                 // no arguments
      request(nul + "rm" + nul + sessions[0] + nul),                // a verb that writes
      request(nul + "archive" + nul + sessions[0] + nul),
      request(nul + "--bogus" + nul + "ls" + nul),  // an unknown option before the verb
      request(nul + "__complete" + nul + "ls" + nul),
      request([&] {
        std::string many = nul;
        for (int i = 0; i < 1100; ++i) many += "--all" + nul;
        return many;
      }()),  // more than 1,024 arguments
  };
  for (const std::string& bytes : hostile) {
    EXPECT_EQ(send_raw(bytes), key) << "answered: " << bytes.substr(0, 40);
  }
  const std::string text = Slurp(log);
  EXPECT_TRUE(Contains(text, "whose length is not a number of at most 1048576")) << text;
  EXPECT_TRUE(Contains(text, "shorter than its length")) << text;
  EXPECT_TRUE(Contains(text, "not VARIABLES")) << text;
  EXPECT_TRUE(Contains(text, "a verb this server does not answer")) << text;
  // Nothing was removed or archived; the server still answers a real read.
  const CliRun after = Read({"ls", "--all", "--json"});
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(Answered(log, 1, "answered a read"), 1) << Slurp(log);
  // A well-formed request from a raw client gets its exit code and two
  // descriptors; what they hold is the read's output.
  const int fd = ConnectUnix(socket_path);
  ASSERT_EQ(ReadGreetingKey(fd), key);
  const std::string body = nul + "show" + nul + sessions[0] + nul;
  const std::string req = request(body);
  ASSERT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  char byte = 0;
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 2)] = {};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  ASSERT_EQ(recvmsg(fd, &message, MSG_CMSG_CLOEXEC), 1);
  EXPECT_EQ(byte, '0');
  cmsghdr* h = CMSG_FIRSTHDR(&message);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->cmsg_len, CMSG_LEN(sizeof(int) * 2));
  int files[2];
  std::memcpy(files, CMSG_DATA(h), sizeof(files));
  std::string printed(4096, '\0');
  const ssize_t n = pread(files[0], printed.data(), printed.size(), 0);
  ASSERT_GT(n, 0);
  printed.resize(static_cast<size_t>(n));
  EXPECT_EQ(printed, Read({"show", sessions[0]}).out);
  close(files[0]);
  close(files[1]);
  close(fd);
}

TEST_F(ServedReadsCli, AReadWithoutAnAnswerIsAnsweredAloneOnce) {
  const std::vector<std::string> sessions = Seed();
  const CliRun alone = Read({"show", sessions[0]});
  const std::string socket_path = StartServer(store_, dir_.Sub("real.log"));
  ASSERT_FALSE(socket_path.empty());
  // The real server's greeting, then a fake at its path that takes the
  // request and answers without the two files (as no server of ours does).
  const int probe = ConnectUnix(socket_path);
  const std::string key = ReadGreetingKey(probe);
  close(probe);
  EXPECT_EQ(StopServer(), 0);
  CliRun r;
  const std::string taken = FakeServerOnce(socket_path, key, "0\n", [&] {
    r = Read({"show", sessions[0]}, {{"TZ", "UTC"}});
  });
  EXPECT_TRUE(Contains(taken, "read ")) << "the read asked the fake";
  EXPECT_TRUE(Contains(taken, std::string("TZ=UTC") + '\0')) << "and forwarded TZ";
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, alone.out) << "answered alone, once";
  EXPECT_EQ(r.err, "");
}

TEST_F(ServedReadsCli, AReadOnATerminalIsNotServed) {
  const std::vector<std::string> sessions = Seed();
  const std::string log = dir_.Sub("terminal.log");
  ASSERT_FALSE(StartServer(store_, log).empty());
  const CliRun r =
      RunOnTerminal({"--no-pager", "ls"}, {{"XDG_RUNTIME_DIR", run_dir_}}, /*columns=*/100);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.out, "Bug triage")) << r.out;
  EXPECT_FALSE(Contains(r.out, "\x1b[31m")) << "the terminal's escaping is the process's own";
  // Two reads of three arguments (--store, the store, ls) after it: the
  // server answers in order, so once it logged the second, a served
  // terminal read (four arguments, --no-pager among them) would be logged.
  ASSERT_TRUE(Contains(Read({"ls"}).out, "Bug triage"));
  ASSERT_TRUE(Contains(Read({"ls"}).out, "Bug triage"));
  EXPECT_EQ(Answered(log, 2, "answered a read of 3 arguments"), 2) << Slurp(log);
  EXPECT_FALSE(Contains(Slurp(log), "answered a read of 4 arguments")) << Slurp(log);
}

}  // namespace
}  // namespace sessiondb::testing
