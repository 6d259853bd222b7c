#include "cli/pager.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace sessiondb::cli {
namespace {

constexpr char kDefaultPager[] = "less -FRX";

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

// True if `program` is an executable file in a folder of $PATH.
bool OnPath(std::string_view program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    const std::string file = (dir.empty() ? "." : dir) + "/" + std::string(program);
    if (access(file.c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return false;
}

}  // namespace

std::string PagerCommand() {
  const char* chosen = NonEmptyEnv("SESSIONDB_PAGER");
  if (!chosen) chosen = NonEmptyEnv("PAGER");
  if (!chosen) return OnPath("less") ? kDefaultPager : "";
  std::string command = chosen;
  if (command == "cat") return "";
  return command;
}

std::unique_ptr<Pager> Pager::Start(const std::string& command) {
  int fds[2];
  if (command.empty() || pipe(fds) != 0) return nullptr;
  std::cout.flush();
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return nullptr;
  }
  if (pid == 0) {
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    close(fds[1]);
    setenv("LESS", "FRX", /*overwrite=*/0);
    setenv("LV", "-c", /*overwrite=*/0);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const int saved = dup(STDOUT_FILENO);
  dup2(fds[1], STDOUT_FILENO);
  close(fds[0]);
  close(fds[1]);
  return std::unique_ptr<Pager>(new Pager(pid, saved));
}

Pager::~Pager() {
  std::cout.flush();
  std::fflush(stdout);
  // Closing our end of the pipe is the pager's end of input.
  dup2(saved_stdout_, STDOUT_FILENO);
  close(saved_stdout_);
  // Ctrl-C is the pager's to handle (less uses it to stop a search); dying
  // here would hand the terminal back to the shell with the pager still on it.
  std::signal(SIGINT, SIG_IGN);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace sessiondb::cli
