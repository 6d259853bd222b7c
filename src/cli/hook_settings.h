// The sessiondb entries of a Claude Code settings file (JSON), added and
// removed as edits of its text: every byte outside what is added or removed
// stays as it was, so a person's own hooks, keys, order, spacing and comments
// in strings are untouched, and `hook uninstall` after `hook install` gives
// back the file as it was before.
//
// An entry is ours when it is an object whose "matcher" is
// "Write|Edit|MultiEdit" and whose "hooks" hold exactly one command ending in
// " hook claude-code" (or " hook claude-code --resident") whose program is a
// file named `sessiondb`: what any `sessiondb hook install claude-code` wrote.
// Only hooks.PreToolUse and hooks.PostToolUse are looked at.
//
// Example:
//   ASSIGN_OR_RETURN(SettingsEdit edit, InstallHookEntries(text, ours["hooks"]));
//   // write edit.text to the file; edit.removed earlier entries were replaced
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::cli {

// The largest settings file read; a larger one is refused, not changed.
inline constexpr size_t kMaxSettingsBytes = size_t{4} * 1024 * 1024;

// The hook events an entry is installed under.
inline constexpr const char* kHookEvents[] = {"PreToolUse", "PostToolUse"};

struct SettingsEdit {
  std::string text;  // the whole new settings text
  int removed = 0;   // our entries taken out (install: earlier ones it replaced)
};

// True if `entry` is one of ours (see above).
bool IsSessiondbHookEntry(const nlohmann::json& entry);

// `settings` (a JSON object's text) with our entries removed from
// hooks.PreToolUse and hooks.PostToolUse and each event's first entry of
// `entries` (ClaudeCodeHookSettings' "hooks" object) appended to its array,
// creating the arrays and "hooks" when missing.
// kInvalidArgument if the text is not one JSON object within ParseJson's
// depth, or "hooks" or one of the arrays has another type.
Result<SettingsEdit> InstallHookEntries(std::string_view settings, const nlohmann::json& entries);

// `settings` with our entries removed; an event array left empty by that is
// removed, and then "hooks" if that left it empty. Same errors as above.
Result<SettingsEdit> RemoveHookEntries(std::string_view settings);

}  // namespace sessiondb::cli
