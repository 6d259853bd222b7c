// The Claude Code hook protocol (https://docs.anthropic.com/en/docs/claude-code/hooks):
// one event as JSON on stdin, an optional JSON answer on stdout.
//   PostToolUse on Write/Edit/MultiEdit: the write is kept in the code memory.
//   PreToolUse on Write/Edit/MultiEdit: similar past code and churn warnings
//     are found; the first time this write is seen (by the seen-key mode) it
//     is denied with them as the reason, so the agent reads them; the retry
//     passes. With nothing to say, or on any error, the hook stays silent,
//     which lets Claude Code go on as it would without the hook: a hook never
//     blocks the agent because sessiondb failed.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include "sessiondb/memory.h"

namespace sessiondb::memory {

enum class SeenKeyMode {
  kFile,         // once per file
  kContent,      // once per file and content (each distinct change shown once)
  kSessionFile,  // once per session and file
};
// "file", "content", "session-file"; kInvalidArgument otherwise.
Result<SeenKeyMode> ParseSeenKeyMode(std::string_view name);

struct HookAnswer {
  std::string stdout_text;  // what to print (empty: nothing, the agent goes on)
  std::string log;          // what happened, for stderr / the log; errors included
};

// The largest hook event read from stdin. Claude Code's events carry the
// tool call (a Write's whole content); 4 MiB is well past any source file.
inline constexpr size_t kMaxHookEventBytes = size_t{4} * 1024 * 1024;

// Reads one event from `in` (to its end), holding at most kMaxHookEventBytes
// of it: nullopt (with *why) for a longer one, which is never buffered.
std::optional<std::string> ReadHookEvent(std::istream& in, std::string* why);

// Handles one event. Never fails: errors are described in `log` and the
// answer lets the tool call go on. `memory` may be null (the store could not
// be opened): then the answer is silent too.
HookAnswer HandleClaudeCodeHook(std::string_view event_json, CodeMemory* memory,
                                SeenKeyMode mode);

// The settings.json fragment that installs the hook, for `command` (the
// sessiondb binary, with any --store flag).
std::string ClaudeCodeHookSettings(std::string_view command);

}  // namespace sessiondb::memory
