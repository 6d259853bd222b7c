// Reading the file a hooked tool call names, without letting that file hang
// the agent. Claude Code waits for the hook before every Write/Edit, and the
// file_path comes from the model: /dev/zero reads forever, a FIFO blocks the
// open forever, a directory or a device is not code. Only a regular file, of
// at most kMaxHookFileBytes, read within kHookFileBudget, is read; the hook
// lets the call go on anything else (docs/memory.md).
// Thread-safety: pure functions (they read the file system).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sessiondb::memory {

// The largest file the hook reads for context (source files are far
// smaller; a bigger one is data, not code to remember).
inline constexpr int64_t kMaxHookFileBytes = int64_t{4} * 1024 * 1024;
// How long reading it may take (the hook's whole budget is Claude Code's
// timeout, 10 s in the settings we install).
inline constexpr std::chrono::milliseconds kHookFileBudget{2000};

struct HookFile {
  enum class Kind {
    kRead,     // `text` holds the file
    kMissing,  // nothing there (a Write creating a new file): no old text
    kRefused,  // not something the hook reads: `why` says what it is
  };
  Kind kind = Kind::kMissing;
  std::string text;
  std::string why;
};

// Reads `path` for the hook: opened with O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC (a
// FIFO cannot block the open, a symbolic link is not followed), fstat'ed,
// and read only when it is a regular file of at most max_bytes, stopping at
// max_bytes (a file that grows while read) or when `budget` is spent.
HookFile ReadFileForHook(const std::string& path, int64_t max_bytes = kMaxHookFileBytes,
                         std::chrono::milliseconds budget = kHookFileBudget);

}  // namespace sessiondb::memory
