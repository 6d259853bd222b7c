#include "cli/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sessiondb::cli {
namespace {

constexpr size_t kMaxPassedFds = 4;

sockaddr_un UnixAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), std::min(path.size() + 1, sizeof(address.sun_path)));
  address.sun_path[sizeof(address.sun_path) - 1] = '\0';
  return address;
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

bool WaitFor(int fd, short events, SocketClock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SocketClock::now())
            .count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 60'000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

bool WriteAll(int fd, std::string_view bytes, SocketClock::time_point deadline) {
  while (!bytes.empty()) {
    if (!WaitFor(fd, POLLOUT, deadline)) return false;
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool ReadExact(int fd, size_t size, SocketClock::time_point deadline, std::string* out) {
  out->clear();
  char buffer[64 * 1024];
  while (out->size() < size) {
    if (!WaitFor(fd, POLLIN, deadline)) return false;
    const size_t want = std::min(sizeof(buffer), size - out->size());
    const ssize_t n = recv(fd, buffer, want, MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    out->append(buffer, static_cast<size_t>(n));
  }
  return true;
}

bool ReadLine(int fd, SocketClock::time_point deadline, std::string* line) {
  std::vector<Fd> none;
  return ReadLineWithFds(fd, deadline, line, &none) && none.empty();
}

std::optional<size_t> TakeSize(std::string_view* text, size_t max) {
  size_t value = 0;
  size_t digits = 0;
  while (digits < text->size() && (*text)[digits] >= '0' && (*text)[digits] <= '9') {
    value = value * 10 + static_cast<size_t>((*text)[digits] - '0');
    if (value > max) return std::nullopt;
    ++digits;
  }
  if (digits == 0 || digits > 19) return std::nullopt;
  text->remove_prefix(digits);
  if (!text->empty() && (*text)[0] == ' ') text->remove_prefix(1);
  return value;
}

Result<Fd> ConnectUnix(const std::string& path) {
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Err(Status::Io(std::string("socket: ") + std::strerror(errno)));
  sockaddr_un address = UnixAddress(path);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    return Err(Status::NotFound(std::strerror(errno)));
  }
  return fd;
}

Result<Fd> ListenUnix(const std::string& path) {
  Fd listener(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address = UnixAddress(path);
  const mode_t old_mask = umask(077);
  const int bound = listener.get() < 0 ? -1
                                       : bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
                                              sizeof(address));
  umask(old_mask);
  if (bound != 0 || listen(listener.get(), 64) != 0) {
    return Err(Status::Io("cannot listen at " + path + ": " + std::strerror(errno)));
  }
  return listener;
}

bool SendLineWithFds(int fd, std::string_view line, const std::vector<int>& fds,
                     SocketClock::time_point deadline) {
  if (line.empty() || fds.size() > kMaxPassedFds) return false;
  if (!fds.empty()) {
    if (!WaitFor(fd, POLLOUT, deadline)) return false;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
    char first = line[0];
    iovec io{&first, 1};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
    ssize_t n;
    do {
      n = sendmsg(fd, &message, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n != 1) return false;
    line.remove_prefix(1);
  }
  return WriteAll(fd, line, deadline);
}

bool ReadLineWithFds(int fd, SocketClock::time_point deadline, std::string* line,
                     std::vector<Fd>* fds) {
  line->clear();
  fds->clear();
  while (line->size() <= kMaxSocketLine) {
    if (!WaitFor(fd, POLLIN, deadline)) return false;
    char c = 0;
    iovec io{&c, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)] = {};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t n = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    // Descriptors are kept (and closed by their Fd) before anything is judged.
    bool too_many = (message.msg_flags & MSG_CTRUNC) != 0;
    for (cmsghdr* h = CMSG_FIRSTHDR(&message); n > 0 && h != nullptr;
         h = CMSG_NXTHDR(&message, h)) {
      if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int passed = -1;
        std::memcpy(&passed, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
        fds->emplace_back(passed);
      }
    }
    if (n <= 0 || too_many || fds->size() > kMaxPassedFds) return false;
    if (c == '\n') return true;
    *line += c;
  }
  return false;
}

}  // namespace sessiondb::cli
