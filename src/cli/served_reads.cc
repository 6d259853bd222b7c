#include "cli/served_reads.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <ios>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/hook_server.h"
#include "cli/output.h"

namespace sessiondb::cli {
namespace {

constexpr std::string_view kReadRequest = "read ";
// The variables a read's output depends on when stdout is no terminal: the
// times `ls` prints are local, and its table fits $COLUMNS.
constexpr std::array<const char*, 2> kForwardedVariables = {"TZ", "COLUMNS"};
// A read may take a while (a long session's `show --json --data-uris`).
constexpr auto kReadAnswerWait = std::chrono::seconds(120);

// Sets the variables of one request for the call and puts the server's own
// back when it ends.
class CallEnvironment {
 public:
  explicit CallEnvironment(const std::map<std::string, std::string>& asked) {
    for (const char* name : kForwardedVariables) {
      const char* own = std::getenv(name);
      saved_[name] = own ? std::optional<std::string>(own) : std::nullopt;
      const auto it = asked.find(name);
      if (it != asked.end()) {
        setenv(name, it->second.c_str(), 1);
      } else {
        unsetenv(name);
      }
    }
    tzset();  // localtime_r does not read TZ again by itself
  }
  ~CallEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
    tzset();
  }
  CallEnvironment(const CallEnvironment&) = delete;
  CallEnvironment& operator=(const CallEnvironment&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// Points stdout and stderr at two files for the call and back when it ends,
// and gives the next call std::cout and std::cerr as this one found them (a
// verb that sets a precision or a fill sets it for itself only).
class CapturedOutput {
 public:
  CapturedOutput(int out, int err) {
    FlushAll();
    out_format_.copyfmt(std::cout);
    err_format_.copyfmt(std::cerr);
    saved_out_ = Fd(dup(STDOUT_FILENO));
    saved_err_ = Fd(dup(STDERR_FILENO));
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    std::cout.clear();
    std::cerr.clear();
  }
  ~CapturedOutput() {
    FlushAll();
    dup2(saved_out_.get(), STDOUT_FILENO);
    dup2(saved_err_.get(), STDERR_FILENO);
    std::cout.copyfmt(out_format_);
    std::cerr.copyfmt(err_format_);
    std::cout.clear();
    std::cerr.clear();
  }
  CapturedOutput(const CapturedOutput&) = delete;
  CapturedOutput& operator=(const CapturedOutput&) = delete;

 private:
  static void FlushAll() {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
  }
  Fd saved_out_;
  Fd saved_err_;
  std::ios out_format_{nullptr};
  std::ios err_format_{nullptr};
};

// The request body split: the variables, then the arguments; nullopt when
// it is not what served_reads.h describes.
struct ReadRequest {
  std::map<std::string, std::string> environment;
  std::vector<std::string> arguments;
};

std::optional<ReadRequest> ParseReadRequest(std::string_view body) {
  if (body.empty() || body.back() != '\0') return std::nullopt;
  body.remove_suffix(1);
  ReadRequest request;
  bool in_environment = true;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t end = std::min(body.find('\0', start), body.size());
    const std::string_view field = body.substr(start, end - start);
    start = end + 1;
    if (in_environment) {
      if (field.empty()) {
        in_environment = false;
        continue;
      }
      const size_t equals = field.find('=');
      if (equals == std::string_view::npos) return std::nullopt;
      const std::string name(field.substr(0, equals));
      if (std::none_of(kForwardedVariables.begin(), kForwardedVariables.end(),
                       [&](const char* v) { return name == v; })) {
        return std::nullopt;
      }
      request.environment[name] = std::string(field.substr(equals + 1));
      continue;
    }
    if (request.arguments.size() == kMaxReadArguments) return std::nullopt;
    request.arguments.emplace_back(field);
  }
  if (in_environment || request.arguments.empty()) return std::nullopt;
  return request;
}

// Copies the whole of `from` (a file) to `to`; false when it cannot.
bool CopyFile(int from, int to) {
  char buffer[64 * 1024];
  off_t offset = 0;
  while (true) {
    const ssize_t n = pread(from, buffer, sizeof(buffer), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    offset += n;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = write(to, buffer + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      done += w;
    }
  }
}

bool IsRegularFile(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

bool IsReadRequestLine(std::string_view line) {
  return line.rfind(kReadRequest, 0) == 0 &&
         line.find(' ', kReadRequest.size()) == std::string_view::npos;
}

bool AnsweredByResidentServer(CliContext& ctx) {
  if (ctx.serving_a_read() || isatty(STDOUT_FILENO) != 0) return false;
  Result<HookServerPlace> place = HookServerPlaceFor(ctx, /*make_folder=*/false);
  if (!place) return false;
  std::string why;
  Result<Fd> connected = ConnectToServer(*place, &why);
  if (!connected) return false;
  std::string body;
  for (const char* name : kForwardedVariables) {
    if (const char* value = std::getenv(name)) body += std::string(name) + "=" + value + '\0';
  }
  body += '\0';
  for (const std::string& argument : ctx.command_line()) body += argument + '\0';
  if (body.size() > kMaxReadRequestBytes || ctx.command_line().size() > kMaxReadArguments) {
    return false;
  }
  const int fd = connected->get();
  const auto deadline = SocketClock::now() + kReadAnswerWait;
  if (!WriteAll(fd, std::string(kReadRequest) + std::to_string(body.size()) + "\n", deadline) ||
      !WriteAll(fd, body, deadline)) {
    return false;
  }
  std::string line;
  std::vector<Fd> files;
  if (!ReadLineWithFds(fd, deadline, &line, &files) || files.size() != 2 ||
      !IsRegularFile(files[0].get()) || !IsRegularFile(files[1].get())) {
    return false;
  }
  std::string_view rest = line;
  const std::optional<size_t> code = TakeSize(&rest, 255);
  if (!code || !rest.empty()) return false;
  // The answer is whole: from here on it is printed, never answered twice.
  if (!CopyFile(files[0].get(), STDOUT_FILENO)) {
    std::cerr << "sessiondb: error: cannot write to standard output\n";
    ctx.set_exit_code(kExitStorageError);
    return true;
  }
  CopyFile(files[1].get(), STDERR_FILENO);
  ctx.set_exit_code(static_cast<int>(*code));
  return true;
}

void AnswerReadRequest(int fd, std::string_view line, SocketClock::time_point deadline,
                       Store* store, bool quiet) {
  auto refuse = [quiet](std::string_view why) {
    if (!quiet) std::cerr << "hook server: " << why << "; closed\n";
  };
  std::string_view rest = line.substr(kReadRequest.size());
  const std::optional<size_t> length = TakeSize(&rest, kMaxReadRequestBytes);
  if (!length || !rest.empty()) {
    return refuse("a read request whose length is not a number of at most " +
                  std::to_string(kMaxReadRequestBytes));
  }
  std::string body;
  if (!ReadExact(fd, *length, deadline, &body)) {
    return refuse("a read request shorter than its length, or too slow");
  }
  std::optional<ReadRequest> request = ParseReadRequest(body);
  if (!request) return refuse("a read request that is not VARIABLES \\0 ARGUMENTS");
  Fd out(memfd_create("sessiondb-stdout", MFD_CLOEXEC));
  Fd err(memfd_create("sessiondb-stderr", MFD_CLOEXEC));
  if (out.get() < 0 || err.get() < 0) {
    return refuse(std::string("no memory file for the answer: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  std::string program = "sessiondb";
  argv.push_back(program.data());
  for (std::string& argument : request->arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  static const std::vector<std::string> kVerbs(kServedReadVerbs.begin(), kServedReadVerbs.end());
  const auto started = SocketClock::now();
  std::optional<int> code;
  {
    CapturedOutput captured(out.get(), err.get());
    CallEnvironment environment(request->environment);
    CliContext call;
    call.BorrowStore(store);
    try {
      code = RunCommandLine(call, static_cast<int>(argv.size() - 1), argv.data(), &kVerbs);
    } catch (const std::exception& e) {
      std::cerr << "sessiondb: internal error: " << EscapeForTerminal(e.what()) << "\n";
      code = kExitStorageError;
    }
  }
  if (!code) return refuse("a read of a verb this server does not answer");
  const auto reply_deadline = SocketClock::now() + kReadAnswerWait;
  if (!SendLineWithFds(fd, std::to_string(*code) + "\n", {out.get(), err.get()}, reply_deadline)) {
    return refuse("the reader left before its answer");
  }
  if (!quiet) {
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(SocketClock::now() - started).count();
    std::cerr << "hook server: answered a read of " << request->arguments.size()
              << " arguments (exit " << *code << ") in " << us << " us\n";
  }
}

}  // namespace sessiondb::cli
