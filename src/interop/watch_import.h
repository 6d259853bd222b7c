// The state of `sessiondb import --watch DIR` (WatchImport, interop.h): for
// each transcript under DIR, the inode, size and modification time it had
// when its last import began, so that a watch started again imports only the
// files that changed since. The inotify code itself stays in watch_import.cc.
//
// The state is a JSON file (version 1) written whole under a temporary name,
// synced and renamed into place, so a watch killed at any moment leaves the
// previous state or the new one. It is saved only after the imports it
// records are committed: a kill between the two costs a re-import of those
// files, which adds nothing (imports are idempotent), never a lost record.
//
// Thread-safety: none; the watch uses it from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sessiondb/status.h"

namespace sessiondb::interop {

// What a file was when the watch last began importing it.
struct FileMark {
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileMark&) const = default;
};

// The marks of the files of one watched folder, by path relative to it.
using WatchMarks = std::map<std::string, FileMark>;

// The state file of the watch of `dir` (its absolute, normal path) for
// `key` (the store's location) in `state_dir`:
// "<state_dir>/sessiondb.db-watch-<16 hex digits of SHA-256(key, dir)>", a
// name an embedded store's folder accepts beside its database.
std::string WatchStatePath(const std::string& state_dir, const std::string& key,
                           const std::string& dir);

// The marks saved at `path`; none when there is no file yet. kCorruption
// when the file is not a state of this version (the caller may start over).
Result<WatchMarks> LoadWatchMarks(const std::string& path, const std::string& dir);

// Writes `marks` to `path` (temporary file, fsync, rename, fsync of the
// folder). kIo naming the path when a step fails.
Status SaveWatchMarks(const std::string& path, const std::string& dir, const WatchMarks& marks);

}  // namespace sessiondb::interop
