// The files a code rewind or restore reads and writes, touched safely. The
// paths come from recorded tool calls, so from a model: a rewind must never
// be steered into writing through a symbolic link, outside the path it
// names, or half a file. Every path must be absolute and normal ("/a/b", no
// ".", "..", "//" or trailing "/"); it is walked a folder at a time with
// O_NOFOLLOW from "/", so a symbolic link anywhere on it (the file or any
// parent) is refused rather than followed, and what is checked is what is
// written. A write is atomic: a temporary file in the same folder, fsynced,
// renamed over the file, the folder fsynced. Reads stop at a cap.
//
// Example:
//   ASSIGN_OR_RETURN(DiskFile now, ReadDiskFile("/src/app/a.py", kMaxFileVersionBytes));
//   RETURN_IF_ERROR(WriteDiskFile("/src/app/a.py", "print(1)\n"));
//
// Thread-safety: functions over the file system; callers racing on one path
// each see a whole file (the rename), the last one's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::memory {

// What is at a path now.
struct DiskFile {
  bool exists = false;     // false: nothing there (nor any missing parent folder)
  bool too_large = false;  // a regular file past the cap: `content` is empty
  std::string content;     // the whole file, when exists and not too_large
};

// kInvalidArgument unless `path` is absolute and normal (see above).
Status CheckCheckpointPath(std::string_view path);

// Reads the regular file at `path`, at most `max_bytes` of it (a larger one
// is too_large). kInvalidArgument for a path CheckCheckpointPath refuses;
// kFailedPrecondition when the file or a parent is a symbolic link, or the
// file is not a regular file (a folder, a FIFO, a device); kIo otherwise.
Result<DiskFile> ReadDiskFile(const std::string& path, int64_t max_bytes);

// Replaces (or creates) the file at `path` with `content`, atomically,
// keeping an existing file's permission bits (a new one gets 0666 less the
// umask) and creating missing parent folders (0777 less the umask). Errors
// as ReadDiskFile's.
Status WriteDiskFile(const std::string& path, std::string_view content);

// Removes the file at `path`; nothing to do when there is none. Errors as
// ReadDiskFile's (a symbolic link is refused, not removed).
Status RemoveDiskFile(const std::string& path);

}  // namespace sessiondb::memory
