// The Store: one sessiondb database. Store::Open gives the embedded backend (a
// directory holding a SQLite database in WAL mode and a content-addressed blob
// folder) for a path, and the PostgreSQL backend for a postgresql:// URI;
// both implement this interface with the same guarantees.
//
// Thread-safety: a Store may be shared by the threads of a process (the
// embedded backend serialises calls; the PostgreSQL backend runs them on a
// pool of connections). Several processes may open the same store at once:
// writers wait for each other (up to StoreOptions::busy_timeout_ms) instead of
// failing with "database is locked".
//
// Example:
//   ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open("/tmp/chats"));
//   ASSIGN_OR_RETURN(Session s, store->CreateSession({}));
//   Message m;
//   m.parts = {Part::Text("hello"), Part::ImageFromFile("cat.png")};
//   ASSIGN_OR_RETURN(AppendResult r, store->Append(s.id, m));
//   ASSIGN_OR_RETURN(std::vector<Message> log, store->ReadMessages(s.id));
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/blob_reader.h"
#include "sessiondb/file_system.h"
#include "sessiondb/forget.h"
#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb {

namespace store {
class IndexBackend;  // src/store/index_backend.h: internal to the library
}  // namespace store

enum class Durability {
  // fsync before an append returns: survives power loss. The default.
  kDurable,
  // Survives the process being killed at any instant, not a power loss.
  kProcessCrashSafe,
};

// Reports progress of long work: `done` of `total` units (total may be 0 if unknown).
using ProgressFn = std::function<void(int64_t done, int64_t total)>;

struct StoreOptions {
  Durability durability = Durability::kDurable;
  int64_t max_image_bytes = int64_t{5} * 1024 * 1024;  // per image
  int max_images_per_message = 5;
  int64_t max_file_bytes = int64_t{100} * 1024 * 1024;  // per non-image attachment
  bool create_if_missing = true;
  // Embedded stores: open for reading only. Nothing is written (not even a
  // migration); every call that would write fails with kFailedPrecondition
  // ("the store at DIR is read-only: ..."). A store whose directory or
  // database file this process may not write is opened this way by itself,
  // so a store on a read-only disk or another user's store can be listed,
  // shown, searched and exported. See docs/formats.md for how SQLite reads a
  // WAL database it may not write.
  bool read_only = false;
  // How long a writer waits for another process's write before kBusy.
  int busy_timeout_ms = 60'000;
  // Milliseconds since the Unix epoch. Tests inject a fake clock here.
  std::function<int64_t()> clock;
  // Receives warnings (a missing blob, a skipped part). Default: stderr.
  std::function<void(std::string_view)> warn;
  // PostgreSQL stores: the namespace (a user, team or project) this Store
  // works in; sessions of other namespaces are invisible to it. Empty means
  // the URI's `namespace` parameter, else "default". An embedded store is a
  // single namespace and refuses any other name.
  std::string namespace_name;
  // PostgreSQL stores: connections kept for concurrent callers of one Store.
  int max_connections = 8;
  // Embedded stores: where blob files and the saved vector index are written
  // (file_system.h). Null: the real file system. Tests inject faults here;
  // it must outlive the Store.
  FileSystem* file_system = nullptr;
  // Who this Store's forgetting is recorded as in the ledger (a user, a
  // service). Empty: "$USER@host", or "sessiondb" when those are unknown.
  std::string actor;
  // Secrets never stored (docs/retention.md): whether credentials found in
  // what is written (texts, tool calls and results, reasoning text, titles,
  // metadata, drafts, summaries, imports, code writes) are replaced by a
  // marker before any byte is written. Unset: the store's own setting, on
  // unless `sessiondb redact --off` turned it off. Tests and benchmarks set it.
  std::optional<bool> redact_secrets;
  // Encryption at rest (docs/encryption.md): the file that holds the master
  // key, a generated one (`sessiondb key new FILE`) or a passphrase. Empty:
  // $SESSIONDB_KEY_FILE, else none. A store created with a key is encrypted;
  // an encrypted store opens only with its key (kFailedPrecondition before
  // anything is written), and a plaintext store refuses one (`sessiondb
  // encrypt` converts it).
  std::string key_file;
};

// The store's setting of secret redaction (Store::GetRedactionSettings).
struct RedactionSettings {
  bool enabled = true;
  // Let through: exact secret strings, or kind names ("jwt", "url-password").
  std::vector<std::string> allow;
};

// Where a secret stored before redaction (or while it was off) is: never the
// secret itself. seq 0 is the session's index entry (title, preview, metadata).
struct StoredSecret {
  std::string kind;  // the detector's name of it, e.g. "github-token"
  std::string session_id;
  int64_t seq = 0;
};

// What Store::RedactStoredSecrets changed.
struct RedactionReport {
  int64_t events_scanned = 0;
  int64_t events_rewritten = 0;
  int64_t sessions_rewritten = 0;  // index entries (title, preview, metadata)
  int64_t secrets_redacted = 0;
};

// Supplies the bytes of a blob by digest (for RestoreSession).
using BlobSourceFn = std::function<Result<std::string>(std::string_view sha256)>;

// The events left once compactions are applied, in projection order: every
// compaction not itself covered by a later one hides the events of its range
// and takes the place of the first of them. `events` is a session's log in
// seq order (all of it, or what Store::ReadForProjection returned). A rule of
// the log, so the store applies it without knowing any provider's shape.
std::vector<Event> ReplayCompactions(std::vector<Event> events);

// The events of a session's view (see Store::Rewind): the log's events in
// order, each rewind (to_seq K) dropping those before it with seq > K, the
// rewind events themselves left out. `events` is a session's whole log in seq
// order, as Store::ReadEvents returns it. A rule of the log, like
// ReplayCompactions, which is applied after it: a compaction that a rewind
// took out of the view no longer stands for its range.
std::vector<Event> ApplyRewinds(std::vector<Event> events);

// The current schema version of the embedded store.
inline constexpr int kSchemaVersion = 10;

// The embedded store's SQLite database, inside the store's directory.
inline constexpr std::string_view kEmbeddedDatabaseFile = "sessiondb.db";
// The embedded store's blob folder, inside the store's directory.
inline constexpr std::string_view kEmbeddedBlobDir = "blobs";

// The backend behind a location: what Store::Open opens for it.
enum class StoreKind {
  kEmbedded,  // a directory
  kPostgres,  // a postgres:// or postgresql:// URI
};

// The backend Store::Open picks for `location`: kPostgres for a URI whose
// scheme is postgres:// or postgresql:// (as libpq spells them), kEmbedded for
// anything else. The one place a location's backend is told from its text.
StoreKind StoreKindOf(std::string_view location);

// "embedded" or "postgresql" (the `store` of /v1/health).
std::string_view StoreKindName(StoreKind kind);

class Store {
 public:
  // Opens the store at `path`: a directory (embedded), or a PostgreSQL URI
  // (`postgresql://user@host/db?namespace=team-a`, any libpq URI plus the
  // optional `namespace` parameter). Creates the store (directory or schema)
  // if missing and options.create_if_missing. Fails with kFailedPrecondition
  // if the store was written by a newer sessiondb, kNotFound if missing and
  // not to be created, kBusy if the database server cannot be reached,
  // kIo/kCorruption if the files cannot be read. The caller owns the result.
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const StoreOptions& options = {});

  virtual ~Store() = default;

  // ---- Sessions -------------------------------------------------------------

  // kAlreadyExists if the id is taken; kInvalidArgument for an id that is not
  // 1-128 characters of [A-Za-z0-9._-] (no path characters) or bad metadata.
  virtual Result<Session> CreateSession(const NewSession& request) = 0;
  // kNotFound if there is no such session.
  virtual Result<Session> GetSession(std::string_view id) = 0;
  // A page of sessions, most recently updated first.
  virtual Result<SessionPage> ListSessions(const ListOptions& options) = 0;
  // Sets the title explicitly; it will not be changed by later messages.
  virtual Status RenameSession(std::string_view id, std::string_view title) = 0;
  virtual Status SetArchived(std::string_view id, bool archived) = 0;
  // Deletes the session and its log for good, at once, with no trash (the
  // faces' delete is TrashSession): a session forks still read is hidden
  // and kept for them, the rest erased. Recorded in the ledger. Blobs it
  // alone referenced are reclaimed by CollectGarbage.
  virtual Status DeleteSession(std::string_view id) = 0;
  // Deletes archived sessions last updated before `before_ms`; returns how many.
  virtual Result<int64_t> PurgeArchived(int64_t before_ms) = 0;
  // The active session id, or nullopt when none is set.
  virtual Result<std::optional<std::string>> GetActiveSession() = 0;
  // kNotFound if the session does not exist. An empty id clears it.
  virtual Status SetActiveSession(std::string_view id) = 0;

  // ---- Forgetting (forget.h, docs/retention.md) -------------------------------

  // Moves the session to the trash: from then on it is hidden from
  // ListSessions (but ListOptions::trash), GetSession and every read by id
  // (kNotFound), search, recall and MCP, while the forks that read its events
  // keep working. RestoreFromTrash brings it back exactly; EmptyTrash (after
  // RetentionPolicy::trash_grace_days) or Erase removes it for good.
  // Recorded in the ledger. kNotFound for a missing session or one already
  // in the trash.
  virtual Status TrashSession(std::string_view id) = 0;
  // Takes the session out of the trash, as it was. kNotFound when it is not
  // in the trash.
  virtual Result<Session> RestoreFromTrash(std::string_view id) = 0;
  // Erases the sessions trashed before `trashed_before_ms` (the delete
  // cascade: one that forks still read is kept hidden for them, listed in
  // the receipt's kept_for_forks) and returns the receipt.
  virtual Result<ErasureReceipt> EmptyTrash(int64_t trashed_before_ms) = 0;
  // Erases for good what `request` selects: every row, index entry, vector,
  // code write, draft, usage row and blob file that only the erased data
  // used, and on an embedded store the freed pages of the database and its
  // WAL (docs/retention.md says exactly what each backend guarantees).
  // All or nothing: killed mid-way, the data is whole or erased, and the
  // receipt is issued only after the commit. Recorded in the ledger.
  // kInvalidArgument for an empty request; kNotFound for a named session or
  // message that does not exist.
  virtual Result<ErasureReceipt> Erase(const EraseRequest& request) = 0;
  // Checks a receipt against the store: its digest, and that nothing it
  // names is left (rows, index entries, vectors, blob files).
  virtual Result<ErasureCheck> VerifyErased(const ErasureReceipt& receipt) = 0;
  // The ledger of forgetting, newest first.
  virtual Result<std::vector<LedgerEntry>> ReadLedger(const LedgerQuery& query) = 0;
  // The retention policy (a default one when none was set) and setting it.
  // kInvalidArgument for negative numbers or two rules of one project.
  virtual Result<RetentionPolicy> GetRetentionPolicy() = 0;
  virtual Status SetRetentionPolicy(const RetentionPolicy& policy) = 0;
  // Applies the policy at `now_ms`: archives, trashes, erases the trash past
  // its grace and archived sessions past theirs; never a pinned session.
  // A dry run changes nothing and records nothing; a real one is recorded
  // in the ledger (actor "policy").
  virtual Result<RetentionRun> ApplyRetention(bool dry_run) = 0;

  // ---- Messages -------------------------------------------------------------

  // Appends one message to the session's log, attachments included, all or
  // nothing. Blobs are written before the event commits. Refuses with
  // kInvalidArgument (and writes nothing) an empty message, a malformed
  // attachment, or one beyond the limits in StoreOptions; kNotFound if the
  // session does not exist.
  virtual Result<AppendResult> Append(std::string_view session_id, const Message& message) = 0;
  // Appends several messages in one transaction (for imports): all or none.
  virtual Result<std::vector<AppendResult>> AppendBatch(std::string_view session_id,
                                                        std::span<const Message> messages) = 0;
  // The messages of the session's view (Rewind) with seq >= from_seq, in
  // order, at most `limit` (-1: all). They keep their seqs in the log, so
  // after a rewind the seqs may have gaps. A part whose blob is absent is
  // returned with resource->missing set, and a warning is logged; the rest of
  // the message loads.
  virtual Result<std::vector<Message>> ReadMessages(std::string_view session_id,
                                                    int64_t from_seq = 1, int64_t limit = -1) = 0;
  // The messages ReadMessages(session_id, from_seq) returns, handed one at a
  // time to `visit`, in order, without building a Message for those that are
  // one text part (MessageView): the cheapest replay of a long history.
  // Stops early when `visit` returns false. `visit` may call this store: the
  // embedded store reads its rows a thousand at a time and holds no lock
  // while it calls (PostgreSQL reads them all first, and builds every
  // Message). A part whose blob is absent is flagged and warned of as by
  // ReadMessages. kNotFound if the session does not exist; a row that does
  // not decode stops the read with kCorruption.
  virtual Status VisitMessages(std::string_view session_id, const MessageVisitor& visit,
                               int64_t from_seq = 1) = 0;
  // The last `count` messages of the session's view, in order. A session
  // never rewound reads only those; a rewound one, one read per stretch of
  // its view from the end back until `count` are found.
  virtual Result<std::vector<Message>> ReadLastMessages(std::string_view session_id,
                                                        int64_t count) = 0;

  // Writes a session exactly as another store holds it (copies between
  // stores, snapshot imports): the index entry as given (title, preview,
  // created and updated times, archived, metadata) and its events (messages,
  // resource views, compactions, pruned stubs) with their ids, seqs and
  // timestamps, all in one transaction. A fork (parent_id set) is restored
  // as a fork: `events` are its own (seq fork_seq + 1 on), and its parent
  // must be in this store already (kFailedPrecondition otherwise). A fork
  // restored without its parent_id takes its whole history as ReadEvents gave
  // it; the events it inherited are the parent's, so their copies get new ids
  // (and their usage is not counted again). Blobs
  // the messages refer to that this store lacks are fetched through
  // `blob_source` and must hash to their name; one the source has lost is
  // kept as a descriptor (and reported missing when read), with a warning.
  // Restored history is kept as it was written: the count limits of
  // StoreOptions (max_images_per_message) do not apply, and an image or file
  // part may be a descriptor with no bytes that says why
  // (Resource::not_stored). kAlreadyExists if the session exists; kInvalidArgument if the seqs are
  // not 1, 2, 3... or a message is malformed; kCorruption if fetched bytes do
  // not match.
  virtual Status RestoreSession(const Session& session, std::span<const Event> events,
                                const BlobSourceFn& blob_source) = 0;
  // More events for a session RestoreSession began (imports too long to hold
  // at once restore a session in runs): `events` must continue its log
  // (last_seq + 1, + 2...), with their ids and times as given; the index entry
  // (counts, updated time, a title or preview not yet fixed) moves on with
  // them. Same blob rules as RestoreSession. kNotFound for a missing session;
  // kInvalidArgument for seqs that do not continue the log; nothing is
  // written then.
  virtual Status RestoreEvents(std::string_view session_id, std::span<const Event> events,
                               const BlobSourceFn& blob_source) = 0;

  // ---- The agent harness: forks, events, compaction, drafts, usage ---------
  // See docs/harness.md for how these fit together.

  // A new session whose history is the parent's up to `at_seq` (0 .. the
  // parent's last_seq), rewinds included, then its own; its view follows from
  // that history by the same rule (Rewind). Constant time: nothing is copied, the
  // fork reads the parent's events, blobs included. The parent is never
  // changed. The child's title and preview come from `child` or else from the
  // inherited messages; its metadata from `child` or else the parent's.
  // kNotFound for a missing parent; kInvalidArgument for an at_seq out of range.
  virtual Result<Session> ForkSession(std::string_view parent_id, int64_t at_seq,
                                      const NewSession& child) = 0;

  // Every event (messages, resource views, compactions, rewinds) with seq >=
  // from_seq, in order, at most `limit` (-1: all). A fork's inherited events
  // included. The whole log, for audit: what a rewind took out of the view is
  // still here, and so are the rewinds.
  virtual Result<std::vector<Event>> ReadEvents(std::string_view session_id, int64_t from_seq = 1,
                                                int64_t limit = -1) = 0;

  // What a projection needs: the events of the session's view left after
  // applying its compactions (each summary in place of the range it covers),
  // in order. Reads from the last compaction in the view on, not the whole
  // log, so resuming costs what follows the last compaction. Equal to
  // ReplayCompactions(ApplyRewinds(ReadEvents())).
  Result<std::vector<Event>> ReadForProjection(std::string_view session_id);

  // Records that `resource_id` (attached by a message of this session, or
  // one it inherited) was viewed on purpose, and returns the event, whose
  // resource_view holds the descriptor. kNotFound if no message of the
  // session attached that resource; kInvalidArgument for a remote link, whose
  // bytes were never fetched and so cannot be viewed.
  Result<Event> RecordResourceView(std::string_view session_id, std::string_view resource_id,
                                   std::string_view reason);

  // Appends a compaction event whose summary stands in for request.from_seq
  // .. request.to_seq. When that range held images, the stored limitations
  // add that the summary is not the images and name them. After a rewind,
  // from_seq and to_seq must both be seqs of the session's view (events a
  // rewind took out, and the rewinds, are not), and only the view's images
  // count. kInvalidArgument for an empty summary, a range outside 1 ..
  // last_seq or an end outside the view; nothing is written.
  Result<Event> Compact(std::string_view session_id, const CompactionRequest& request);

  // Ends the session's view at `to_seq`: every event with a seq past to_seq
  // that was in the view leaves it; events appended later join it again. The
  // log itself is append-only: the rewind is an event (type kRewind, its
  // `rewind.to_seq` the target) at the next seq, and ReadEvents still returns
  // everything (for audit, for forks, until pruned). Reads of the view:
  // ReadMessages, ReadLastMessages, ReadForProjection (a compaction taken out
  // of the view no longer applies), and through them projections, exports
  // and the faces. The session's message_count becomes the number of
  // messages in its view; title and preview stay. A rewind to the end
  // (to_seq == last_seq) changes no view but is recorded all the same; 0
  // empties the view. Returns the rewind event. kInvalidArgument for a
  // to_seq outside 0 .. last_seq; kNotFound for a missing session; nothing
  // is written then.
  virtual Result<Event> Rewind(std::string_view session_id, int64_t to_seq) = 0;

  // Rewind, applied only while the session's last_seq is still
  // `expected_last_seq`, the one the caller read before deciding on to_seq:
  // a pop ("take out the last message I read") that no append, rewind or
  // other event landing in between can turn into taking out something else.
  // The check and the write are one transaction. Returns the rewind event,
  // or nullopt with nothing written when the log has moved on (read again
  // and decide again). Errors as Rewind's.
  virtual Result<std::optional<Event>> RewindIfUnchanged(std::string_view session_id,
                                                         int64_t to_seq,
                                                         int64_t expected_last_seq) = 0;

  // Drops the text, parts and blob references of the messages covered by the
  // compaction at `compaction_seq` (which must be in the session's view: a
  // compaction a rewind took out no longer stands for its range, so its
  // messages may be in the view again) that this session's own log holds (events
  // inherited from a parent are the parent's and stay), then deletes blobs no
  // event refers to any more. For users who need the space or must erase.
  // The messages stay in the log as pruned stubs; the compaction stays.
  // Forks of this session read the pruned stubs too. kInvalidArgument if the
  // event at that seq is not a compaction of this session, or was rewound.
  virtual Result<PruneReport> PruneCompaction(std::string_view session_id,
                                              int64_t compaction_seq) = 0;

  // Token totals of the session's own turns, per provider and model.
  virtual Result<UsageReport> GetUsage(std::string_view session_id) = 0;

  // Usage and cost across sessions, grouped as `query` says (docs/usage.md):
  // each turn priced by the dated price of its provider, model and UTC day.
  // Sessions in the trash are left out; a fork's inherited turns are its
  // parent's and counted once. kInvalidArgument for a malformed query (a day
  // not YYYY-MM-DD, since after until, more than 500 session ids) or price
  // file (naming the file and the entry); kNotFound for an unreadable one.
  virtual Result<UsageSummary> GetUsageSummary(const UsageQuery& query) = 0;

  // The session's own turns that carried usage, in seq order, each priced
  // (rewound turns included: their tokens were spent). `prices_path` as
  // UsageQuery's. kNotFound for a missing session; errors of the price file
  // as GetUsageSummary.
  virtual Result<std::vector<TurnUsage>> GetTurnUsage(std::string_view session_id,
                                                      const std::string& prices_path = "") = 0;

  // Drafts: streaming output saved as it grows (DraftWriter does the timing).
  // OpenDraft creates one; SaveDraft overwrites its text, reasoning and
  // updated_ms (kNotFound once finished or discarded); ListDrafts gives the
  // session's unfinished drafts, oldest first; FinishDraft appends `message`
  // (when it has no parts, the draft's text and reasoning become them) and
  // removes the draft in one transaction; DiscardDraft removes it.
  virtual Result<Draft> OpenDraft(std::string_view session_id, Role role,
                                  std::string_view model) = 0;
  virtual Status SaveDraft(const Draft& draft) = 0;
  virtual Result<std::vector<Draft>> ListDrafts(std::string_view session_id) = 0;
  virtual Result<AppendResult> FinishDraft(std::string_view draft_id, const Message& message) = 0;
  virtual Status DiscardDraft(std::string_view draft_id) = 0;

  // ---- Blobs ----------------------------------------------------------------

  // Damaged bytes never leave the store as sound: every read below re-hashes
  // the bytes it gives out and answers kCorruption, naming the blob, when
  // they no longer hash to its name (Verify lists every such blob).

  // The bytes named by `sha256`. kNotFound if absent; kCorruption if damaged.
  // `verify` is kept for callers written before every read was checked: the
  // bytes are checked whatever it says.
  virtual Result<std::string> ReadBlob(std::string_view sha256, bool verify = false) = 0;
  // A reader of the blob's bytes from `offset` on, for callers that stream
  // them in bounded pieces (memory: a piece, not the blob). The whole blob is
  // hashed first, a piece at a time, so a damaged one is refused
  // (kCorruption) before any byte is read; a reader from offset 0 hashes the
  // bytes again as they come and its last Read answers kCorruption if they
  // changed since. kNotFound if absent; kInvalidArgument for an offset past
  // the end.
  virtual Result<std::unique_ptr<BlobReader>> OpenBlob(std::string_view sha256,
                                                       int64_t offset = 0) = 0;
  // The resource as a data URI ("data:image/png;base64,..."). kCorruption if
  // its blob is damaged.
  virtual Result<std::string> ReadDataUri(const Resource& resource) = 0;

  // ---- File versions: code checkpoints (docs/memory.md) --------------------

  // Keeps `content` (the whole file, as `version` describes it: ignored when
  // version.exists is false) as a blob, once by digest, and the version's row,
  // in one transaction: the bytes are written before the row that names them.
  // A version with a tool_use_id is kept once per (agent_session,
  // tool_use_id, file_path, phase): recording it again returns the row kept
  // first and changes nothing. A "before" that says nothing new is not kept
  // either; the row that already says it is returned: its call's "after",
  // kept already (the hook saw the call before an import replayed it), or
  // the file's latest version when that is an "after" of the same agent
  // session, not kCheckpointRestoreSource's, with the same content: as
  // between two edits of a file nobody else touched. With the store's secret
  // redaction on, the content is redacted first (sha256 and size are of
  // what is kept). Fills id, sha256, size and time_ms (0: now).
  // kInvalidArgument for an empty path or agent_session, or content past
  // kMaxFileVersionBytes; kFailedPrecondition for a read-only store.
  virtual Result<FileVersion> RecordFileVersion(const FileVersion& version,
                                                std::string_view content) = 0;
  // The versions `query` selects, in the order they were recorded (id).
  // The content of one is ReadBlob(sha256). kInvalidArgument for a limit
  // outside 1..kMaxFileVersionsListed.
  virtual Result<std::vector<FileVersion>> ListFileVersions(const FileVersionQuery& query) = 0;

  // ---- Housekeeping -----------------------------------------------------------

  virtual Result<GcReport> CollectGarbage(const GcOptions& options) = 0;
  // Re-hashes every blob; reports missing and corrupt ones. Changes nothing.
  virtual Result<VerifyReport> Verify(const ProgressFn& progress = {}) = 0;
  virtual Result<StorageStats> Stats() = 0;

  // ---- Secrets (docs/retention.md) --------------------------------------------

  // The store's redaction setting, which every Store opened on it follows
  // unless StoreOptions::redact_secrets overrides it.
  virtual Result<RedactionSettings> GetRedactionSettings() = 0;
  // Stores the setting for every later Store opened on this store; this
  // Store follows it at once. kFailedPrecondition for a read-only store.
  virtual Status SetRedactionSettings(const RedactionSettings& settings) = 0;
  // The secrets the log and the index entries hold (written before
  // redaction, or while it was off), each session's own events only, in
  // session and seq order. Reads only.
  virtual Result<std::vector<StoredSecret>> ScanSecrets() = 0;
  // Rewrites every body and index entry ScanSecrets would list with the
  // secrets replaced by their markers, in one erasing transaction per
  // session (the old text is scrubbed from the files, as a prune does), and
  // re-indexes their text. kFailedPrecondition for a read-only store.
  virtual Result<RedactionReport> RedactStoredSecrets() = 0;

  // ---- Search and code memory ------------------------------------------------

  // The full-text index, vectors and code memory of this store, in its
  // namespace: what SearchIndex::Open(Store&) and CodeMemory::Open(Store&)
  // are built on (search.h, memory.h). Each call opens a new one; it must not
  // outlive this Store. Library-internal: callers use SearchIndex and
  // CodeMemory.
  virtual Result<std::unique_ptr<store::IndexBackend>> OpenIndexBackend() = 0;
  // The same on this Store's own connection (embedded stores; a PostgreSQL
  // store's backends share its pool anyway), for a caller that uses the Store
  // and the backend from one thread at a time: the Claude Code hook's
  // process, which then opens and reads the schema once, not twice.
  // Library-internal: CodeMemory::Open with MemoryOptions::share_store_connection.
  virtual Result<std::unique_ptr<store::IndexBackend>> OpenIndexBackendOnStoreConnection() = 0;

 protected:
  // Backend primitives behind the harness methods above; callers have
  // validated the arguments and encoded the body.

  // Appends one event that is not a message (type, searchable text, body
  // JSON) and returns its id, seq and time. kNotFound for a missing session.
  virtual Result<Event> AppendEventRecord(std::string_view session_id, EventType type,
                                          std::string_view text, std::string_view body) = 0;
  // The last compaction event with seq <= upto_seq in the session's history
  // (a fork's inherited part included), or nullopt.
  virtual Result<std::optional<Event>> FindLastCompaction(std::string_view session_id,
                                                          int64_t upto_seq) = 0;
  // The rewind events of the session's history (a fork's inherited part
  // included) with seq <= upto_seq, in seq order.
  virtual Result<std::vector<Event>> ReadRewinds(std::string_view session_id, int64_t upto_seq) = 0;
  // The message event (in the session's history) whose parts attach
  // `resource_id`, or nullopt; kNotFound for a missing session.
  virtual Result<std::optional<Event>> FindResourceMessage(std::string_view session_id,
                                                           std::string_view resource_id) = 0;
};

}  // namespace sessiondb
