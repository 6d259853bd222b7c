// The Claude Code hook's code checkpoints (docs/memory.md, "What the hook
// keeps"): the content of the file a Write, Edit, MultiEdit or NotebookEdit
// call names, as it is on disk before the call (PreToolUse) and after it
// (PostToolUse), and, after any other call (Bash...), every file of the
// agent's session whose content changed on disk since its last recorded
// version: what a shell command wrote, which no tool input names.
//
// Each file is read with ReadFileForHook (regular files only, never through
// a symbolic link, at most 4 MiB within 2 s); one it refuses is not recorded
// and the call goes on. Content is kept by digest (Store::RecordFileVersion),
// so an unchanged file costs a read and a SHA-256. Nothing here fails the
// hook: every outcome, errors included, is a log line.
//
// Example:
//   HookToolCall call{.agent_session = "s1", .tool_use_id = "toolu_1", .tool = "Edit",
//                     .cwd = "/home/dev/app"};
//   std::string log = RecordToolCallFile(*store, call, "src/app.py", FileVersionPhase::kBefore);
//
// Thread-safety: functions over a Store (one thread's) and the file system;
// hooks running in parallel each record their own versions (a version is
// kept once per session, call, path and phase).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "memory/hook_file.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"

namespace sessiondb::memory {

// The most files a shell check reads: the session's most recently recorded.
inline constexpr int64_t kMaxShellCheckedFiles = 200;
// How long a shell check may spend reading files, all of them together.
inline constexpr std::chrono::milliseconds kShellCheckBudget{2000};
// The most of a session's version rows a shell check reads to find each
// file's latest (its cost grows with the session's versions).
inline constexpr int64_t kMaxShellCheckedVersions = 100000;

// The tool call an event is about.
struct HookToolCall {
  std::string agent_session;  // Claude Code's session_id
  std::string tool_use_id;    // "" when the event has none
  std::string tool;           // tool_name
  std::string cwd;            // the agent's working folder, against which paths resolve
};

// True for the tools whose input names the one file they write: Write,
// Edit, MultiEdit (file_path) and NotebookEdit (notebook_path).
bool IsFileWritingTool(std::string_view tool);

// Records `typed_path` (as the tool input names it, resolved against
// call.cwd) as it is on disk now, in `phase`, with source "hook". When
// `read` is not null it receives the file as read (for the code memory,
// which then need not read it again). Returns the log line.
std::string RecordToolCallFile(Store& store, const HookToolCall& call, std::string_view typed_path,
                               FileVersionPhase phase, HookFile* read = nullptr);

// After a call of a tool that is not file-writing (Bash...): every file the
// session has versions of (the kMaxShellCheckedFiles most recently
// recorded) is read, and one whose digest or existence differs from its
// latest version is recorded as an "after" version of this call, with
// source "shell". Returns the log line.
std::string RecordShellChanges(Store& store, const HookToolCall& call);

}  // namespace sessiondb::memory
