#include "memory/checkpoint_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <random>

#include "core/file_io.h"
#include "memory/write_path.h"

namespace sessiondb::memory {
namespace {

// A folder held open, and the last component of the path under it.
struct OpenedParent {
  int fd = -1;
  std::string name;
  OpenedParent() = default;
  OpenedParent(OpenedParent&& o) noexcept : fd(o.fd), name(std::move(o.name)) { o.fd = -1; }
  OpenedParent& operator=(OpenedParent&&) = delete;
  ~OpenedParent() {
    if (fd >= 0) ::close(fd);
  }
};

Status CheckpointErrno(const std::string& what, const std::string& path) {
  return Status::Io(what + " " + path + ": " + std::strerror(errno));
}

// Why `name` in `dir` (which open refused with ELOOP or ENOTDIR) is not
// walked through: a link or not a folder; nullopt when it is neither (the
// caller reports errno).
std::optional<Status> RefusedEntry(int dir, const std::string& name, const std::string& shown) {
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  if (S_ISLNK(st.st_mode)) {
    return Status::FailedPrecondition(shown +
                                      " is a symbolic link; a checkpoint is never written "
                                      "through one");
  }
  if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition(shown + " is not a folder");
  return std::nullopt;
}

// Opens the folder holding `path`'s file, one component at a time from "/",
// never following a link. With `create`, missing folders are made; without,
// fd is -1 when one is missing (so the file is too).
Result<OpenedParent> OpenParent(const std::string& path, bool create) {
  RETURN_IF_ERROR(CheckCheckpointPath(path));
  OpenedParent parent;
  parent.fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent.fd < 0) return Err(CheckpointErrno("cannot open", "/"));
  size_t start = 1;
  std::string walked;
  while (true) {
    const size_t slash = path.find('/', start);
    const std::string component =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) {
      parent.name = component;
      return parent;
    }
    walked += "/" + component;
    int next =
        ::openat(parent.fd, component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT) {
      if (!create) {
        ::close(parent.fd);
        parent.fd = -1;
        return parent;
      }
      if (::mkdirat(parent.fd, component.c_str(), 0777) != 0 && errno != EEXIST) {
        return Err(CheckpointErrno("cannot create the folder", walked));
      }
      next =
          ::openat(parent.fd, component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
      const int saved = errno;
      if (saved == ELOOP || saved == ENOTDIR) {
        if (auto why = RefusedEntry(parent.fd, component, walked)) return Err(*why);
      }
      errno = saved;
      return Err(CheckpointErrno("cannot open the folder", walked));
    }
    ::close(parent.fd);
    parent.fd = next;
    start = slash + 1;
  }
}

// The file `name` in `dir` as lstat sees it: nullopt when absent; refused
// when a link or not a regular file.
Result<std::optional<struct stat>> StatRegular(int dir, const std::string& name,
                                               const std::string& path) {
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::optional<struct stat>();
    return Err(CheckpointErrno("cannot stat", path));
  }
  if (S_ISLNK(st.st_mode)) {
    return Err(Status::FailedPrecondition(
        path + " is a symbolic link; a checkpoint is never written through one"));
  }
  if (!S_ISREG(st.st_mode)) {
    return Err(Status::FailedPrecondition(path + " is not a regular file"));
  }
  return std::optional<struct stat>(st);
}

Status SyncFolder(int fd, const std::string& path) {
  while (::fsync(fd) != 0) {
    if (errno != EINTR) return CheckpointErrno("cannot fsync the folder of", path);
  }
  return Status::Ok();
}

}  // namespace

Status CheckCheckpointPath(std::string_view path) {
  const std::string shown(path.substr(0, 200));
  if (path.empty() || path.front() != '/') {
    return Status::InvalidArgument("'" + shown + "' is not an absolute path");
  }
  if (path.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("a path holds a NUL byte");
  }
  if (path.size() == 1 || ResolveWritePath(path, "") != path) {
    return Status::InvalidArgument("'" + shown +
                                   "' is not a normal path to a file (no '.', '..', '//' or "
                                   "trailing '/')");
  }
  return Status::Ok();
}

Result<DiskFile> ReadDiskFile(const std::string& path, int64_t max_bytes) {
  ASSIGN_OR_RETURN(OpenedParent parent, OpenParent(path, /*create=*/false));
  DiskFile file;
  if (parent.fd < 0) return file;
  // O_NONBLOCK: a FIFO cannot hold the open; fstat then refuses it.
  const int fd =
      ::openat(parent.fd, parent.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return file;
    if (errno == ELOOP) {
      return Err(Status::FailedPrecondition(
          path + " is a symbolic link; a checkpoint is never written through one"));
    }
    return Err(CheckpointErrno("cannot open", path));
  }
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return Err(CheckpointErrno("cannot stat", path));
  if (!S_ISREG(st.st_mode)) return Err(Status::FailedPrecondition(path + " is not a regular file"));
  file.exists = true;
  if (st.st_size > max_bytes) {
    file.too_large = true;
    return file;
  }
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Err(CheckpointErrno("cannot read", path));
    }
    if (n == 0) break;
    if (static_cast<int64_t>(file.content.size()) + n > max_bytes) {  // it grew as we read
      file.too_large = true;
      file.content.clear();
      return file;
    }
    file.content.append(buf, static_cast<size_t>(n));
  }
  return file;
}

Status WriteDiskFile(const std::string& path, std::string_view content) {
  ASSIGN_OR_RETURN(OpenedParent parent, OpenParent(path, /*create=*/true));
  ASSIGN_OR_RETURN(std::optional<struct stat> existing, StatRegular(parent.fd, parent.name, path));
  std::random_device random;
  const std::string temp = "." + parent.name.substr(0, 180) + ".sessiondb-" +
                           std::to_string(::getpid()) + "-" + std::to_string(random()) + ".tmp";
  const int fd =
      ::openat(parent.fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return CheckpointErrno("cannot create a temporary file beside", path);
  Status s = WriteAll(fd, content, path);
  if (s.ok() && existing && ::fchmod(fd, existing->st_mode & 07777) != 0) {
    s = CheckpointErrno("cannot keep the permissions of", path);
  }
  while (s.ok() && ::fsync(fd) != 0) {
    if (errno != EINTR) s = CheckpointErrno("cannot fsync", path);
  }
  ::close(fd);
  if (s.ok() && ::renameat(parent.fd, temp.c_str(), parent.fd, parent.name.c_str()) != 0) {
    s = CheckpointErrno("cannot rename the temporary file over", path);
  }
  if (!s.ok()) {
    ::unlinkat(parent.fd, temp.c_str(), 0);
    return s;
  }
  return SyncFolder(parent.fd, path);
}

Status RemoveDiskFile(const std::string& path) {
  ASSIGN_OR_RETURN(OpenedParent parent, OpenParent(path, /*create=*/false));
  if (parent.fd < 0) return Status::Ok();
  ASSIGN_OR_RETURN(std::optional<struct stat> existing, StatRegular(parent.fd, parent.name, path));
  if (!existing) return Status::Ok();
  if (::unlinkat(parent.fd, parent.name.c_str(), 0) != 0 && errno != ENOENT) {
    return CheckpointErrno("cannot remove", path);
  }
  return SyncFolder(parent.fd, path);
}

}  // namespace sessiondb::memory
