// The real `sessiondb serve` process for the HTTP tests: started on a free
// loopback port against a test's store, its address read from the line it
// prints, stopped with SIGTERM (as Ctrl-C would) when the test ends. Requests
// go through cpp-httplib's client, like any other program's would.
#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "test_support.h"

namespace sessiondb::testing {

using nlohmann::json;

class ServerProcess {
 public:
  // `sessiondb --store STORE serve --port 0 ARGS...`; returns once it listens.
  // On failure (the server exited) `exit_code()` and `log()` say why.
  ServerProcess(const std::string& store, std::vector<std::string> args,
                std::vector<std::string> env = {}) {
    log_path_ = store + ".server.log";
    int out[2];
    if (pipe(out) != 0) return;
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store, "serve", "--port", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(log, STDERR_FILENO);
      close(out[0]);
      for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> cargv;
      for (std::string& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    close(out[1]);
    std::string seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const std::regex address(R"(http://([0-9.]+|\[[0-9a-f:]+\]):([0-9]+)/)");
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out[0], POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char buf[512];
      const ssize_t n = read(out[0], buf, sizeof(buf));
      if (n <= 0) break;  // exited before listening
      seen.append(buf, static_cast<size_t>(n));
      std::smatch m;
      if (std::regex_search(seen, m, address)) {
        host_ = m[1].str();
        port_ = std::stoi(m[2].str());
        url_ = m[0].str();
        break;
      }
    }
    close(out[0]);
    if (port_ == 0) Wait();
  }

  ~ServerProcess() { Stop(); }

  bool listening() const { return port_ != 0; }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  const std::string& url() const { return url_; }

  // A client of this server; `token` adds "Authorization: Bearer".
  std::unique_ptr<httplib::Client> Client(const std::string& token = "") const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(30, 0);
    if (!token.empty()) c->set_bearer_token_auth(token.c_str());
    return c;
  }

  // SIGTERM, then the exit code (or -1 if it did not exit by itself).
  int Stop() {
    if (pid_ > 0 && exit_code_ == -2) {
      kill(pid_, SIGTERM);
      Wait();
    }
    return exit_code_;
  }
  // SIGKILL: the process dies at whatever instruction it was on.
  void Kill() {
    if (pid_ > 0 && exit_code_ == -2) {
      kill(pid_, SIGKILL);
      Wait();
    }
  }
  int exit_code() const { return exit_code_; }
  std::string log() const {
    std::ifstream f(log_path_);
    return std::string((std::istreambuf_iterator<char>(f)), {});
  }

 private:
  void Wait() {
    int status = 0;
    if (waitpid(pid_, &status, 0) == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
  }

  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = -2;  // still running
  std::string host_;
  std::string url_;
  std::string log_path_;
};

inline json Body(const httplib::Result& r) {
  if (!r) return json();
  return json::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

// The error code of a JSON error answer, or "" when it is not one.
inline std::string ErrorCode(const httplib::Result& r) {
  json j = Body(r);
  if (!j.is_object() || !j.contains("error")) return "";
  return j["error"].value("code", "");
}

}  // namespace sessiondb::testing
