// What the two halves of the PostgreSQL store (pg_store.cc: sessions,
// messages, blobs, housekeeping; pg_harness.cc: forks, events, prune, usage,
// drafts) share: the retry loop, the session row, the pieces of an append that
// run inside a caller's transaction, and a session's history as ranges of
// other sessions' logs. Not part of any public interface.
// Thread-safety: free functions work on the connection they are given, which
// the caller uses alone.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "store/message_preparer.h"
#include "store/postgres/pg_connection.h"
#include "store/postgres/pg_object_blobs.h"
#include "store/postgres/pg_store.h"
#include "store/store_common.h"

namespace sessiondb::postgres {

// Retries of one call: with the backoff below, about ten seconds in all,
// enough to ride out a restart of the database server.
inline constexpr int kMaxAttempts = 15;
inline constexpr int kFirstBackoffMs = 25;
inline constexpr int kMaxBackoffMs = 1000;

template <typename Fn>
auto PgStore::Run(Fn&& work) -> decltype(work(std::declval<PgConnection&>())) {
  using R = decltype(work(std::declval<PgConnection&>()));
  for (int attempt = 1;; ++attempt) {
    Status failure;
    {
      Result<PgLease> lease = pool_.Acquire();
      if (!lease) {
        // Connecting failed: worth another try only if the server may be back soon.
        if (lease.error().code() != StatusCode::kBusy ||
            IsNoFreeConnectionSlot(lease.error().message())) {
          return Err(lease.error());  // the pool waited for a free slot already
        }
        failure = lease.error();
      } else {
        R result = work(**lease);
        Status status = internal::ToStatus(result);
        if (status.ok() || !(*lease)->retryable() || attempt >= kMaxAttempts) return result;
        failure = std::move(status);
      }
    }
    if (attempt >= kMaxAttempts) {
      return Err(Status(failure.code(), failure.message() + " (gave up after " +
                                            std::to_string(attempt) + " attempts)"));
    }
    const int backoff = std::min(kMaxBackoffMs, kFirstBackoffMs << std::min(attempt - 1, 10));
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
  }
}

// ---- Sessions ---------------------------------------------------------------

// The columns SessionFromRow reads, in its order.
inline constexpr const char* kSessionColumns =
    "id, title, preview, created_ms, updated_ms, message_count, last_seq, archived, metadata, "
    "parent_id, fork_seq, coalesce(trashed_ms, 0)";

// A row selected with kSessionColumns first, its title, preview and
// metadata opened with `sealer` (kCorruption naming one that does not open).
Result<Session> SessionFromRow(const PgSealer& sealer, const PgResult& r, int row);

// A session's title or preview as stored: sealed under its id when encrypted.
std::string SealedSessionText(const PgSealer& sealer, PgColumn column, std::string_view id,
                              std::string_view text);

// kInvalidArgument when `text` holds a NUL character: PostgreSQL text cannot
// hold NUL, and a text parameter would be cut at it without a word.
Status CheckNoNul(std::string_view text, const std::string& what);

// Inside the caller's transaction: removes the draft a FinishDraft appends,
// if it is still as the front read it; kNotFound once gone, kBusy if it was
// saved again since (its newer text would be lost).
Status RemoveFinishedDraft(PgConnection& c, const std::string& ns, const Draft& draft);

// ---- Blob names ---------------------------------------------------------------
//
// The front speaks SHA-256 digests. In an encrypted namespace a blob's row
// (blobs.sha256, blob_refs.sha256) holds its keyed name (PgSealer::BlobName)
// instead, and its `digest` column (schema v5) the digest sealed under that
// name, so listings (gc, verify, erasure) can answer in digests without
// reading the bytes. Plaintext rows leave `digest` NULL: the name is the digest.

// The sealed digest kept beside blob `name`; nullopt (NULL) when plaintext.
std::optional<std::string> SealedBlobDigest(const PgSealer& sealer, std::string_view name,
                                            std::string_view sha256);

// The digest of the blob row whose name and sealed digest are in columns
// `name_col` and `name_col + 1` of `r`. kCorruption naming the blob when the
// digest does not open (tampered, or another namespace's key).
Result<std::string> BlobDigestOfRow(const PgSealer& sealer, const PgResult& r, int row,
                                    int name_col);

// Digests as the names their rows are stored under, for a query by name.
struct BlobNames {
  std::vector<std::string> names;              // distinct, for an array parameter
  std::map<std::string, std::string> digests;  // stored name -> digest
};
BlobNames NameBlobs(const PgSealer& sealer, const std::vector<std::string>& sha256s);

// ---- Appends inside a transaction ------------------------------------------

// The rows of a batch as the array parameters of one INSERT each for events
// and blob_refs.
struct EventRows {
  std::vector<int64_t> seqs;
  std::vector<std::string> ids, texts;
  std::vector<std::optional<std::string>> roles;  // NULL for events that are not messages
  std::vector<std::string> types;                 // empty: every row is a message
  std::vector<std::optional<std::string>> bodies;
  // The searchable text of each row (core/search_text) when the encoder had
  // it at hand; empty: InsertEvents computes it from text and body.
  std::vector<std::string> search_texts;
  std::vector<int64_t> ts;
  std::vector<std::string> ref_shas;
  std::vector<int64_t> ref_seqs;
};

// Inserts, inside the caller's transaction, each blob of `needed` (digests)
// that the namespace's key domain lacks, sealed under its stored name (bytes
// from `bytes_of`; its error is returned), share-locking those it has against gc.
// A blob of `uploads` (by stored name) is named by its object instead, once
// its upload is claimed (ClaimUpload; if gc took it, the bytes go in the row).
Status EnsureBlobs(PgConnection& c, const std::vector<std::string>& needed, int64_t now,
                   const std::function<Result<std::string>(const std::string&)>& bytes_of,
                   const ObjectUploads* uploads = nullptr);

// Inserts `rows` (events, their blob references and their documents of the
// full-text index) into session_id: texts and bodies sealed under each
// event's id, references under the blobs' stored names (c.sealer()).
Status InsertEvents(PgConnection& c, const std::string& ns, std::string_view session_id,
                    const EventRows& rows);

// The token totals a batch adds, per UTC day ("YYYY-MM-DD"), provider and model.
using UsageDelta = std::map<std::tuple<std::string, std::string, std::string>, ModelUsage>;

// Adds the usage of `m` (if any), a turn at ts_ms, to `delta`.
void AddToUsage(UsageDelta* delta, const Message& m, int64_t ts_ms);

// Sums the usage of the messages of `prepared` that carry it, all at ts_ms.
UsageDelta UsageOf(const std::vector<PreparedMessage>& prepared, int64_t ts_ms);

// Adds `delta` to the session's usage_totals and usage_days.
Status AddUsage(PgConnection& c, const std::string& ns, std::string_view session_id,
                const UsageDelta& delta);

// A batch of prepared messages encoded for the tables once per call; the
// seqs and times are filled in by each attempt.
struct EncodedBatch {
  EventRows rows;
  std::vector<std::string> needed;                    // every digest referred to, distinct
  std::map<std::string, const std::string*> pending;  // bytes of blobs the batch brings
  ObjectUploads uploads;  // blobs already stored in the object tier (UploadLargeBlobs)
};

// Encodes `prepared`, which must outlive the result (its blob bytes are borrowed).
Result<EncodedBatch> EncodeBatch(const std::vector<PreparedMessage>& prepared);

// Inside the caller's transaction: locks the session's row, stores the batch
// as its next messages (blobs, events, references, usage, index entry) stamped
// `now`, and returns the seq of the first. kNotFound for a missing session.
Result<int64_t> AppendInTransaction(PgConnection& c, const std::string& ns,
                                    std::string_view session_id,
                                    const std::vector<PreparedMessage>& prepared,
                                    EncodedBatch* batch, int64_t now);

// What Append reports for `prepared` stored from first_seq on at `ts`.
std::vector<AppendResult> AppendResults(const std::vector<PreparedMessage>& prepared,
                                        int64_t first_seq, int64_t ts);

// True if a message of the namespace refers to a stored blob with this digest.
Result<bool> NamespaceHasBlob(PgConnection& c, const std::string& ns, std::string_view sha256);

// ---- File versions (pg_file_versions.cc) ----------------------------------------
//
// A version's path, project, tool and digest as its row stores them: the
// values themselves in a plaintext namespace; in an encrypted one keyed
// tokens (file_path; project, '' when none), '' (tool) and the blob's keyed
// name (sha256), with the values sealed together in `sealed` under the id.

// The columns FileVersionFromRow reads, in its order ("id, ..., sealed").
extern const char* const kFileVersionColumns;

// A row selected with kFileVersionColumns first, opened with `sealer`.
// kCorruption naming the version for a row that does not open, whose stored
// forms are not those of its sealed values, or whose phase is unknown.
Result<FileVersion> FileVersionFromRow(const PgSealer& sealer, const PgResult& r, int row);

// The stored forms of a version's keys under `sealer`; sha256 is NULL
// (nullopt) when the file does not exist.
struct StoredVersionKeys {
  std::string file_path, project, tool;
  std::optional<std::string> sha256;
};
StoredVersionKeys StoreVersionKeys(const PgSealer& sealer, std::string_view file_path,
                                   std::string_view project, std::string_view tool, bool exists,
                                   std::string_view sha256);

// What file_path holds (and a query by path compares) for `file_path`.
std::string StoredVersionPath(const PgSealer& sealer, std::string_view file_path);

// The `sealed` value of version `id` (path, project, tool and digest as a
// JSON object); nullopt (NULL) in a plaintext namespace. The fields must be
// valid UTF-8.
std::optional<std::string> SealVersion(const PgSealer& sealer, int64_t id, const FileVersion& v);

// ---- History: a session's log through its fork ancestors --------------------

// The session's history as segments (store_common.h) in seq order: its
// oldest ancestor's first, its own last. kNotFound for a missing (or deleted)
// session; kCorruption if an ancestor's row is gone.
Result<std::vector<Segment>> ResolveHistory(PgConnection& c, const std::string& ns,
                                            std::string_view session_id);

enum class EventFilter { kAll, kMessages, kCompactions, kRewinds, kNotMessages };

// Which events of a history to read.
struct HistoryQuery {
  int64_t from_seq = 1;
  int64_t upto_seq = std::numeric_limits<int64_t>::max();
  int64_t limit = -1;  // -1: all
  EventFilter filter = EventFilter::kAll;
  bool newest_first = false;  // the last `limit` rather than the first (still in seq order)
};

// The events of `history` that `query` asks for, decoded, in seq order.
Result<std::vector<Event>> ReadSegments(PgConnection& c, const std::string& ns,
                                        const std::vector<Segment>& history,
                                        const HistoryQuery& query);

}  // namespace sessiondb::postgres
