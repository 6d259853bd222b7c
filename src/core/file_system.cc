// FileSystem::Default: the POSIX calls, with errno in every error, short
// writes and EINTR handled (core/file_io).
#include "sessiondb/file_system.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file_io.h"

namespace sessiondb {
namespace {

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view bytes) override {
    if (fd_ < 0) return Status::Io("cannot write " + path_ + ": it is closed");
    return WriteAll(fd_, bytes, path_);
  }

  Status Sync() override {
    if (fd_ < 0) return Status::Io("cannot fsync " + path_ + ": it is closed");
    // fdatasync also persists the size, all a reader of a new file needs.
    while (::fdatasync(fd_) != 0) {
      if (errno != EINTR) return IoError("cannot fsync", path_);
    }
    return Status::Ok();
  }

  void StartSync() override {
#ifdef __linux__
    // Queues the dirty pages for writeback without waiting; an error here
    // shows again at Sync, which is what the caller checks.
    if (fd_ >= 0) (void)::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    const int fd = fd_;
    fd_ = -1;
    // close() after EINTR must not be retried on Linux: the descriptor is gone.
    if (::close(fd) != 0 && errno != EINTR) return IoError("cannot close", path_);
    return Status::Ok();
  }

 private:
  int fd_;
  const std::string path_;
};

class PosixFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> Create(const std::string& path, bool exclusive,
                                               int mode) override {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
    const int fd = ::open(path.c_str(), flags, mode);
    if (fd < 0) {
      if (errno == EEXIST) return Err(Status::AlreadyExists(path + " exists"));
      return Err(IoError("cannot create", path));
    }
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path));
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return IoError("cannot rename into place", to);
    return Status::Ok();
  }

  Status Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return IoError("cannot remove", path);
    return Status::Ok();
  }

  Status CreateDirectory(const std::string& path, int mode) override {
    if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) != 0 && errno != EEXIST)
      return IoError("cannot create", path);
    return Status::Ok();
  }

  Status SyncDirectory(const std::string& path) override { return FsyncDirectory(path); }
};

}  // namespace

FileSystem* FileSystem::Default() {
  static PosixFileSystem* const instance = new PosixFileSystem();  // never destroyed
  return instance;
}

}  // namespace sessiondb
