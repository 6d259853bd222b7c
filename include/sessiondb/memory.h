// The agents' code memory: every code write an agent made (file, old and new
// code, language, session, project, time), kept once, recalled when a similar
// file is about to be written, and counted per file and per function (churn)
// so an agent is warned before it edits the same function a fourth time. The
// Claude Code hook (`sessiondb hook claude-code`) is built on this. See
// docs/memory.md.
//
// Lives in the store's database (either backend, in the Store's namespace),
// next to the search index (code writes are searchable like messages). Thread-safety: none; one
// CodeMemory per thread. Many processes may use one store at once (hooks run in parallel): each
// call is its own transaction.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/search.h"
#include "sessiondb/status.h"

namespace sessiondb {

struct CodeWrite {
  std::string file_path;
  std::string old_code;  // the previous file (whole_file) or the replaced fragment
  std::string new_code;  // the whole file (whole_file) or the new fragment
  bool whole_file = true;
  // For a fragment: the whole file after the edit when known, to find the
  // function the fragment is in.
  std::string file_context;
  std::string language;  // empty: from the file's extension
  std::string session_id;
  std::string project;
  std::string tool;     // "Write", "Edit", "apply_patch"...
  int64_t time_ms = 0;  // 0: now
};

struct RecordedWrite {
  bool recorded = false;  // false: the same write (path, old, new) was already kept
  int64_t code_id = 0;
  std::vector<std::string> functions;  // the functions it touched
};

struct RecalledCode {
  std::string file_path;
  std::string preview;  // at most 400 bytes of the code, cut cleanly, "... (truncated)"
  std::string session_id;
  std::string project;
  int64_t time_ms = 0;
  int64_t code_id = 0;
  double score = 0;
};

// How settled a file or function is, by how often the agents rewrote it:
// gold 0-2 edits in 30 days, silver 3-10, bronze 11-20, red more than 20 or 5
// or more in 24 hours.
enum class ChurnTier { kGold, kSilver, kBronze, kRed };
// "gold", "silver", "bronze", "red": what the CLI, the HTTP API and MCP print.
std::string_view ChurnTierName(ChurnTier tier);
// kInvalidArgument naming every tier for a name that is none of them.
Result<ChurnTier> ParseChurnTier(std::string_view name);

struct ChurnEntry {
  std::string file_path;
  std::string function;  // empty: the file as a whole
  int64_t edits_24h = 0;
  int64_t edits_30d = 0;
  ChurnTier tier = ChurnTier::kGold;
};

struct ChurnWarning {
  std::string file_path;
  std::string function;  // empty: about the file
  std::string message;
};

struct ChurnQuery {
  std::string path_prefix;  // only files under it
  bool functions = false;   // per function instead of per file
  int limit = 20;
};

struct HistoryScan {
  int64_t tool_calls_scanned = 0;
  int64_t writes_found = 0;
  int64_t writes_recorded = 0;  // new to the memory
  // File versions (code checkpoints) the calls gave: whole-file writes, and
  // edits applied to a version already known (docs/memory.md).
  int64_t file_versions = 0;
};

struct MemoryOptions {
  SearchOptions search;
  // Milliseconds since the Unix epoch; tests inject a fake clock.
  std::function<int64_t()> clock;
  // Hook "seen" keys kept; the oldest are dropped past this.
  int64_t seen_capacity = 1000;
  // Open(Store&) only: the memory works on the Store's own connection instead
  // of a second one of its own (embedded stores; PostgreSQL ignores it). For
  // a caller that uses the memory and the Store from one thread at a time,
  // never both at once: a short process such as the Claude Code hook, which
  // then opens the database and reads its schema once. Left false, the
  // memory's writes take no lock of the Store's and may run beside them.
  bool share_store_connection = false;
};

class CodeMemory {
 public:
  // The code memory of `store` (either backend), in its namespace. It must
  // not outlive `store`.
  static Result<std::unique_ptr<CodeMemory>> Open(Store& store, const MemoryOptions& options = {});
  // Opens the store at `store_path` (a directory or a postgresql:// URI); the
  // memory owns that Store. kNotFound if there is no store there.
  static Result<std::unique_ptr<CodeMemory>> Open(const std::string& store_path,
                                                  const MemoryOptions& options = {});
  virtual ~CodeMemory() = default;

  // Keeps the write (once) and counts an edit of the file and of each function
  // it touched. kInvalidArgument for an empty path or empty new code.
  virtual Result<RecordedWrite> RecordWrite(const CodeWrite& write) = 0;

  // Past writes most like `code` for `file_path`: at most `limit` (1..3 is
  // what a hook shows), one per file, best first.
  virtual Result<std::vector<RecalledCode>> Recall(std::string_view file_path,
                                                   std::string_view code, int limit = 3) = 0;

  // Files (or functions) by edits in the last 30 days, most first.
  virtual Result<std::vector<ChurnEntry>> Hotspots(const ChurnQuery& query) = 0;
  virtual Result<ChurnEntry> FileChurn(std::string_view file_path) = 0;
  // What an agent should hear before making `upcoming`: its functions that
  // this write would edit a 3rd time (or more) in 24 hours, and the file when
  // it is Red.
  virtual Result<std::vector<ChurnWarning>> Warnings(const CodeWrite& upcoming) = 0;

  // True the first time `key` is seen (then remembered), false after. Safe
  // when hooks race: exactly one caller gets true.
  virtual Result<bool> FirstSighting(std::string_view key) = 0;

  // Code writes in the store's history (Claude Code Write/Edit/MultiEdit tool
  // calls, Codex apply_patch) become memory; already-kept ones are skipped.
  // Reads only the events stored since its last call.
  virtual Result<HistoryScan> LearnFromHistory(const ProgressFn& progress = {}) = 0;
};

// ---- The Claude Code hook -------------------------------------------------
//
// The Claude Code hook protocol (https://docs.anthropic.com/en/docs/claude-code/hooks):
// one event as JSON on stdin, an optional JSON answer on stdout.
//   PostToolUse on Write/Edit/MultiEdit: the write is kept in the code memory.
//   PreToolUse on Write/Edit/MultiEdit: similar past code and churn warnings
//     are found; the first time this write is seen (by the seen-key mode) it
//     is denied with them as the reason, so the agent reads them; the retry
//     passes. With nothing to say, or on any error, the hook stays silent,
//     which lets Claude Code go on as it would without the hook: a hook never
//     blocks the agent because sessiondb failed.
// With checkpoints (a Store given), first, whatever the answer:
//   PreToolUse / PostToolUse on Write/Edit/MultiEdit/NotebookEdit: the named
//     file as it is on disk is kept as a FileVersion "before" / "after" the
//     call (source "hook"; no file: exists = false).
//   PostToolUse on any other tool (Bash...): each file of the session whose
//     content changed on disk since its latest version is kept "after" this
//     call (source "shell"). See src/memory/hook_checkpoints.h.

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
// be opened): then the answer is silent too. `checkpoints`, when not null,
// is the store the file versions are kept in (the one `memory` is of); null
// keeps none (`hook claude-code --no-checkpoints`).
HookAnswer HandleClaudeCodeHook(std::string_view event_json, CodeMemory* memory, SeenKeyMode mode,
                                Store* checkpoints = nullptr);

// The settings.json fragment that installs the hook, for `command` (the
// sessiondb binary, with any --store flag); with `resident`, the hook's
// command ends in `--resident` (a resident hook server answers its calls).
std::string ClaudeCodeHookSettings(std::string_view command, bool resident = false);

}  // namespace sessiondb
