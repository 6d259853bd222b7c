#include "core/file_io.h"

#include <errno.h>
#include <fcntl.h>

#include <cstring>

namespace sessiondb {

Status IoError(const std::string& what, const std::string& path) {
  return Status::Io(what + " " + path + ": " + std::strerror(errno));
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path);
    }
    if (n == 0) return Status::Io("cannot write " + path + ": the write made no progress");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status FsyncDirectory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open directory", path);
  FdCloser closer(fd);
  while (::fsync(fd) != 0) {
    if (errno != EINTR) return IoError("cannot fsync directory", path);
  }
  return Status::Ok();
}

Status ReplaceFileDurably(const std::string& path, std::string_view bytes) {
  const std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", temp);
  Status s = WriteAll(fd, bytes, temp);
  while (s.ok() && ::fsync(fd) != 0) {
    if (errno != EINTR) s = IoError("cannot fsync", temp);
  }
  // close() after EINTR must not be retried on Linux: the descriptor is gone.
  if (::close(fd) != 0 && s.ok() && errno != EINTR) s = IoError("cannot close", temp);
  if (s.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    s = IoError("cannot rename into place", path);
  }
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  const size_t slash = path.rfind('/');
  return FsyncDirectory(slash == std::string::npos ? "."
                        : slash == 0               ? "/"
                                                   : path.substr(0, slash));
}

bool IsPathInside(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

}  // namespace sessiondb
