#include "memory/hook_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sessiondb::memory {
namespace {

HookFile Refused(std::string why) {
  HookFile f;
  f.kind = HookFile::Kind::kRefused;
  f.why = std::move(why);
  return f;
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace

HookFile ReadFileForHook(const std::string& path, int64_t max_bytes,
                         std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return {};
    if (errno == ELOOP) return Refused(path + " is a symbolic link; the hook does not follow it");
    return Refused("cannot open " + path + ": " + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) return Refused("cannot stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    return Refused(path + " is " + KindOf(st.st_mode) + ", not a regular file");
  }
  if (st.st_size > max_bytes) {
    return Refused(path + " holds " + std::to_string(st.st_size) +
                   " bytes; the hook reads files of at most " + std::to_string(max_bytes));
  }
  HookFile f;
  f.kind = HookFile::Kind::kRead;
  f.text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Refused("reading " + path + " took longer than the hook's " +
                     std::to_string(budget.count()) + " ms");
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Refused("cannot read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    if (static_cast<int64_t>(f.text.size()) + n > max_bytes) {
      return Refused(path + " grew past " + std::to_string(max_bytes) +
                     " bytes while the hook read it");
    }
    f.text.append(buf, static_cast<size_t>(n));
  }
  return f;
}

}  // namespace sessiondb::memory
