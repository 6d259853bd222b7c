// The values sessiondb stores and returns: sessions, messages and their parts,
// and resource descriptors for attachments. Plain structs, no behaviour beyond
// small constructors; copying them is safe between threads.
//
// Example:
//   Message m;
//   m.role = Role::kUser;
//   m.parts.push_back(Part::Text("What is in this picture?"));
//   m.parts.push_back(Part::ImageFromDataUri("data:image/png;base64,iVBOR..."));
//   Result<AppendResult> r = store->Append(session_id, m);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"

namespace sessiondb {

enum class Role { kSystem, kUser, kAssistant, kTool };

// "system", "user", "assistant", "tool".
std::string_view RoleName(Role role);
// Parses a role name; kInvalidArgument names the accepted values.
Result<Role> ParseRole(std::string_view name);

enum class PartType { kText, kImage, kFile, kResourceLink, kToolCall, kToolResult, kReasoning };

// "text", "image", "file", "resource_link", "tool_call", "tool_result", "reasoning".
std::string_view PartTypeName(PartType type);
Result<PartType> ParsePartType(std::string_view name);

// Where an attachment's bytes came from.
enum class Origin {
  kInline,      // a data URI or bytes handed to Append
  kLocalFile,   // read from a path on this machine at append time
  kRemoteLink,  // an http(s) URL: a descriptor only, never fetched
};
std::string_view OriginName(Origin origin);  // "inline", "file", "link"
Result<Origin> ParseOrigin(std::string_view name);

// The descriptor the log keeps for an attachment. Never holds the bytes: they
// live in the blob store under content_sha256.
struct Resource {
  std::string resource_id;     // "res_" + UUIDv7; unique per attachment instance
  std::string content_sha256;  // 64 lowercase hex digits; empty for remote links
  std::string mime;            // sniffed from the bytes; for links, as declared (may be empty)
  int64_t size = 0;            // bytes; for links, as declared (0 if unknown)
  int width = 0;               // pixels, images only (0 otherwise)
  int height = 0;
  Origin origin = Origin::kInline;
  std::string name;  // file name or link title; may be empty
  std::string uri;   // kLocalFile: the path read; kRemoteLink: the URL; else empty
  // Why the store holds no bytes of this attachment, empty when it does. Only
  // imports write it: history is kept whole, and an attachment over the
  // import's byte limit keeps its descriptor (name, mime, size, dimensions;
  // no content_sha256) with this reason instead of failing its message.
  std::string not_stored;
  // Set on read, never stored: the blob was absent when the message was read.
  bool missing = false;

  bool operator==(const Resource&) const = default;
};

// The bytes of a new attachment, consumed by Append and turned into a Resource.
struct AttachmentSource {
  enum class Kind { kDataUri, kBytes, kLocalFile };
  Kind kind = Kind::kBytes;
  std::string data;           // the data URI, the raw bytes, or the file path
  std::string declared_mime;  // kBytes only: the caller's claim, checked against the bytes
  std::string name;           // optional display name (defaults to the file's base name)
};

// One element of a message. Which fields matter depends on `type`:
//   kText                  text
//   kReasoning             text, signature
//   kImage, kFile          source (on append) -> resource (once stored)
//   kResourceLink          resource (origin kRemoteLink, uri = the URL)
//   kToolCall              tool_call_id, tool_name, arguments_json
//   kToolResult            tool_call_id, text (the output), is_error
struct Part {
  PartType type = PartType::kText;
  std::string text;
  std::optional<Resource> resource;
  std::optional<AttachmentSource> source;
  std::string tool_call_id;
  std::string tool_name;
  std::string arguments_json;  // JSON text, "{}" when empty
  bool is_error = false;
  // kReasoning: the opaque proof the provider that wrote the reasoning wants
  // back with it (Anthropic's thinking "signature", OpenAI's reasoning
  // "encrypted_content"); empty when there is none. Projections send it, and
  // the reasoning, only to that provider (the message's `provider`).
  std::string signature;

  static Part Text(std::string text);
  static Part Reasoning(std::string text, std::string signature = "");
  // An image part; Append refuses bytes that are not PNG, JPEG, GIF or WebP.
  static Part ImageFromDataUri(std::string data_uri);
  static Part ImageFromBytes(std::string bytes, std::string declared_mime, std::string name = "");
  static Part ImageFromFile(std::string path);
  // A file part; bytes that turn out to be a supported image are stored as an image.
  static Part FileFromBytes(std::string bytes, std::string declared_mime, std::string name = "");
  static Part FileFromFile(std::string path);
  static Part FileFromDataUri(std::string data_uri);
  // A link to a remote resource, kept as a descriptor and never fetched.
  static Part Link(std::string url, std::string name = "", std::string mime = "", int64_t size = 0);
  static Part ToolCall(std::string id, std::string name, std::string arguments_json);
  static Part ToolResult(std::string tool_call_id, std::string output, bool is_error = false);
};

// Provider-reported token usage of one turn. input_tokens is the whole
// input: it includes cached_tokens (read from the provider's prompt cache)
// and cache_write_tokens (written to it; Anthropic's cache_creation), so the
// uncached input is input - cached - cache_write. output_tokens is the whole
// output: OpenAI's reasoning tokens are inside it (reasoning_tokens says how
// many of them), so they are never priced twice (docs/usage.md).
struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t reasoning_tokens = 0;
  int64_t cache_write_tokens = 0;
  bool operator==(const Usage&) const = default;
};

// A message event of a session's log. On append, id may be left empty (a
// UUIDv7 is assigned) and session_id, seq and ts_ms are ignored.
struct Message {
  std::string id;
  std::string session_id;
  int64_t seq = 0;    // position in the session's log, dense from 1
  int64_t ts_ms = 0;  // milliseconds since the Unix epoch
  Role role = Role::kUser;
  std::vector<Part> parts;
  std::vector<std::string> files;
  std::vector<std::string> files_modified;
  std::string edit_results_json;  // a JSON array, or empty
  std::string model;
  std::string provider;  // who served the turn ("openai", "anthropic", ...), or empty
  std::optional<Usage> usage;
  std::string metadata_json;  // a JSON object, or empty
  // Set on read, never on append: a compaction prune dropped this message's
  // parts (see Store::PruneCompaction); role, id, seq and time remain.
  bool pruned = false;

  // The text parts joined by "\n", in order.
  std::string Text() const;
};

// One message as a read that builds no Message sees it (Store::VisitMessages),
// valid only during the visitor's call. A message that is one text part and
// nothing else, as most of a chat is, may be read straight from its row:
// `text` is that part and `message` is null. Any other message is built
// whole, and `message` points to it (`text` is then empty).
struct MessageView {
  std::string_view id;
  std::string_view session_id;
  int64_t seq = 0;
  int64_t ts_ms = 0;
  Role role = Role::kUser;
  std::string_view text;
  const Message* message = nullptr;
};

// Called with each message of a read in turn; false stops the read.
using MessageVisitor = std::function<bool(const MessageView&)>;

// What Append reports once the message is durable (per the store's durability).
struct AppendResult {
  std::string message_id;
  int64_t seq = 0;
  int64_t ts_ms = 0;
  std::vector<Resource> resources;  // descriptors of the attachments, in part order
};

// The index entry of a session: everything a session list shows, without the log.
struct Session {
  std::string id;
  std::string title;    // "New Session" until the first message; then fixed unless renamed
  std::string preview;  // the first user message, at most 100 characters plus "…"
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t message_count = 0;
  int64_t last_seq = 0;
  bool archived = false;
  std::string metadata_json;  // a JSON object ("{}" when none)
  // Fork origin: the session this one was forked from and the seq it was
  // forked at (its history is the parent's up to fork_seq, then its own).
  // Empty parent_id for a session that is not a fork. The parent may since
  // have been deleted; the fork still reads the events it inherited.
  std::string parent_id;
  int64_t fork_seq = 0;
  // When the session was moved to the trash (Store::TrashSession); 0 when
  // it is not in the trash. Only a listing of the trash shows such sessions.
  int64_t trashed_ms = 0;
};

struct NewSession {
  std::string id;             // empty: a UUIDv7 is assigned
  std::string title;          // empty: taken from the first message
  std::string metadata_json;  // empty or a JSON object, e.g. {"project":"/src/app"}
};

// Which sessions a listing or a search looks at, by their archived flag:
// those not archived, only archived ones, or both. The one filter of both
// (ListOptions defaults to kActive, SearchFilter to kAll).
enum class ArchiveFilter { kActive, kArchived, kAll };

struct ListOptions {
  int limit = 50;      // 1..1000
  std::string cursor;  // from SessionPage::next_cursor; empty for the first page
  ArchiveFilter archived = ArchiveFilter::kActive;
  // When metadata_key is set, only sessions whose metadata has that top-level
  // key equal to metadata_value (compared as a string) are listed.
  std::string metadata_key;
  std::string metadata_value;
  // List the trash instead (Store::TrashSession): the sessions in it, most
  // recently updated first, whatever `archived` says.
  bool trash = false;
};

struct SessionPage {
  std::vector<Session> sessions;  // most recently updated first
  std::string next_cursor;        // empty when this is the last page
};

struct GcOptions {
  // Blobs younger than this are kept even if unreferenced, so an append whose
  // blobs are written but whose event has not committed yet is never robbed.
  int64_t grace_ms = int64_t{10} * 60 * 1000;
  bool dry_run = false;
};

struct GcReport {
  int64_t blobs_scanned = 0;
  int64_t blobs_deleted = 0;
  int64_t bytes_freed = 0;
  int64_t blobs_in_grace = 0;  // unreferenced but too young to delete
};

struct VerifyReport {
  int64_t blobs_checked = 0;
  int64_t bytes_checked = 0;
  std::vector<std::string> missing;  // referenced by the log, absent from the blob store
  std::vector<std::string> corrupt;  // present, but the bytes no longer hash to the name
  // What was checked beyond the blobs, in words: for an embedded store
  // SQLite's integrity check of every page of the database; for PostgreSQL,
  // what the store can check itself (see docs/cli.md).
  std::string database_check;
  // What that check found wrong (at most 100 lines), empty when it passed.
  std::vector<std::string> database_problems;
  // Sessions whose log or index entry cannot be read back whole because of
  // those problems, each with the error that reading it gave.
  struct DamagedSession {
    std::string id;
    std::string error;
  };
  std::vector<DamagedSession> damaged_sessions;
  bool clean() const {
    return missing.empty() && corrupt.empty() && database_problems.empty() &&
           damaged_sessions.empty();
  }
};

struct StorageStats {
  int64_t sessions = 0;
  int64_t archived_sessions = 0;
  int64_t messages = 0;
  int64_t blobs = 0;
  int64_t blob_bytes = 0;
  int64_t database_bytes = 0;
  int64_t total_bytes = 0;  // everything under the store: database, WAL, blobs
};

// ---- The agent harness: events beyond messages, drafts, usage ---------------

enum class EventType { kMessage, kResourceView, kCompaction, kRewind };
// "message", "resource_view", "compaction", "rewind".
std::string_view EventTypeName(EventType type);
Result<EventType> ParseEventType(std::string_view name);

// A resource deliberately rehydrated into the provider context: the next
// projection sends it in full, once (see docs/harness.md).
struct ResourceView {
  std::string resource_id;
  std::string reason;
  Resource resource;        // the descriptor viewed, as the log holds it
  int64_t message_seq = 0;  // the seq of the message that attached it
  bool operator==(const ResourceView&) const = default;
};

// What a caller supplies to compact a range of a session's log.
struct CompactionRequest {
  int64_t from_seq = 0;     // first seq the summary stands in for (>= 1)
  int64_t to_seq = 0;       // last seq it stands in for (<= the session's last_seq)
  std::string summary;      // required, UTF-8
  std::string strategy;     // how it was made, e.g. "llm-summary" (free text)
  std::string model;        // the model that wrote it
  std::string limitations;  // what the summary cannot say, in the caller's words
};

// A compaction event: a summary standing in for events from_seq..to_seq in
// projections. The covered events stay readable (unless pruned).
struct Compaction {
  int64_t from_seq = 0;
  int64_t to_seq = 0;
  std::string summary;
  std::string strategy;
  std::string model;
  // The caller's limitations, followed by the store's own statement when the
  // covered range held images: the summary is not the images, which it names.
  std::string limitations;
  std::vector<Resource> images;  // the images the covered range held
  bool operator==(const Compaction&) const = default;
};

// Where a rewind (Store::Rewind) ends the session's view: every event with a
// seq past to_seq that was in the view before the rewind leaves it.
struct RewindPoint {
  int64_t to_seq = 0;
  bool operator==(const RewindPoint&) const = default;
};

// One entry of a session's log. Exactly one of message, resource_view,
// compaction and rewind is meaningful, chosen by `type`. session_id is the session whose
// log holds the event: for events a fork inherited, its parent (or an older
// ancestor).
struct Event {
  std::string id;
  std::string session_id;
  int64_t seq = 0;
  int64_t ts_ms = 0;
  EventType type = EventType::kMessage;
  Message message;
  ResourceView resource_view;
  Compaction compaction;
  RewindPoint rewind;
};

// What Store::PruneCompaction dropped.
struct PruneReport {
  int64_t events_pruned = 0;
  int64_t blobs_deleted = 0;  // blobs no event refers to any more
  int64_t bytes_freed = 0;
};

// Assistant output being streamed, saved every few seconds until finished.
// A draft that is still listed after its writer is gone (a crash, a close
// without finishing) is incomplete: what it holds is what was last saved.
struct Draft {
  std::string id;  // "draft_" + UUIDv7
  std::string session_id;
  Role role = Role::kAssistant;
  std::string text;       // the output so far
  std::string reasoning;  // streamed reasoning so far, if any
  std::string model;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;  // when it was last saved
};

// Token totals of one provider and model within a session.
struct ModelUsage {
  std::string provider;
  std::string model;
  int64_t turns = 0;
  Usage usage;
  bool operator==(const ModelUsage&) const = default;
};

// Token totals of a session's own turns (a fork does not count its parent's:
// those tokens were spent once, by the parent).
struct UsageReport {
  int64_t turns = 0;  // messages that carried usage
  Usage total;
  std::vector<ModelUsage> by_model;  // ordered by provider, then model
};

// What Store::GetUsageSummary groups its rows by (docs/usage.md).
enum class UsageGroup { kDay, kMonth, kProject, kModel, kProvider, kSession };

// "day", "month", "project", "model", "provider", "session".
std::string_view UsageGroupName(UsageGroup group);
// kInvalidArgument names the accepted values.
Result<UsageGroup> ParseUsageGroup(std::string_view name);

// A question about usage and cost across sessions. Days are UTC calendar
// days "YYYY-MM-DD"; a turn's day is the day of its time stamp.
struct UsageQuery {
  std::vector<UsageGroup> group;         // empty: one row, the total
  std::string since;                     // first day counted; empty: no bound
  std::string until;                     // last day counted (inclusive); empty: no bound
  std::string project;                   // only sessions of this project; empty: all
  std::vector<std::string> session_ids;  // only these sessions (at most 500); empty: all
  // A price file whose entries win over the shipped table (docs/usage.md);
  // empty: $SESSIONDB_PRICES if set, else the shipped table alone.
  std::string prices_path;
};

// Token sums, turns and cost of some turns. A turn whose provider and model
// have no price on its day adds to unpriced_turns and nothing to cost_usd.
struct UsageMetrics {
  int64_t turns = 0;
  Usage usage;
  double cost_usd = 0;
  int64_t unpriced_turns = 0;
};

// One row of a usage summary: the keys of the query's groups (the others
// stay empty) and the metrics of the turns that share them.
struct UsageRow {
  std::string day;    // "YYYY-MM-DD" (group day)
  std::string month;  // "YYYY-MM" (group month)
  std::string project;
  std::string provider;
  std::string model;
  std::string session_id;
  UsageMetrics metrics;
};

// Usage and cost of the turns a UsageQuery selects. Trashed sessions are left
// out; a fork's inherited turns belong to its parent and are counted once.
struct UsageSummary {
  std::vector<UsageRow> rows;  // ordered by the group keys, in the query's order
  UsageMetrics total;
};

// One turn that carried usage, priced (Store::GetTurnUsage).
struct TurnUsage {
  int64_t seq = 0;
  int64_t ts_ms = 0;
  std::string provider;
  std::string model;
  Usage usage;
  std::optional<double> cost_usd;  // empty: no price for this provider, model and day
};

// ---- File versions: code checkpoints (Store::RecordFileVersion) ----------

// When a file version was taken: as the tool call found the file (before it
// ran) or as it left it (after).
enum class FileVersionPhase { kBefore, kAfter };

// "before", "after".
std::string_view FileVersionPhaseName(FileVersionPhase phase);

// The largest file kept as a version: the hook reads at most 4 MiB of a
// file; imports may hold larger ones.
inline constexpr int64_t kMaxFileVersionBytes = int64_t{16} * 1024 * 1024;
// The most versions one ListFileVersions call returns.
inline constexpr int64_t kMaxFileVersionsListed = 100000;
// The blob references of file versions live under this session id (their
// seq is the version's id), so garbage collection, verify and a namespace's
// right to read a blob see them as they see a message's.
inline constexpr std::string_view kFileVersionRefSession = "\x01file-versions";
// The source of the versions sessiondb records of its own writes (a rewind's,
// a restore's; RecordFileRestores). A rewind never undoes them as calls: a
// file they touched is planned again from the agent's versions.
inline constexpr std::string_view kCheckpointRestoreSource = "sessiondb";

// One version of a file an agent's tool call read or wrote.
struct FileVersion {
  int64_t id = 0;             // assigned: increasing in the order recorded
  std::string agent_session;  // the agent's session id (Claude Code's session_id)
  std::string tool_use_id;    // the tool call ("" when unknown)
  std::string file_path;      // absolute and normal (memory/write_path.h)
  FileVersionPhase phase = FileVersionPhase::kAfter;
  bool exists = true;   // false: no file at the path
  std::string sha256;   // of the content kept, when exists
  int64_t size = 0;     // bytes of the content kept
  std::string tool;     // "Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"...
  std::string source;   // "hook", "import", "shell"
  std::string project;  // the agent's working folder, when known
  int64_t time_ms = 0;  // 0 on record: now
};

// Which versions ListFileVersions returns. Every field narrows; none set:
// every version.
struct FileVersionQuery {
  std::string file_path;                    // exactly this path
  std::vector<std::string> agent_sessions;  // any of these (at most 100)
  int64_t after_id = 0;                     // only ids above this
  int64_t limit = 10000;
};

}  // namespace sessiondb
