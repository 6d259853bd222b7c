// The few socket calls the resident server (hook_server.h) and the commands
// that ask it share: a descriptor that closes itself, reads and writes with
// a deadline, a line of at most kMaxSocketLine bytes, a decimal length, and
// descriptors passed along with bytes (SCM_RIGHTS). Everything read is
// capped while reading: a peer that lies about a length costs no more than
// what it sent.
//
// Example:
//   auto fd = ConnectUnix("/run/user/1000/sessiondb-1000/hook-ab.sock");
//   if (fd && WriteAll(fd->get(), "hello\n", deadline)) ...
//
// Thread-safety: the functions hold no state; one descriptor per thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/status.h"

namespace sessiondb::cli {

using SocketClock = std::chrono::steady_clock;

// The longest line ReadLine takes (without its newline).
inline constexpr size_t kMaxSocketLine = 128;

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&& other) noexcept;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT) or `deadline` passes.
bool WaitFor(int fd, short events, SocketClock::time_point deadline);

// Sends all of `bytes` by `deadline`; false when the peer left or was too slow.
bool WriteAll(int fd, std::string_view bytes, SocketClock::time_point deadline);

// Reads exactly `size` bytes into `*out` (allocated as they arrive).
bool ReadExact(int fd, size_t size, SocketClock::time_point deadline, std::string* out);

// Reads one line of at most kMaxSocketLine bytes, byte by byte (what follows
// stays in the socket), without its newline.
bool ReadLine(int fd, SocketClock::time_point deadline, std::string* line);

// The decimal at the start of `*text` (at most `max`, at most 19 digits),
// moved past it and one following space.
std::optional<size_t> TakeSize(std::string_view* text, size_t max);

// A connected stream socket to the Unix socket at `path` (shorter than
// sockaddr_un's path); kNotFound with the reason when none listens.
Result<Fd> ConnectUnix(const std::string& path);

// A socket listening at `path` (made with mode 0600, at most 64 waiting).
Result<Fd> ListenUnix(const std::string& path);

// Sends `line` (which ends with '\n') and, with its first byte, the
// descriptors `fds` (at most 4).
bool SendLineWithFds(int fd, std::string_view line, const std::vector<int>& fds,
                     SocketClock::time_point deadline);

// Reads one line (as ReadLine) and the descriptors that came with it (at
// most 4; more are closed and the read fails).
bool ReadLineWithFds(int fd, SocketClock::time_point deadline, std::string* line,
                     std::vector<Fd>* fds);

}  // namespace sessiondb::cli
