// The fixture of the CLI suites. Runs the real `sessiondb` binary (fork + exec, no shell) against a
// fresh store per test and checks exit codes, stderr messages and --json output. Every run gets a
// clean environment for the store location: HOME points into the test's directory and
// $SESSIONDB_STORE / $XDG_DATA_HOME are unset unless a test sets them, so nothing outside the temp
// directory is ever touched.
#pragma once

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pg_test_database.h"
#include "test_support.h"

namespace sessiondb::testing {

using nlohmann::json;

// A valid 1x1 8-bit grayscale PNG (IHDR, IDAT, IEND, every CRC correct).
inline constexpr char kOnePixelPngHex[] =
    "89504E470D0A1A0A0000000D49484452000000010000000108000000003A7E9B55"
    "0000000A49444154789C636000000002000148AFA471"
    "0000000049454E44AE426082";
// Its SHA-256 and base64, computed independently (Python hashlib / base64).
inline constexpr char kOnePixelPngSha256[] =
    "eaa4a94ea300e0d2c775968cbe42f0b5b51ceafdeb73d64e9efddf6d4e880865";
inline constexpr char kOnePixelPngBase64[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==";

inline std::string FromHex(std::string_view hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return bytes;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A Claude Code hook event (`hook_event_name` PreToolUse or PostToolUse) of
// a Write of `code` to `path`, in session s1 with cwd /work.
inline std::string ClaudeWriteEvent(const std::string& hook_event, const std::string& path,
                                    const std::string& code) {
  return nlohmann::json{{"hook_event_name", hook_event},
                        {"tool_name", "Write"},
                        {"session_id", "s1"},
                        {"cwd", "/work"},
                        {"tool_input", {{"file_path", path}, {"content", code}}}}
      .dump();
}

struct CliRun {
  int exit_code = -1;  // -1 if the process did not exit normally (e.g. killed by the alarm)
  std::string out;     // stdout
  std::string err;     // stderr, or what the terminal received when stderr was one
  json Json() const {
    json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "stdout is not one JSON document:\n" << out << "\n" << err;
    return j;
  }
};

// How to run the binary beyond its arguments.
struct RunOptions {
  std::string input;               // fed on stdin (a file, so EOF is certain)
  bool with_store = true;          // pass --store <the test's store>
  bool stdin_is_terminal = false;  // stdin is a pseudo-terminal with nothing typed
  bool stderr_is_terminal = false;
  // Variables to set; std::nullopt unsets one.
  std::map<std::string, std::optional<std::string>> env;
};

// A pseudo-terminal pair; the test holds the master, the child gets the slave.
class PseudoTerminal {
 public:
  PseudoTerminal() {
    master_ = posix_openpt(O_RDWR | O_NOCTTY);
    if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) return;
    slave_ = open(ptsname(master_), O_RDWR | O_NOCTTY);
  }
  ~PseudoTerminal() {
    if (slave_ >= 0) close(slave_);
    if (master_ >= 0) close(master_);
  }
  bool ok() const { return slave_ >= 0; }
  int slave() const { return slave_; }
  void CloseSlave() {
    close(slave_);
    slave_ = -1;
  }
  // Whatever the child wrote to the terminal and is still buffered.
  std::string Drain() {
    std::string out;
    fcntl(master_, F_SETFL, fcntl(master_, F_GETFL) | O_NONBLOCK);
    char buf[4096];
    ssize_t n;
    while ((n = read(master_, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

 private:
  int master_ = -1;
  int slave_ = -1;
};

class Cli : public ::testing::Test {
 protected:
  // Runs `sessiondb [--store <store>] ARGS` and waits for it.
  CliRun Run(const std::vector<std::string>& args, const RunOptions& o) {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH};
    if (o.with_store) argv.insert(argv.end(), {"--store", store_});
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    c_argv.reserve(argv.size() + 1);
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);

    const std::string in = dir_.Sub("stdin"), out = dir_.Sub("stdout"), err = dir_.Sub("stderr");
    { std::ofstream(in, std::ios::binary) << o.input; }
    std::optional<PseudoTerminal> tty;
    if (o.stdin_is_terminal || o.stderr_is_terminal) {
      tty.emplace();
      if (!tty->ok()) {
        ADD_FAILURE() << "no pseudo-terminal available";
        return {};
      }
    }
    std::map<std::string, std::optional<std::string>> env = {
        {"HOME", home_}, {"SESSIONDB_STORE", std::nullopt}, {"XDG_DATA_HOME", std::nullopt}};
    for (const auto& [k, v] : o.env) env[k] = v;

    const pid_t pid = fork();
    if (pid == 0) {
      for (const auto& [k, v] : env) v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
      int in_fd = o.stdin_is_terminal ? tty->slave() : open(in.c_str(), O_RDONLY);
      int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err_fd = o.stderr_is_terminal ? tty->slave()
                                        : open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in_fd < 0 || out_fd < 0 || err_fd < 0) _exit(126);
      dup2(in_fd, STDIN_FILENO);
      dup2(out_fd, STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      alarm(60);  // a CLI waiting on a terminal fails the test instead of hanging it
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    CliRun r;
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
      ADD_FAILURE() << "could not run " << SESSIONDB_CLI_PATH;
      return r;
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = o.stderr_is_terminal ? tty->Drain() : Slurp(err);
    return r;
  }

  // Runs `sessiondb --store <store> ARGS` with stdout on a raw pseudo-terminal
  // (no newline translation) and stderr in a file; `out` is what the terminal
  // received. $SESSIONDB_PAGER and $PAGER are unset unless `env` sets them, so
  // the pager is whatever the test says (or none: --no-pager). `columns`,
  // when not 0, is the terminal's window width.
  CliRun RunOnTerminal(const std::vector<std::string>& args,
                       std::map<std::string, std::optional<std::string>> env = {},
                       unsigned short columns = 0) {
    PseudoTerminal tty;
    if (!tty.ok()) {
      ADD_FAILURE() << "no pseudo-terminal available";
      return {};
    }
    termios raw{};
    tcgetattr(tty.slave(), &raw);
    cfmakeraw(&raw);
    tcsetattr(tty.slave(), TCSANOW, &raw);
    if (columns != 0) {
      winsize size{};
      size.ws_col = columns;
      size.ws_row = 50;
      EXPECT_EQ(ioctl(tty.slave(), TIOCSWINSZ, &size), 0);
    }
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    env.insert({"HOME", home_});
    env.insert({"SESSIONDB_PAGER", std::nullopt});
    env.insert({"PAGER", std::nullopt});
    env.insert({"NO_COLOR", std::nullopt});
    const std::string err = dir_.Sub("stderr");
    const pid_t pid = fork();
    if (pid == 0) {
      for (const auto& [k, v] : env) v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int in_fd = open("/dev/null", O_RDONLY);
      if (err_fd < 0 || in_fd < 0) _exit(126);
      dup2(in_fd, STDIN_FILENO);
      dup2(tty.slave(), STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      alarm(60);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    tty.CloseSlave();
    CliRun r;
    int status = 0;
    // Reads as the child writes, so a full terminal buffer never blocks it.
    while (true) {
      r.out += tty.Drain();
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      usleep(10'000);
    }
    r.out += tty.Drain();
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = Slurp(err);
    return r;
  }

  CliRun Sdb(const std::vector<std::string>& args, const std::string& input = "") {
    return Run(args, {.input = input});
  }

  // Creates a session and returns its id (the human output is the id alone).
  std::string NewSession(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"new"};
    args.insert(args.end(), extra.begin(), extra.end());
    CliRun r = Sdb(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::string id = r.out;
    if (!id.empty() && id.back() == '\n') id.pop_back();
    return id;
  }

  size_t MessageCount(const std::string& session) {
    json j = Sdb({"--json", "show", session}).Json();
    return j["messages"].size();
  }

  std::string WriteFile(const std::string& name, const std::string& bytes) {
    std::string path = dir_.Sub(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  std::string WritePng(const std::string& name, const std::string& salt) {
    return WriteFile(name, MakePng(4, 3, salt));
  }

  // The blob file named by `sha256`, wherever the store keeps it; empty if none.
  std::string FindBlob(const std::string& sha256) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(store_)) {
      if (e.is_regular_file() && e.path().filename() == sha256) return e.path().string();
    }
    return "";
  }

  TempDir dir_;
  std::string store_ = dir_.Sub("store");
  std::string home_ = dir_.Sub("home");
};

}  // namespace sessiondb::testing
