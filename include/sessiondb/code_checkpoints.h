// Code checkpoints put to use: a file version (Store::RecordFileVersion) is
// placed in its conversation, and from there a session's code is rewound
// with it (`sessiondb rewind --code`), a file's versions listed
// (`file-history`) and one written back (`restore`), and each line of a file
// traced to the tool call that last wrote it (`blame`). See docs/memory.md.
//
// Which versions a store session S owns: those whose agent_session is S's id
// or the "source_session_id" of S's metadata (what an imported Claude Code
// session carries). Where a version sits in S (its seq): the message of S's
// whole log (rewound-away events included) holding the tool call with the
// version's tool_use_id; else the last event at or before the version's time.
//
// Files are touched through memory/checkpoint_files: absolute normal paths
// only, never through a symbolic link, written atomically. A file whose
// content on disk is not what the last recorded write left there was changed
// by someone else since: it is a conflict, written only when forced.
//
// Example:
//   ASSIGN_OR_RETURN(CodeRewindPlan plan, PlanCodeRewind(*store, session_id, 12));
//   if (plan.HasConflict() && !force) ... list them, change nothing
//   RETURN_IF_ERROR(ApplyFileRestores(plan.files, force));
//   store->Rewind(session_id, 12);  // the conversation, after the files
//
// Thread-safety: functions over a Store (one thread's) and the file system.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"

namespace sessiondb {

// A file version and where it sits in a stored conversation.
struct PlacedFileVersion {
  FileVersion version;
  std::string session_id;  // the store session holding its conversation; empty: none known
  int64_t seq = 0;         // its seq there (0: before the first event, or no session)
};

// What restoring a file does to it.
enum class FileRestoreAction {
  kRestore,    // writes the version's content
  kRemove,     // removes the file (the version is "no file": the agent created it)
  kUnchanged,  // the file on disk is already the version's content
  kUnknown,    // no version says what it was: left as it is
};
// "restore", "remove", "unchanged", "unknown".
std::string_view FileRestoreActionName(FileRestoreAction action);

// One file of a rewind or a restore, planned against the file on disk now.
struct FileRestore {
  std::string file_path;
  FileRestoreAction action = FileRestoreAction::kUnknown;
  int64_t version_id = 0;  // the version whose content is restored (0: none)
  // What the file becomes (for kRestore) and what it is now.
  std::string restored_content;
  bool disk_exists = false;
  bool disk_too_large = false;  // past kMaxFileVersionBytes: not read
  std::string disk_content;
  // Why the file may be written only with force (it changed since the
  // agent's last write), or empty.
  std::string conflict;
  // Why it can never be written (a symbolic link on its path, not a regular
  // file, unreadable), or empty.
  std::string refused;
  bool done = false;  // set by ApplyFileRestores once written or removed
};

struct CodeRewindPlan {
  std::string session_id;
  // The agent session its versions are recorded under: the session's
  // "source_session_id", else its id (where RecordFileRestores records).
  std::string agent_session;
  int64_t to_seq = 0;
  std::vector<FileRestore> files;  // every file the undone versions touch, by path
  bool HasConflict() const;
  bool HasRefusal() const;
};

// The file `typed` names, absolute and normal against `cwd` (the rule of
// the recorded paths; a relative path with no absolute cwd stays relative).
std::string CheckpointFilePath(std::string_view typed, std::string_view cwd);

// The store sessions whose conversation holds `agent_session`'s tool calls:
// those carrying it as "source_session_id", then the session with that id;
// at most 50, main lines (no "forked_from") first.
Result<std::vector<Session>> StoreSessionsOfAgent(Store& store, std::string_view agent_session);

// The versions `session_id` owns, in id order, each placed in it.
// kNotFound for a missing session.
Result<std::vector<PlacedFileVersion>> SessionFileVersions(Store& store,
                                                           std::string_view session_id);

// What rewinding `session_id`'s code to `to_seq` does: the agent's versions
// it owns with a seq past to_seq are undone; each file they touch (and each
// file an earlier rewind or restore of it wrote) goes back to the "before"
// version of its earliest undone call, else to its agent's latest "after"
// version at or before to_seq, else is unknown and left as it is ("no
// file": removed). A file whose disk state differs from its latest recorded
// "after" version (of any session; of any phase when it has none) is a
// conflict. Changes nothing. kNotFound for a missing session,
// kInvalidArgument for a to_seq outside 0..last_seq.
Result<CodeRewindPlan> PlanCodeRewind(Store& store, std::string_view session_id, int64_t to_seq);

// Whether `files` may be written: kFailedPrecondition when one that would
// be written or removed is refused, or has a conflict and `force` is false
// (the message names them and says to use --force); OK otherwise.
Status CheckFileRestores(const std::vector<FileRestore>& files, bool force);

// Writes or removes each kRestore / kRemove file of `files`, in order,
// setting `done`, after CheckFileRestores (its error, and nothing written,
// when it refuses). Each file is read again first: one that changed since
// it was planned stops the run (kFailedPrecondition). Stops at the first
// write that fails and returns its error; those before it stay written.
Status ApplyFileRestores(std::vector<FileRestore>& files, bool force);

// Records what ApplyFileRestores did to each file it wrote or removed (its
// `done` ones), as one tool call of `tool` ("rewind", "restore") with source
// kCheckpointRestoreSource under `agent_session`: a "before" version (the file as it was,
// when it was read whole) and an "after" one (what it is now). The disk then
// matches the last recorded write again, so a later rewind or restore does
// not take sessiondb's own write for someone else's, and file-history shows
// it. Errors as Store::RecordFileVersion's; a read-only store records nothing.
Status RecordFileRestores(Store& store, const std::vector<FileRestore>& files,
                          std::string_view agent_session, std::string_view tool);

// The unified diff from the file as it is on disk to what `file` makes it
// (empty when nothing changes), at most `max_lines` lines.
std::string FileRestoreDiff(const FileRestore& file, size_t max_lines = 400);

// One "after" version of a file, as file-history lists it.
struct FileHistoryEntry {
  int64_t number = 0;  // 1..N in id order
  PlacedFileVersion placed;
  // The text of the last user message at or before its seq in its session
  // (at most 200 characters), or empty.
  std::string prompt;
  // The unified diff from the previous entry (the first: from the "before"
  // version of its call, else from no file); empty when not asked for.
  std::string diff;
};

// Every "after" version of `file_path` (absolute and normal), across
// sessions. With diffs, each capped at `diff_lines` lines.
// kInvalidArgument for a path CheckCheckpointPath refuses.
Result<std::vector<FileHistoryEntry>> ReadFileHistory(Store& store, std::string_view file_path,
                                                      bool with_diffs, size_t diff_lines = 400);

// What writing back version `number` (1..N, as ReadFileHistory numbers
// them) of `file_path` does. kNotFound for a number out of range.
Result<FileRestore> PlanFileRestore(Store& store, std::string_view file_path, int64_t number);

// One line of a file and who wrote it.
struct BlameLine {
  int64_t line = 0;                     // 1-based
  std::string text;                     // without its newline
  std::optional<PlacedFileVersion> by;  // the version that last wrote it; empty: not an agent
};

// Each line of the file at `file_path` now, with the version that last
// wrote it. The versions are replayed in id order over a model of the file:
// a "before" version that differs from the model is an outside change (its
// new lines are no agent's); an "after" version's new and changed lines
// (an LCS line diff) are its own, except that sessiondb's own write of an
// earlier content (a rewind, a restore) gives the lines back to the calls
// that wrote them; the file on disk is compared last (lines only there are
// no agent's). kNotFound when there is no file; kInvalidArgument
// and kFailedPrecondition as ReadDiskFile's.
Result<std::vector<BlameLine>> BlameFile(Store& store, std::string_view file_path);

}  // namespace sessiondb
