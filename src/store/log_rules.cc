#include "store/log_rules.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "core/message_codec.h"
#include "core/text_rules.h"
#include "store/store_common.h"

namespace sessiondb::store {
namespace {

// Inside `txn`, which holds the session's row exclusively: hides the session
// if forks read its events, else erases it, and then each deleted ancestor
// that was kept only for it, upwards.
Status RemoveLocked(WriteTransaction& txn, const std::string& id, std::string parent) {
  ASSIGN_OR_RETURN(bool has_forks, txn.HasForks(id));
  if (has_forks) return txn.HideSession(id);
  RETURN_IF_ERROR(txn.EraseSession(id));
  while (!parent.empty()) {
    // Lock the parent first, then look for children: a sibling removed
    // concurrently has committed by then, so one of the two removers sees
    // the parent childless.
    ASSIGN_OR_RETURN(std::optional<std::string> grandparent, txn.LockDeletedSession(parent));
    if (!grandparent) break;  // a live session, or gone already
    ASSIGN_OR_RETURN(bool still_read, txn.HasForks(parent));
    if (still_read) break;
    RETURN_IF_ERROR(txn.EraseSession(parent));
    parent = std::move(*grandparent);
  }
  return Status::Ok();
}

// The title and preview a fork's first inherited messages make, reading no
// more than kForkIndexScan of them, so forking stays constant-time.
Result<TitleAndPreview> DerivedFromInherited(WriteTransaction& txn,
                                             const std::vector<Segment>& inherited) {
  TitleAndPreview derived;
  int64_t scanned = 0;
  for (const Segment& segment : inherited) {
    if (scanned >= kForkIndexScan || (derived.title_fixed && !derived.preview.empty())) break;
    if (segment.from_seq > segment.to_seq) continue;
    ASSIGN_OR_RETURN(std::vector<StoredMessageText> first,
                     txn.ReadMessageTexts(segment, kForkIndexScan - scanned));
    for (const StoredMessageText& m : first) ApplyMessageText(m.role, m.text, &derived);
    scanned += static_cast<int64_t>(first.size());
  }
  return derived;
}

}  // namespace

Status RemoveSession(Backend& backend, std::string_view id, const LedgerEntry* record) {
  return backend.RunWriteTransaction({}, [&](WriteTransaction& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<Session> session, txn.LockSession(id, RowLock::kExclusive));
    if (!session) {
      // Gone because an earlier run's COMMIT landed unanswered: done.
      if (txn.earlier_commit_may_have_landed()) return Status::Ok();
      return SessionNotFound(id);
    }
    RETURN_IF_ERROR(RemoveLocked(txn, session->id, session->parent_id));
    if (record == nullptr) return Status::Ok();
    LedgerEntry entry = *record;
    entry.scope = "session " + session->id;
    entry.counts = {{"sessions", 1}, {"messages", session->message_count}};
    return internal::ToStatus(txn.AppendLedgerEntry(entry));
  });
}

Result<int64_t> RemoveArchivedBefore(Backend& backend, int64_t before_ms) {
  int64_t removed = 0;
  RETURN_IF_ERROR(backend.RunWriteTransaction({}, [&](WriteTransaction& txn) -> Status {
    removed = 0;
    ASSIGN_OR_RETURN(std::vector<Session> sessions, txn.LockArchivedBefore(before_ms));
    for (const Session& session : sessions) {
      RETURN_IF_ERROR(RemoveLocked(txn, session.id, session.parent_id));
    }
    removed = static_cast<int64_t>(sessions.size());
    return Status::Ok();
  }));
  return removed;
}

Result<Session> InsertFork(Backend& backend, std::string_view parent_id, int64_t at_seq,
                           const ForkRow& child, std::span<const SeqRange> view) {
  Session forked;
  RETURN_IF_ERROR(backend.RunWriteTransaction({}, [&](WriteTransaction& txn) -> Status {
    // A share lock: the parent cannot be removed until the fork that reads it commits.
    ASSIGN_OR_RETURN(std::optional<Session> parent, txn.LockSession(parent_id, RowLock::kShare));
    if (!parent) return SessionNotFound(parent_id);
    RETURN_IF_ERROR(ValidateForkPoint(*parent, at_seq));
    ASSIGN_OR_RETURN(std::vector<Segment> history, txn.ReadHistorySegments(parent->id));
    const std::vector<Segment> inherited = SegmentsUpTo(std::move(history), at_seq);
    // Seqs are dense over the history, so the messages of each range of the
    // inherited view are its length minus the few events that are not
    // messages, which an index counts.
    int64_t message_count = 0;
    for (const SeqRange& range : view) {
      std::vector<Segment> within;
      for (Segment segment : inherited) {
        segment.from_seq = std::max(segment.from_seq, range.from_seq);
        segment.to_seq = std::min(segment.to_seq, range.to_seq);
        if (segment.from_seq <= segment.to_seq) within.push_back(std::move(segment));
      }
      ASSIGN_OR_RETURN(int64_t not_messages, txn.CountOtherEvents(within));
      message_count += range.to_seq - range.from_seq + 1 - not_messages;
    }
    ASSIGN_OR_RETURN(TitleAndPreview derived, DerivedFromInherited(txn, inherited));
    const TitleAndPreview named = ForkTitleAndPreview(parent->title, at_seq, child.title, derived);

    SessionRow row;
    row.id = child.id;
    row.title = named.title;
    row.title_fixed = named.title_fixed;
    row.preview = named.preview;
    row.created_ms = child.created_ms;
    row.updated_ms = child.created_ms;
    row.message_count = message_count;
    row.last_seq = at_seq;
    row.metadata_json = child.metadata_json.value_or(parent->metadata_json);
    row.parent_id = parent->id;
    row.fork_seq = at_seq;
    ASSIGN_OR_RETURN(std::optional<Session> inserted, txn.InsertForkRow(row));
    if (inserted) {
      forked = std::move(*inserted);
      return Status::Ok();
    }
    if (txn.earlier_commit_may_have_landed()) {
      // Ours after all, if an earlier run's answer was lost on the way back.
      ASSIGN_OR_RETURN(std::optional<Session> existing, txn.LockSession(row.id, RowLock::kShare));
      if (existing && existing->created_ms == row.created_ms &&
          existing->parent_id == row.parent_id && existing->fork_seq == row.fork_seq) {
        forked = std::move(*existing);
        return Status::Ok();
      }
    }
    return SessionIdTaken(row.id);
  }));
  return forked;
}

Result<PruneReport> PruneCompaction(Backend& backend, std::string_view session_id,
                                    int64_t compaction_seq) {
  PruneReport report;
  std::set<std::string> unreferenced;
  const WriteOptions erasing{.erases_text = true};
  RETURN_IF_ERROR(backend.RunWriteTransaction(erasing, [&](WriteTransaction& txn) -> Status {
    report = {};
    unreferenced.clear();
    // The exclusive lock keeps appends (and other prunes) of this session out.
    ASSIGN_OR_RETURN(std::optional<Session> session,
                     txn.LockSession(session_id, RowLock::kExclusive));
    if (!session) return SessionNotFound(session_id);
    ASSIGN_OR_RETURN(std::optional<Event> compaction,
                     txn.ReadOwnEvent(session->id, compaction_seq));
    if (!compaction || compaction->type != EventType::kCompaction) {
      return Status::InvalidArgument("event " + std::to_string(compaction_seq) + " of session " +
                                     session->id +
                                     " is not a compaction this session recorded; "
                                     "`sessiondb events` lists them");
    }
    // A compaction a rewind took out of the view no longer stands for its
    // range, whose messages may be in the view again: erasing them would
    // erase the view. Checked here, under the session's lock, so no rewind
    // lands between the check and the erasure. Only a later rewind of this
    // session's own log can take out one of its own events.
    ASSIGN_OR_RETURN(std::vector<Event> rewinds,
                     txn.ReadOwnRewinds(session->id, compaction_seq + 1, session->last_seq));
    for (const Event& rewind : rewinds) {
      if (rewind.rewind.to_seq >= compaction_seq) continue;
      return Status::InvalidArgument(
          "event " + std::to_string(compaction_seq) + " of session " + session->id +
          " was rewound out of the session's view (by the rewind at seq " +
          std::to_string(rewind.seq) + "); a compaction that no longer applies cannot be pruned");
    }
    // Only this session's own events: what it inherited belongs to its parent.
    const int64_t from = std::max(compaction->compaction.from_seq, session->fork_seq + 1);
    const int64_t to = compaction->compaction.to_seq;
    if (from > to) return Status::Ok();

    ASSIGN_OR_RETURN(std::vector<StoredMessageText> messages,
                     txn.ReadOwnMessages(session->id, from, to));
    std::vector<BodyUpdate> stubs;
    std::vector<int64_t> seqs;
    std::vector<std::pair<Role, std::string>> texts;
    for (StoredMessageText& m : messages) {
      if (m.pruned) continue;  // by an earlier compaction
      Message stub;
      stub.role = m.role;
      stub.pruned = true;
      ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(stub));
      stubs.push_back({m.seq, std::move(body)});
      seqs.push_back(m.seq);
      texts.emplace_back(m.role, std::move(m.text));
    }
    if (stubs.empty()) return Status::Ok();
    // A title or preview made from an erased text would keep its words.
    std::string title = session->title;
    std::string preview = session->preview;
    ScrubPrunedTexts(texts, compaction->compaction.summary, &title, &preview);
    if (title != session->title || preview != session->preview) {
      RETURN_IF_ERROR(txn.UpdateTitleAndPreview(session->id, title, preview));
    }
    ASSIGN_OR_RETURN(report.events_pruned, txn.ReplaceBodies(session->id, stubs));
    ASSIGN_OR_RETURN(unreferenced, txn.DropBlobReferences(session->id, seqs));
    return Status::Ok();
  }));
  // The blobs go only after the commit: removed before it, a failed commit
  // would leave the messages unpruned and their images gone. A crash between
  // the two leaves unreferenced blobs, which gc collects.
  for (const std::string& sha : unreferenced) {
    Result<RemovedBlob> removed = backend.RemoveBlobIfUnreferenced(
        sha, std::numeric_limits<int64_t>::max(), /*dry_run=*/false);
    if (!removed) {
      return Err(Status(removed.error().code(),
                        "the messages were pruned, but a blob could not be deleted "
                        "(`sessiondb gc` deletes it later): " +
                            removed.error().message()));
    }
    if (removed->outcome != BlobRemoval::kRemoved) continue;
    ++report.blobs_deleted;
    report.bytes_freed += removed->size;
  }
  return report;
}

}  // namespace sessiondb::store
