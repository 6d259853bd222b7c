#include "cli/hook_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include "cli/hook_command.h"
#include "cli/served_reads.h"
#include "cli/shell_words.h"
#include "cli/unix_socket.h"
#include "sessiondb/store.h"

namespace sessiondb::cli {
namespace {

namespace fs = std::filesystem;
using Clock = SocketClock;

constexpr std::string_view kGreeting = "sessiondb-hook-server 1 ";
// A greeting comes as soon as the server accepts; one busy with another
// call for longer than this is passed by (the hook answers alone).
constexpr auto kGreetingWait = std::chrono::seconds(2);
// Once its event is sent, a hook waits this long for the answer at most.
constexpr auto kAnswerWait = std::chrono::seconds(60);
constexpr size_t kMaxKeyBytes = size_t{64} * 1024;

// FNV-1a: the socket's name only has to differ between stores; the key the
// server says on each connection is what a hook checks.
std::string KeyHash(std::string_view key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string StoreKey(const CliContext& ctx) {
  std::string location = ctx.StorePath();
  if (!IsDatabaseUri(location)) {
    std::error_code ec;
    fs::path full = fs::weakly_canonical(fs::absolute(location, ec), ec);
    if (!ec) location = full.string();
  }
  const StoreOptions options = ctx.MakeStoreOptions(/*create_if_missing=*/true);
  std::string key_file = options.key_file;
  if (key_file.empty()) {
    const char* env = std::getenv("SESSIONDB_KEY_FILE");
    if (env != nullptr) key_file = env;
  }
  return location + "\n" + options.namespace_name + "\n" + key_file;
}

volatile sig_atomic_t stop_requested = 0;
void RequestStop(int) { stop_requested = 1; }

// The identity of an embedded store's database file, to notice it replaced.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

std::optional<FileIdentity> IdentityOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino};
}

// Answers one connection: the greeting, the request, the answer.
void AnswerOne(int fd, const HookServeOptions& options, const HookServerPlace& place, Store* store,
               CodeMemory* memory) {
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != geteuid()) {
    if (!options.quiet) std::cerr << "hook server: refused a process of another user\n";
    return;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(options.client_timeout_ms);
  const std::string greeting =
      std::string(kGreeting) + std::to_string(place.key.size()) + "\n" + place.key;
  if (!WriteAll(fd, greeting, deadline)) return;
  auto refuse = [&options](std::string_view why) {
    if (!options.quiet) std::cerr << "hook server: " << why << "; closed\n";
  };
  std::string line;
  if (!ReadLine(fd, deadline, &line)) {
    return refuse("no request line (of at most " + std::to_string(kMaxSocketLine) +
                  " bytes) within " + std::to_string(options.client_timeout_ms) + " ms");
  }
  std::string_view rest = line;
  if (IsReadRequestLine(rest)) {
    return AnswerReadRequest(fd, rest, deadline, store, options.quiet);
  }
  const size_t space = rest.find(' ');
  HookRequest request;
  if (space != std::string_view::npos && space > 0 && space <= 32) {
    request.seen_mode = std::string(rest.substr(0, space));
    rest.remove_prefix(space + 1);
  } else {
    rest = {};
  }
  if (rest.size() < 2 || (rest[0] != '0' && rest[0] != '1') || rest[1] != ' ') {
    return refuse("a request line that is not MODE CHECKPOINTS LENGTH");
  }
  request.checkpoints = rest[0] == '1';
  rest.remove_prefix(2);
  const std::optional<size_t> length = TakeSize(&rest, SIZE_MAX / 2);
  if (!length || !rest.empty()) return refuse("a request line whose length is not a number");
  HookAnswer answer;
  const auto started = Clock::now();
  if (*length > kMaxHookEventBytes) {
    // Said, not read: the hook shows why and the call goes on.
    answer.log = "hook: the event is " + std::to_string(*length) + " bytes; the limit is " +
                 std::to_string(kMaxHookEventBytes) + "; allowed";
  } else {
    if (!ReadExact(fd, *length, deadline, &request.event)) {
      return refuse("an event shorter than its length, or too slow");
    }
    auto seen = ParseSeenKeyMode(request.seen_mode);
    answer = HandleClaudeCodeHook(request.event, memory, seen ? *seen : SeenKeyMode::kContent,
                                  request.checkpoints ? store : nullptr);
    if (!seen) {
      answer.log = "hook: " + seen.error().message() + "; using content" +
                   (answer.log.empty() ? "" : "\n" + answer.log);
    }
  }
  const std::string head =
      std::to_string(answer.stdout_text.size()) + " " + std::to_string(answer.log.size()) + "\n";
  const auto reply_deadline = Clock::now() + std::chrono::milliseconds(options.client_timeout_ms);
  if (!WriteAll(fd, head + answer.stdout_text + answer.log, reply_deadline)) return;
  if (!options.quiet) {
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
    std::cerr << "hook server: answered a call of " << *length << " bytes in " << us << " us"
              << (answer.stdout_text.empty() ? "" : " (with context)") << "\n";
  }
}

}  // namespace

Result<HookServerPlace> HookServerPlaceFor(const CliContext& ctx, bool make_folder) {
  HookServerPlace place;
  place.key = StoreKey(ctx);
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string base = runtime != nullptr && runtime[0] == '/' ? runtime : "/tmp";
  place.folder = base + "/sessiondb-" + std::to_string(geteuid());
  const std::string stem = place.folder + "/hook-" + KeyHash(place.key);
  place.socket_path = stem + ".sock";
  place.lock_path = stem + ".lock";
  if (place.socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Err(Status::FailedPrecondition("the hook server's socket path " + place.socket_path +
                                          " is too long for a socket; set XDG_RUNTIME_DIR to a "
                                          "shorter folder"));
  }
  if (make_folder && mkdir(place.folder.c_str(), 0700) != 0 && errno != EEXIST) {
    return Err(Status::Io("cannot make " + place.folder + ": " + std::strerror(errno)));
  }
  struct stat st {};
  if (lstat(place.folder.c_str(), &st) != 0) {
    return Err(Status::NotFound("no folder " + place.folder));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Err(Status::FailedPrecondition(
        place.folder + " is not a private folder of this user (mode " + mode + ", owner " +
        std::to_string(st.st_uid) + (S_ISDIR(st.st_mode) ? "" : ", not a folder") +
        "); the hook server uses none other. Remove it, or make it yours with mode 0700"));
  }
  return place;
}

Result<Fd> ConnectToServer(const HookServerPlace& place, std::string* why) {
  why->clear();
  auto connected = ConnectUnix(place.socket_path);
  if (!connected) return Err(connected.error());  // none listens: the usual case
  const int fd = connected->get();
  std::string line;
  const auto greeting_deadline = Clock::now() + kGreetingWait;
  std::string_view rest;
  std::optional<size_t> key_size;
  if (!ReadLine(fd, greeting_deadline, &line) || line.rfind(kGreeting, 0) != 0 ||
      !(rest = std::string_view(line).substr(kGreeting.size()),
        key_size = TakeSize(&rest, kMaxKeyBytes)) ||
      !rest.empty()) {
    *why = "the hook server at " + place.socket_path + " did not greet";
    return Err(Status::Busy(*why));
  }
  std::string key;
  if (!ReadExact(fd, *key_size, greeting_deadline, &key) || key != place.key) {
    *why = "the hook server at " + place.socket_path + " serves another store";
    return Err(Status::Busy(*why));
  }
  return std::move(*connected);
}

HookServerReply AskHookServer(const HookServerPlace& place, const HookRequest& request,
                              HookAnswer* answer, std::string* why) {
  auto connected = ConnectToServer(place, why);
  if (!connected) {
    if (!why->empty()) *why += "; answered alone";
    return HookServerReply::kNoServer;
  }
  const int fd = connected->get();
  std::string line;
  std::string_view rest;
  const std::string head = request.seen_mode + " " + (request.checkpoints ? "1" : "0") + " " +
                           std::to_string(request.event.size()) + "\n";
  // A server that stops reading before the whole event cannot have answered
  // it: the hook still answers alone.
  const auto send_deadline = Clock::now() + kAnswerWait;
  if (!WriteAll(fd, head, send_deadline) || !WriteAll(fd, request.event, send_deadline)) {
    *why = "the hook server at " + place.socket_path + " took no event; answered alone";
    return HookServerReply::kNoServer;
  }
  const auto answer_deadline = Clock::now() + kAnswerWait;
  std::optional<size_t> out_size, log_size;
  if (ReadLine(fd, answer_deadline, &line)) {
    rest = line;
    out_size = TakeSize(&rest, kMaxHookAnswerBytes);
    log_size = TakeSize(&rest, kMaxHookAnswerBytes);
  }
  if (!out_size || !log_size || !rest.empty() ||
      !ReadExact(fd, *out_size, answer_deadline, &answer->stdout_text) ||
      !ReadExact(fd, *log_size, answer_deadline, &answer->log)) {
    *why = "hook: the hook server at " + place.socket_path +
           " took the event and gave no answer; allowed";
    return HookServerReply::kLostAfterSending;
  }
  return HookServerReply::kAnswered;
}

Status ServeHookCalls(CliContext& ctx, const HookServeOptions& options) {
  ASSIGN_OR_RETURN(HookServerPlace place, HookServerPlaceFor(ctx, /*make_folder=*/true));
  Fd lock(open(place.lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (lock.get() < 0) {
    return Status::Io("cannot open " + place.lock_path + ": " + std::strerror(errno));
  }
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    return Status::Busy("a hook server of this store is already running (" + place.socket_path +
                        ")");
  }
  // The lock file names the live server, for `kill $(cat ...)`.
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(lock.get(), 0) != 0 ||
      pwrite(lock.get(), pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    return Status::Io("cannot write " + place.lock_path + ": " + std::strerror(errno));
  }
  std::unique_ptr<Store> store;
  std::unique_ptr<CodeMemory> memory;
  RETURN_IF_ERROR(OpenHookStore(ctx, &store, &memory));
  const std::string location = ctx.StorePath();
  const bool embedded = !IsDatabaseUri(location);
  const std::string database = (fs::path(location) / "sessiondb.db").string();
  const std::optional<FileIdentity> opened = embedded ? IdentityOf(database) : std::nullopt;

  // The lock is held: a socket left at the path is a dead server's.
  unlink(place.socket_path.c_str());
  ASSIGN_OR_RETURN(Fd listener, ListenUnix(place.socket_path));
  const std::optional<FileIdentity> socket_identity = IdentityOf(place.socket_path);

  struct sigaction on_stop {};
  on_stop.sa_handler = RequestStop;  // no SA_RESTART: poll returns EINTR
  sigemptyset(&on_stop.sa_mask);
  sigaction(SIGTERM, &on_stop, nullptr);
  sigaction(SIGINT, &on_stop, nullptr);
  signal(SIGPIPE, SIG_IGN);
  if (!options.quiet) {
    std::cerr << "hook server: answering `hook claude-code` for " << location << " at "
              << place.socket_path;
    if (options.idle_exit_seconds > 0) {
      std::cerr << "; ends after " << options.idle_exit_seconds << " s without a call";
    }
    std::cerr << std::endl;
  }
  std::string ended = "idle";
  auto idle_until = Clock::now() + std::chrono::seconds(options.idle_exit_seconds);
  while (stop_requested == 0) {
    // A minute at most per wait: the idle limit may not fit poll's int.
    int wait_ms = 60'000;
    if (options.idle_exit_seconds > 0) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(idle_until - Clock::now()).count();
      if (left <= 0) break;  // idle
      wait_ms = static_cast<int>(std::min<int64_t>(left, wait_ms));
    }
    pollfd p{listener.get(), POLLIN, 0};
    const int r = poll(&p, 1, wait_ms);
    if (r == 0 || (r < 0 && errno == EINTR)) continue;
    if (r < 0) {
      ended = std::string("poll failed: ") + std::strerror(errno);
      break;
    }
    idle_until = Clock::now() + std::chrono::seconds(options.idle_exit_seconds);
    Fd client(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (client.get() < 0) continue;
    if (embedded && IdentityOf(database) != opened) {
      ended = "its store's database file was replaced or removed";
      break;
    }
    AnswerOne(client.get(), options, place, store.get(), memory.get());
  }
  if (stop_requested != 0) ended = "asked to stop";
  // Another server may own the path by now (this one's was removed): only
  // this socket is removed.
  if (socket_identity && IdentityOf(place.socket_path) == socket_identity) {
    unlink(place.socket_path.c_str());
  }
  if (!options.quiet) std::cerr << "hook server: ended (" << ended << ")\n";
  return Status::Ok();
}

void StartHookServer(const CliContext& ctx) {
  std::vector<std::string> args = {"sessiondb", "--store", ctx.StorePath()};
  if (!ctx.options.namespace_name.empty()) {
    args.insert(args.end(), {"--namespace", ctx.options.namespace_name});
  }
  if (!ctx.options.key_file.empty()) args.insert(args.end(), {"--key-file", ctx.options.key_file});
  args.insert(args.end(), {"hook", "serve", "--quiet"});
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) return;
  if (child == 0) {
    // A session of its own, and a second fork so it is no one's child to
    // wait for; its standard streams leave the agent's pipes at once.
    setsid();
    if (fork() != 0) _exit(0);
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    // Nothing of the hook's own (its store's files, a server connection)
    // goes on living in the server.
    close_range(3, ~0u, 0);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace sessiondb::cli
