// What every Store backend shares beyond message preparation: option
// defaults, the session-list cursor, the index-entry rules applied as messages
// are appended, and common error texts. Keeping them here means the embedded
// and PostgreSQL stores answer the same way to the same calls.
// Thread-safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/text_rules.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"
#include "store/message_preparer.h"

namespace sessiondb {

inline constexpr int kMaxListLimit = 1000;
inline constexpr std::string_view kDefaultNamespace = "default";

// Who the ledger of forgetting records when StoreOptions::actor is empty:
// "$USER@host", or "sessiondb" when either is unknown.
std::string DefaultActor();

// `given` with the clock, warning sink, actor and key file ($SESSIONDB_KEY_FILE)
// filled in when absent.
// kInvalidArgument for a limit that is not positive.
Result<StoreOptions> WithDefaults(const StoreOptions& given);

// kInvalidArgument unless the namespace is a valid name (same rules as
// session ids); an empty name means kDefaultNamespace.
Result<std::string> ResolveNamespace(std::string_view name);

// kInvalidArgument unless 1 <= limit <= kMaxListLimit.
Status ValidateListLimit(int limit);

// `title` as every path that sets a title (create, rename, fork, restore)
// stores it: SanitizeTitle's rule (control characters stripped, whitespace
// collapsed, at most kMaxTitleLength code points). It may come out empty:
// the caller decides what an empty title means. kInvalidArgument if not UTF-8.
Result<std::string> CleanTitle(std::string_view title);

// A list query fetches limit + 1 rows to learn whether a page follows: drops
// that extra row from `page` and sets next_cursor when there was one.
void FinishListPage(int limit, SessionPage* page);

// The opaque cursor that follows `last` (the last session of a page).
std::string ListCursor(const Session& last);

// Parses a cursor made by ListCursor; kInvalidArgument if it was not.
Status ParseListCursor(const std::string& cursor, int64_t* updated_ms, std::string* id);

// Prepares each message of a batch with PrepareMessage, then runs `check`
// (a backend's own rule) on it when given; `stage` as PrepareMessage's. The
// error of a message in a batch of more than one names its place ("message 3
// of the batch: ..."). The result may refer to `messages` (PrepareMessage's
// `may_borrow`): they must outlive it.
Result<std::vector<PreparedMessage>> PrepareBatch(
    std::span<const Message> messages, const StoreOptions& options, const BlobExistsFn& blob_exists,
    const std::function<std::string()>& new_id,
    const std::function<Status(const PreparedMessage&)>& check = {},
    const BlobStageFn& stage = nullptr);

// a + b for counts that are never negative, or INT64_MAX where the sum
// would pass it: token totals saturate rather than wrap (docs/harness.md).
int64_t SaturatingAdd(int64_t a, int64_t b);
// Field by field.
Usage SaturatingAdd(const Usage& a, const Usage& b);

// kNotFound naming the session.
Status SessionNotFound(std::string_view id);

// The parts of a session's index entry that appends change: its title and
// preview (core/text_rules) and its counts.
struct IndexEntry : TitleAndPreview {
  int64_t last_seq = 0;
  int64_t message_count = 0;
};

// ApplyMessageText, and one more message and seq.
void ApplyMessageToIndex(Role role, std::string_view text, IndexEntry* entry);

// kInvalidArgument for a restored rewind whose to_seq is not 0 .. its seq - 1.
Status ValidateRestoredRewind(std::string_view session_id, const Event& event);
// kInvalidArgument unless `session` has a valid id and `events` are
// numbered 1, 2, 3... (what RestoreSession accepts); for a fork (parent_id
// set), its own events, numbered from fork_seq + 1; and each rewind goes back.
Status ValidateRestore(const Session& session, std::span<const Event> events);

// The text and body columns of an event RestoreSession writes as it is,
// without preparing it: any event but a message that still has its parts
// (a pruned stub, a resource view, a compaction).
struct StoredEventColumns {
  std::string text;
  std::optional<std::string> body;
};
// True if `event`, read from a fork's history, is stored under another
// session than `session_id` (the fork inherited it).
bool IsInherited(const Event& event, std::string_view session_id);

// The event as RestoreSession writes it into `session_id`: an event a fork
// inherited (stored under another session) is the parent's and keeps its id
// there, so its copy gets a new one (empty: the store assigns it).
Event RestoredCopy(const Event& event, std::string_view session_id);

// kInvalidArgument unless `events` continue a log whose last seq is
// `last_seq` (last_seq + 1, + 2...), what RestoreEvents accepts.
Status ValidateRestoredRun(std::string_view session_id, int64_t last_seq,
                           std::span<const Event> events);

// Moves the index entry on over restored `events` (holding `message_count`
// messages): last_seq, count, a title and preview not yet fixed, and
// updated_ms to the newest event's time if later.
void ApplyRestoredToIndex(std::span<const Event> events, int64_t message_count, IndexEntry* entry,
                          int64_t* updated_ms);

// True for the events EncodeRestoredEvent takes.
bool RestoresAsStored(const Event& event);
Result<StoredEventColumns> EncodeRestoredEvent(const Event& event);

// ---- Forks ----------------------------------------------------------------

// A slice of one session's own log that a history reads: seqs from_seq ..
// to_seq (inclusive; empty when from_seq > to_seq) stored under session_id.
struct Segment {
  std::string session_id;
  int64_t from_seq = 0;
  int64_t to_seq = 0;
};

// One session on the way from a session up to its root: its own events are
// the seqs after fork_seq (0 for a root) up to last_seq.
struct ChainLink {
  std::string id;
  std::string parent_id;  // empty for a root
  int64_t fork_seq = 0;
  int64_t last_seq = 0;
};

// The segments of the history of chain[0], oldest first, given the chain from
// that session up to its root (chain[i + 1] is chain[i]'s parent).
std::vector<Segment> HistorySegments(std::span<const ChainLink> chain);

// `segments` cut to the seqs <= upto_seq.
std::vector<Segment> SegmentsUpTo(std::vector<Segment> segments, int64_t upto_seq);

// How many of a fork's inherited messages decide its title and preview: a
// fork looks at no more than this, so forking stays constant-time.
inline constexpr int kForkIndexScan = 64;

// The message FinishDraft appends: `message` in the draft's role, with the
// draft's reasoning and text as its parts when it has none, and the draft's
// model when it names none.
Message FinalDraftMessage(const Draft& draft, const Message& message);

// kInvalidArgument unless 0 <= at_seq <= parent.last_seq.
Status ValidateForkPoint(const Session& parent, int64_t at_seq);

// kFailedPrecondition: RestoreSession of a fork whose parent (with at least
// fork_seq events) is not in the store.
Status MissingForkParent(std::string_view id, std::string_view parent_id, int64_t fork_seq);

// kAlreadyExists for an id that a session (possibly a deleted one kept for
// its forks) already holds.
Status SessionIdTaken(std::string_view id);

// Whether a "before" file version says nothing `latest` (the file's latest
// version kept) does not: `latest` is an agent's "after" (not
// kCheckpointRestoreSource's) in the same agent session, of the same
// content. A rewind then finds the file as the call found it in that
// "after" (Store::RecordFileVersion).
bool BeforeSaysNothingNew(const FileVersion& before, const FileVersion& latest);

// The message a missing blob produces, for the warning sink.
std::string MissingBlobWarning(const Message& message, size_t part_index);

}  // namespace sessiondb
