// The resident server (src/cli/hook_server.h) as the tests of the hook and
// of the reads it answers start it: a real `sessiondb hook serve` process in
// a private runtime folder of the test, and raw sockets for hostile clients.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_fixture.h"

namespace sessiondb::testing {

inline int ConnectUnix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Everything `fd` (a socket or a pipe) gives until it closes, or 10 s pass.
// The key a server greets with on `fd`, just connected (the greeting's
// line, then that many bytes); empty when it does not greet.
inline std::string ReadGreetingKey(int fd) {
  std::string greeting;
  char c;
  while (recv(fd, &c, 1, 0) == 1 && c != '\n') greeting += c;
  if (greeting.rfind(' ') == std::string::npos) return "";
  std::string key(std::stoul(greeting.substr(greeting.rfind(' ') + 1)), '\0');
  if (recv(fd, key.data(), key.size(), MSG_WAITALL) != static_cast<ssize_t>(key.size())) return "";
  return key;
}

// A fake server at `socket_path` for one connection while `call` runs: it
// greets with `key`, takes one whole request (its line ends with the
// length of what follows), sends `reply` and closes. Returns the request.
inline std::string FakeServerOnce(const std::string& socket_path, const std::string& key,
                                  const std::string& reply, const std::function<void()>& call) {
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", socket_path.c_str());
  EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(listen(listener, 4), 0);
  std::string taken;
  std::thread fake([&] {
    const int fd = accept(listener, nullptr, nullptr);
    const std::string hello = "sessiondb-hook-server 1 " + std::to_string(key.size()) + "\n" + key;
    (void)send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
      taken.append(buf, static_cast<size_t>(n));
      const size_t line_end = taken.find('\n');
      if (line_end == std::string::npos) continue;
      const size_t length = std::stoul(taken.substr(taken.rfind(' ', line_end) + 1));
      if (taken.size() >= line_end + 1 + length) break;
    }
    if (!reply.empty()) (void)send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    close(fd);
  });
  call();
  fake.join();
  close(listener);
  return taken;
}

inline std::string ReadToClose(int fd) {
  std::string out;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Connects to `socket_path`, sends `bytes` (nothing when empty) and returns
// all the server sent until it closed.
inline std::string SendRaw(const std::string& socket_path, const std::string& bytes) {
  const int fd = ConnectUnix(socket_path);
  EXPECT_GE(fd, 0);
  if (!bytes.empty()) (void)send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string reply = ReadToClose(fd);
  close(fd);
  return reply;
}

class HookServerCli : public Cli {
 protected:
  void SetUp() override { std::filesystem::create_directories(run_dir_); }
  void TearDown() override {
    for (pid_t pid : servers_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }

  std::map<std::string, std::optional<std::string>> Env() const {
    return {{"XDG_RUNTIME_DIR", run_dir_}};
  }
  std::string Folder() const { return run_dir_ + "/sessiondb-" + std::to_string(geteuid()); }

  // A hook call on `store` (the test's own by default).
  CliRun Hook(const std::string& event, const std::vector<std::string>& extra = {},
              const std::string& store = "") {
    std::vector<std::string> args = {"--store", store.empty() ? store_ : store, "hook",
                                     "claude-code"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Run(args, {.input = event, .with_store = false, .env = Env()});
  }

  // Starts `hook serve` for `store` in the background, its stderr in
  // `log`, and waits for its socket; returns the socket's path.
  std::string StartServer(const std::string& store, const std::string& log,
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store, "hook", "serve"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("XDG_RUNTIME_DIR", run_dir_.c_str(), 1);
      setenv("HOME", home_.c_str(), 1);
      const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in = open("/dev/null", O_RDONLY);
      dup2(in, STDIN_FILENO);
      dup2(err, STDOUT_FILENO);
      dup2(err, STDERR_FILENO);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    servers_.push_back(pid);
    last_server_ = pid;
    // The first line names the socket.
    for (int i = 0; i < 500; ++i) {
      const std::string text = Slurp(log);
      const size_t at = text.find(" at ");
      const size_t end = text.find(".sock", at == std::string::npos ? 0 : at);
      if (at != std::string::npos && end != std::string::npos) {
        return text.substr(at + 4, end + 5 - (at + 4));
      }
      if (waitpid(pid, nullptr, WNOHANG) == pid) {
        servers_.pop_back();
        ADD_FAILURE() << "the server ended: " << text;
        return "";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "the server never said where it listens: " << Slurp(log);
    return "";
  }

  // Sends SIGTERM to the last server and returns its exit status.
  int StopServer() {
    kill(last_server_, SIGTERM);
    int status = 0;
    waitpid(last_server_, &status, 0);
    servers_.erase(std::remove(servers_.begin(), servers_.end(), last_server_), servers_.end());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // The calls the server's log at `log_path` says it answered, once it says
  // `expected` (a server writes its line after the answer, so the hook may
  // be done before it), or after 5 s. `what`: "answered a call" for hook
  // calls, "answered a read" for reads (served_reads.h).
  static int Answered(const std::string& log_path, int expected,
                      const std::string& what = "answered a call") {
    int n = 0;
    for (int i = 0; i < 500; ++i) {
      const std::string log = Slurp(log_path);
      n = 0;
      for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) {
        ++n;
      }
      if (n >= expected) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return n;
  }

  std::string run_dir_ = dir_.Sub("run");
  std::vector<pid_t> servers_;
  pid_t last_server_ = -1;
};

}  // namespace sessiondb::testing
