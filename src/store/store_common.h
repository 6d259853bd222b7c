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

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"
#include "store/message_preparer.h"

namespace sessiondb {

inline constexpr int kMaxListLimit = 1000;
inline constexpr std::string_view kDefaultNamespace = "default";

// `given` with the clock and warning sink filled in when absent.
// kInvalidArgument for a limit that is not positive.
Result<StoreOptions> WithDefaults(const StoreOptions& given);

// kInvalidArgument unless the namespace is a valid name (same rules as
// session ids); an empty name means kDefaultNamespace.
Result<std::string> ResolveNamespace(std::string_view name);

// kInvalidArgument unless 1 <= limit <= kMaxListLimit.
Status ValidateListLimit(int limit);

// `title` with whitespace collapsed (it may come out empty: the caller
// decides what an empty title means); kInvalidArgument if not UTF-8.
Result<std::string> CleanTitle(std::string_view title);

// A list query fetches limit + 1 rows to learn whether a page follows: drops
// that extra row from `page` and sets next_cursor when there was one.
void FinishListPage(int limit, SessionPage* page);

// The opaque cursor that follows `last` (the last session of a page).
std::string ListCursor(const Session& last);

// Parses a cursor made by ListCursor; kInvalidArgument if it was not.
Status ParseListCursor(const std::string& cursor, int64_t* updated_ms, std::string* id);

// Prepares each message of a batch with PrepareMessage, then runs `check`
// (a backend's own rule) on it when given. The error of a message in a batch
// of more than one names its place ("message 3 of the batch: ...").
Result<std::vector<PreparedMessage>> PrepareBatch(
    std::span<const Message> messages, const StoreOptions& options, const BlobExistsFn& blob_exists,
    const std::function<std::string()>& new_id,
    const std::function<Status(const PreparedMessage&)>& check = {});

// kNotFound naming the session.
Status SessionNotFound(std::string_view id);

// The parts of a session's index entry that appends change.
struct IndexEntry {
  int64_t last_seq = 0;
  int64_t message_count = 0;
  bool title_fixed = false;
  std::string title;
  std::string preview;
};

// Updates `entry` for one more message with this role and joined text: the
// title is fixed by the first message with text (any role), the preview by the
// first user message with text; neither changes afterwards.
void ApplyMessageToIndex(Role role, std::string_view text, IndexEntry* entry);

// kInvalidArgument unless `session` has a valid id and `messages` are
// numbered 1, 2, 3... (what RestoreSession accepts).
Status ValidateRestore(const Session& session, std::span<const Message> messages);

// The message a missing blob produces, for the warning sink.
std::string MissingBlobWarning(const Message& message, size_t part_index);

}  // namespace sessiondb
