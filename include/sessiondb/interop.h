// Import and export: bring histories in from the formats users live in, take
// sessions out. See docs/interop.md for every format.
//
// Imports stream (memory bounded by the largest single record, not the
// file) and are idempotent: sessions and events get ids derived from the
// source's own ids (or a hash of the record), so importing the same source
// twice adds nothing, and importing a source that has grown adds what is new.
// History is kept as it was written: the store's count limits (images per
// message) do not apply, and an attachment over the import's byte limit is
// kept as a descriptor that says why, never failing its message.
// Bad records (a line that is not JSON, a truncated last line, a missing or
// mislabelled image, an absurdly long line) are skipped with a reason; the
// rest imports. Each session is written in runs of whole events, so an
// interrupted import leaves whole events behind and a second run completes it.
//
// Thread-safety: one call at a time per Store, like the Store itself.
//
// Example:
//   ASSIGN_OR_RETURN(ImportReport r, ImportPath(*store, "~/.claude/projects", {}));
//   ASSIGN_OR_RETURN(ExportReport e,
//                    ExportTo(*store, "chat.json",
//                             {.format = ExportFormat::kSnapshot, .sessions = {id}}));
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/file_system.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb {

inline constexpr int64_t kDefaultImportAttachmentBytes = int64_t{100} * 1024 * 1024;

// The formats an import reads (docs/interop.md), named on the CLI, in the
// HTTP API and in MCP as "snapshot", "ac-dc", "extremis", "agents-kt",
// "pixir", "claude-code", "codex", "chatgpt", "claude-ai".
enum class ImportFormat {
  kSnapshot,
  kAcdc,
  kExtremis,
  kAgentsKt,
  kPixir,
  kClaudeCode,
  kCodex,
  kChatGpt,
  kClaudeAi,
};
std::string_view ImportFormatName(ImportFormat format);
// kInvalidArgument naming every import format for a name that is none of them.
Result<ImportFormat> ParseImportFormat(std::string_view name);

// The formats an export writes: "snapshot" (one JSON document, images
// inline), "ac-dc" (a .ac-dc folder), "agents-kt" (JSON snapshots),
// "markdown" (a transcript per session with its images beside it), "jsonl"
// (a message per line, for scripts).
enum class ExportFormat { kSnapshot, kAcdc, kAgentsKt, kMarkdown, kJsonl };
std::string_view ExportFormatName(ExportFormat format);
// kInvalidArgument naming every export format for a name that is none of them.
Result<ExportFormat> ParseExportFormat(std::string_view name);

struct ImportOptions {
  // Unset: detected from the path (see DetectImportFormat).
  std::optional<ImportFormat> format;
  ProgressFn progress;  // bytes read so far, of the input's total bytes
  // When not empty, the only folders the import may read from: every file it
  // opens must resolve (symbolic links followed) inside one of them; one that
  // leads elsewhere is skipped with a reason that does not say what is
  // there. The HTTP server passes its --allow-dir folders, or an upload's
  // temporary folder. Empty (the CLI): the user's own files, all readable.
  std::vector<std::string> allowed_roots;
  // The largest image or file whose bytes an import stores: 20 times the
  // limit on an appended image, as large as an appended file. What a user
  // appends now is held to StoreOptions; history already written elsewhere
  // is kept whole, so a larger attachment keeps its descriptor (name, type,
  // size, dimensions) with the reason in Resource::not_stored, and is counted
  // in ImportReport::attachments_not_stored. Raising it raises the memory an
  // import needs by about twice the difference (one attachment read, one
  // being written).
  int64_t max_attachment_bytes = kDefaultImportAttachmentBytes;
};

// A record the import left out, and why.
struct SkippedRecord {
  std::string where;   // "history.jsonl:17", "sessions/abc.json", "images/x.png"
  std::string reason;  // what was wrong and what was expected
};

struct ImportReport {
  ImportFormat format = ImportFormat::kSnapshot;  // the format that was read
  int64_t sessions_added = 0;                     // new in the store
  int64_t sessions_extended = 0;                  // already there, and the source had more
  int64_t sessions_unchanged = 0;                 // already there in full (a re-import)
  int64_t messages_added = 0;
  int64_t images_added = 0;     // image parts stored with their bytes (not mere digests)
  int64_t records_skipped = 0;  // all of them; `skipped` lists the first 100
  std::vector<SkippedRecord> skipped;
  // Attachments over ImportOptions::max_attachment_bytes, kept as descriptors
  // without their bytes (their messages came in); `not_stored` lists the
  // first 100 with where and why.
  int64_t attachments_not_stored = 0;
  std::vector<SkippedRecord> not_stored;
  // The sessions this import added or extended, in the order it wrote them.
  std::vector<std::string> sessions_written;
  // What an import of a folder of transcripts (claude-code, codex) left out
  // whole: files it could not open and folders it could not list, each with
  // why ("permission denied"); all of them. The rest of the folder came in.
  // A file given alone that cannot be read fails the import instead.
  std::vector<SkippedRecord> files_skipped;
};

// The names of the import formats, in the order of ImportFormat.
std::vector<std::string_view> ImportFormats();

// The format of the file or folder at `path`. kNotFound if it does not exist;
// kInvalidArgument naming the formats tried when none recognises it.
Result<ImportFormat> DetectImportFormat(const std::string& path);

// Imports everything at `path` into `store`. kInvalidArgument for a path
// that is not of the format asked for (nothing is written then);
// kNotFound for a missing path. Skipped records are not errors.
Result<ImportReport> ImportPath(Store& store, const std::string& path,
                                const ImportOptions& options);

// ---- Watching a folder ------------------------------------------------------
//
// `sessiondb import --watch DIR`: Claude Code and Codex write their
// transcripts a line at a time and sweep old ones away (Claude Code after 30
// days); a watch imports each file as it grows, so the store keeps what their
// sweeps delete. See docs/interop.md, "Watching a folder".

// One file the watch imported (or could not), reported once its import is
// committed: every message it counts is in the store.
struct WatchedImport {
  std::string file;     // relative to the watched folder
  ImportReport report;  // what this import of the file added
  std::string error;    // not empty: why the file was left out; the watch goes on
};

struct WatchOptions {
  // format: claude-code or codex (unset: the folder's format when it has
  // one, else each file's own); max_attachment_bytes as for an import.
  // allowed_roots is replaced by the watched folder: nothing outside it is
  // read.
  ImportOptions import;
  // The folder of the watch's state (what it imported of each file, so a
  // restart reads only what changed), and what names it besides the
  // watched folder (the store's location). Empty state_dir: no state.
  std::string state_dir;
  std::string state_key;
  // A file is imported once it has been quiet this long after a change
  // (a file written line by line is read once per pause, not per line), or
  // at the latest 10 times this long after its first unimported change.
  int quiet_ms = 500;
  // The most folders the watch follows (one inotify watch each); a tree
  // with more ends the watch with kFailedPrecondition saying so.
  int64_t max_watched_dirs = 10000;
  // When this descriptor becomes readable (a signal handler's pipe), the
  // watch returns Ok after the import under way. -1: never.
  int stop_fd = -1;
  // Called after each file's import, from the watching thread.
  std::function<void(const WatchedImport&)> on_import;
  // Called after each round of imports (the catch-up, then each batch of
  // settled files); an error it returns ends the watch with that error.
  std::function<Status()> on_settled;
};

// Imports every transcript under `dir` that changed since the state says,
// then watches `dir` (and every folder created under it) with inotify and
// imports each transcript that changes, until options.stop_fd is readable.
// Deleted transcripts are forgotten by the state, never by the store.
// kNotFound for a missing `dir`, kInvalidArgument for one that is not a
// folder or a format other than claude-code or codex, kFailedPrecondition
// past max_watched_dirs or the system's inotify limit, kIo when the state
// cannot be written; a file that cannot be imported is reported through
// on_import and is not an error.
Status WatchImport(Store& store, const std::string& dir, const WatchOptions& options);

struct ExportOptions {
  ExportFormat format = ExportFormat::kSnapshot;
  std::vector<std::string> sessions;  // empty: every session (archived ones too)
  // Replace files an earlier export wrote (`sessiondb export --force`). Every
  // export leaves a manifest of the files it wrote and their SHA-256
  // (docs/interop.md); a file in the way is replaced only when a manifest
  // lists it and it is unchanged since. Anything else is still refused with
  // kAlreadyExists, as every file in the way is without this.
  bool replace_earlier_export = false;
  // Where the export's files are written (file_system.h): every file goes
  // in under a temporary name and is renamed into place once whole. Tests
  // inject faults here. Never null.
  FileSystem* file_system = FileSystem::Default();
};

struct ExportReport {
  int64_t sessions = 0;
  int64_t messages = 0;
  int64_t images = 0;
  std::vector<std::string> files;  // what was written, in order
};

// The names of the export formats, in the order of ExportFormat.
std::vector<std::string_view> ExportFormats();

// Writes the sessions to `out`: a file for snapshot and jsonl (one document
// for every session asked for), a folder for ac-dc, agents-kt and markdown
// (created if missing). kNotFound for an unknown session; kAlreadyExists if
// `out` is a file that exists; kIo when a write fails, and then no file the
// export was writing stands under its final name (files it finished do, in
// a folder export), and no file it did not create is touched.
Result<ExportReport> ExportTo(Store& store, const std::string& out, const ExportOptions& options);

}  // namespace sessiondb
