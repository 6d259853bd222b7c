// Forgetting on purpose: the trash, erasure with its receipt, the ledger of
// what was forgotten, and retention policies (docs/retention.md). The Store
// methods that take and give these are in store.h.
//
// Example:
//   RETURN_IF_ERROR(store->TrashSession(id));              // restorable
//   ASSIGN_OR_RETURN(Session back, store->RestoreFromTrash(id));
//   EraseRequest erase;
//   erase.session_ids = {id};
//   ASSIGN_OR_RETURN(ErasureReceipt receipt, store->Erase(erase));  // for good
//   ASSIGN_OR_RETURN(ErasureCheck check, store->VerifyErased(receipt));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/status.h"

namespace sessiondb {

// One message of a session's own log, by its seq.
struct MessageRef {
  std::string session_id;
  int64_t seq = 0;
  bool operator==(const MessageRef&) const = default;
};

// What Store::Erase erases; the parts add up (a session named twice is
// erased once). At least one must be set.
struct EraseRequest {
  // These sessions, in the trash or not, and every fork that reads them.
  std::vector<std::string> session_ids;
  // Every session of this project (its metadata's `project`, else `cwd`,
  // as a folder: "/src/app" holds "/src/app/lib"), and the code writes
  // recorded under it.
  std::string project;
  // Every session last updated before this time (ms since the epoch); 0: no bound.
  int64_t before_ms = 0;
  // The whole store (PostgreSQL: the whole namespace): every session, code
  // write, draft, usage row, vector and blob. The ledger stays.
  bool everything = false;
  // Single messages (what a search selected), erased where they stand: the
  // session stays, each message becomes an erased stub at its seq.
  std::vector<MessageRef> messages;
  // Words for the ledger and the receipt (never content): why, or which
  // policy. Empty: "erase".
  std::string reason;
};

// What an erasure did, counted by kind, with digests and never content.
// Issued only once the erasure has committed. Its JSON form
// (ErasureReceiptToJson) is what `sessiondb erase` prints and
// `sessiondb verify --erased` reads.
struct ErasureReceipt {
  std::string id;              // a UUIDv7
  int64_t erased_ms = 0;       // when it committed
  std::string store;           // the store's location, without a password
  std::string namespace_name;  // "default" for an embedded store
  std::string actor;           // StoreOptions::actor
  std::string scope;           // what was asked, in words ("session 0190...", "project /src/app")
  std::vector<std::string> sessions;  // erased whole, ids in order
  // Trashed sessions whose grace ran out but whose events forks still read:
  // hidden for good (never restorable), their events kept for those forks
  // until the last of them goes (the delete cascade). Not erased.
  std::vector<std::string> kept_for_forks;
  std::vector<MessageRef> messages;  // erased inside sessions that stay
  // Counts by kind, in this order, every kind present (0 when none):
  // sessions, events, messages, blobs, blob_bytes, drafts, usage_rows,
  // code_writes, search_documents, embeddings.
  std::vector<std::pair<std::string, int64_t>> counts;
  std::vector<std::string> blobs;  // SHA-256 of every blob file deleted
  // Crypto-shredding: the id of the data key an erasure of everything
  // destroyed (an encrypted PostgreSQL namespace; docs/encryption.md), so
  // what was sealed under it opens nowhere, WAL segments included. Empty
  // when no key was destroyed.
  std::string destroyed_key_id;
  // The SHA-256 of this receipt's canonical JSON with `digest` left out:
  // a receipt changed after it was issued no longer checks.
  std::string digest;
};

// The receipt as JSON (canonical: fixed key order, no whitespace), `digest`
// included.
std::string ErasureReceiptToJson(const ErasureReceipt& receipt);
// Parses what ErasureReceiptToJson wrote. kInvalidArgument for anything else
// (or more than 64 MiB); the digest is not checked here (VerifyErased does).
Result<ErasureReceipt> ParseErasureReceipt(std::string_view json);
// The digest a receipt should carry: SHA-256 over its JSON without `digest`.
std::string ErasureReceiptDigest(const ErasureReceipt& receipt);

// What Store::VerifyErased found.
struct ErasureCheck {
  bool digest_ok = false;  // the receipt is the one issued
  // Each trace of the erased data still in the store, in words ("session X
  // still has 3 events", "blob <sha> is still in the blob folder").
  std::vector<std::string> problems;
  int64_t checks = 0;  // how many things were looked at
  bool erased() const { return digest_ok && problems.empty(); }
};

// One line of the ledger of forgetting: who forgot what, when, counted,
// never the content. Written in the same transaction as what it records, and
// kept through every erasure (an erasure of everything too).
struct LedgerEntry {
  int64_t id = 0;  // increasing
  int64_t ts_ms = 0;
  std::string actor;   // StoreOptions::actor, or "policy" for a retention run
  std::string action;  // trash, restore, delete, empty-trash, erase, retain, redact
  std::string scope;   // what it applied to, in words (session ids, a project, a date)
  std::vector<std::pair<std::string, int64_t>> counts;  // as ErasureReceipt::counts
  std::string receipt_id;  // for an erasure: its receipt's id and digest
  std::string receipt_digest;
};

struct LedgerQuery {
  int64_t limit = 100;    // 1..1000, newest first
  int64_t before_id = 0;  // only entries with a smaller id; 0: from the newest
};

// A rule of a retention policy, for one project or for all.
struct RetentionRule {
  // "" applies to every session no other rule's project holds; else the
  // sessions of this project (as EraseRequest::project).
  std::string project;
  int64_t trash_after_idle_days = 0;    // trash sessions idle longer; 0: never
  int64_t keep_newest = 0;              // trash all but the N most recently updated; 0: no cap
  int64_t archive_after_idle_days = 0;  // archive sessions idle longer; 0: never
  int64_t erase_archived_after_idle_days = 0;  // erase archived ones idle longer; 0: never
  bool operator==(const RetentionRule&) const = default;
};

// The retention policy of a store (PostgreSQL: of a namespace). Sessions
// whose metadata has "pinned": true are exempt from every rule.
struct RetentionPolicy {
  // How long a session stays in the trash before it is erased.
  int64_t trash_grace_days = 30;
  std::vector<RetentionRule> rules;  // none: nothing happens but the trash's grace
  bool operator==(const RetentionPolicy&) const = default;
};

// What a retention run did (or, dry, would do).
struct RetentionRun {
  bool dry_run = true;
  std::vector<std::string> archived;
  std::vector<std::string> trashed;
  std::vector<std::string> erased;          // from the trash past its grace, and archived ones
  std::vector<std::string> kept_for_forks;  // as ErasureReceipt::kept_for_forks
  std::string receipt_id;                   // the erasure's, when one was made
  int64_t ledger_id = 0;                    // 0 for a dry run
};

}  // namespace sessiondb
