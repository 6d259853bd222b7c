// Small POSIX file helpers shared by what writes files outside SQLite (the
// blob folder, the saved vector index): errno-bearing errors, writes that
// survive short writes and EINTR, directory fsyncs, and a durable
// whole-file replace.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "sessiondb/file_system.h"
#include "sessiondb/status.h"

namespace sessiondb {

// An I/O error naming the path and errno; call before anything can change errno.
Status IoError(const std::string& what, const std::string& path);

// Writes all of `bytes`, continuing after short writes and EINTR.
Status WriteAll(int fd, std::string_view bytes, const std::string& path);

// fsyncs the directory `path`, so the names created in it are durable.
Status FsyncDirectory(const std::string& path);

// Replaces the file at `path` with `bytes` durably and atomically through
// `fs` (null: the real file system): written to path + ".tmp", fsynced,
// renamed over `path`, then its directory fsynced. A crash leaves the old
// file or the new one, never a half-written one. The file gets permission
// bits `mode` (0600: the files sessiondb replaces are a store's, private).
Status ReplaceFileDurably(const std::string& path, std::string_view bytes, FileSystem* fs = nullptr,
                          int mode = 0600);

// True when `inner` is `outer` or below it, comparing whole components (so
// /data/allowed-not is not inside /data/allowed). Both should be resolved
// (real) paths; the allowed-folder checks of imports and the server share it.
bool IsPathInside(const std::filesystem::path& inner, const std::filesystem::path& outer);

// Closes a file descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

}  // namespace sessiondb
