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

Status ReplaceFileDurably(const std::string& path, std::string_view bytes, FileSystem* fs,
                          int mode) {
  if (fs == nullptr) fs = FileSystem::Default();
  const std::string temp = path + ".tmp";
  Status s = Status::Ok();
  {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                     fs->Create(temp, /*exclusive=*/false, mode));
    s = file->Append(bytes);
    if (s.ok()) s = file->Sync();
    Status closed = file->Close();
    if (s.ok()) s = closed;
  }
  if (s.ok()) s = fs->Rename(temp, path);
  if (!s.ok()) {
    (void)fs->Remove(temp);
    return s;
  }
  const size_t slash = path.rfind('/');
  return fs->SyncDirectory(slash == std::string::npos ? "."
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
