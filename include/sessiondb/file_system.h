// The file-system seam: every file sessiondb writes outside its database (the
// blob folder of an embedded store, the saved vector index) is written
// through a FileSystem given in StoreOptions, so tests can inject ENOSPC, EIO,
// a failing fsync or a crash between any two writes
// (tests/durability/fault_injection_test.cc). The database itself is written
// by SQLite or PostgreSQL. FileSystem::Default() is POSIX.
//
// Thread-safety: implementations must allow concurrent calls (blobs are
// written by several threads at once); one WritableFile is used by one thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb {

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Writes all of `bytes` at the end of the file.
  virtual Status Append(std::string_view bytes) = 0;
  // Makes what was appended (and the size) durable: fdatasync.
  virtual Status Sync() = 0;
  // A hint, no promise: start writing what was appended to the disk now, so
  // a later Sync has less to wait for. Nothing is durable until Sync returns.
  virtual void StartSync() {}
  // Closes it; further calls fail. The destructor closes without a status.
  virtual Status Close() = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // A new file at `path`, open for writing with permission bits `mode`:
  // kAlreadyExists when it exists and `exclusive`, else it is emptied.
  virtual Result<std::unique_ptr<WritableFile>> Create(const std::string& path, bool exclusive,
                                                       int mode) = 0;
  // Renames `from` over `to` atomically (rename(2)).
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Removes a file; OK when it is already gone.
  virtual Status Remove(const std::string& path) = 0;
  // Creates the directory (not its parents) with permission bits `mode`
  // (a store's folders are 0700); OK when it exists, whatever its mode.
  virtual Status CreateDirectory(const std::string& path, int mode) = 0;
  // The same with mode 0755 (less the umask): a folder of the user's, such
  // as an export's.
  Status CreateDirectory(const std::string& path) { return CreateDirectory(path, 0755); }
  // Makes the names created, renamed or removed in the directory durable.
  virtual Status SyncDirectory(const std::string& path) = 0;

  // The process's real file system (POSIX calls). Never null, never freed.
  static FileSystem* Default();
};

}  // namespace sessiondb
