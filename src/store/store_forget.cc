// The Store's forgetting (forget.h, docs/retention.md): the trash, erasure
// with its receipt, the ledger. The rules are written once here over the
// primitives of a write transaction (write_transaction.h); each backend
// scrubs its own pages (WriteOptions::erasure).
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/json_parse.h"
#include "core/message_codec.h"
#include "core/project_path.h"
#include "core/text_rules.h"
#include "core/uuid.h"
#include "sessiondb/forget.h"
#include "store/forget_rules.h"
#include "store/store_front.h"

namespace sessiondb {
namespace {

// The project a session's metadata names ("" when none): the front stores
// it normal, made from `cwd` when it has none (WithNormalProject).
std::string ProjectOf(const Session& session) {
  Result<nlohmann::json> meta = ParseJson(session.metadata_json);
  if (!meta || !meta->is_object()) return "";
  auto it = meta->find("project");
  if (it == meta->end() || !it->is_string()) return "";
  return NormalProjectPath(it->get<std::string>());
}

// True if `path` is `folder` or inside it.
bool InFolder(std::string_view path, std::string_view folder) {
  if (path.empty()) return false;
  if (path == folder || folder == "/") return true;
  return path.size() > folder.size() && path.substr(0, folder.size()) == folder &&
         path[folder.size()] == '/';
}

std::string ScopeOf(const EraseRequest& request, const std::string& project) {
  std::vector<std::string> parts;
  if (request.everything) parts.push_back("everything");
  if (!request.session_ids.empty()) {
    std::string s = request.session_ids.size() == 1 ? "session" : "sessions";
    for (const std::string& id : request.session_ids) s += " " + id;
    parts.push_back(std::move(s));
  }
  if (!project.empty()) parts.push_back("project " + project);
  if (request.before_ms > 0) parts.push_back("before " + std::to_string(request.before_ms) + " ms");
  if (!request.messages.empty()) {
    parts.push_back(std::to_string(request.messages.size()) +
                    (request.messages.size() == 1 ? " message" : " messages"));
  }
  std::string scope;
  for (const std::string& p : parts) scope += (scope.empty() ? "" : ", ") + p;
  if (!request.reason.empty()) scope += " (" + request.reason + ")";
  return scope;
}

// True if the receipt erased something (else no index needs scrubbing).
bool ErasedAnything(const ErasureReceipt& receipt) {
  if (!receipt.sessions.empty() || !receipt.messages.empty()) return true;
  for (const auto& [kind, n] : receipt.counts) {
    if (n > 0) return true;
  }
  return false;
}

}  // namespace

namespace store {
namespace {

// Erases, inside `txn`, each deleted ancestor of `parent` upwards that only
// erased sessions still read (the delete cascade); a trashed one stays,
// restorable.
Status EraseChildlessAncestors(WriteTransaction& txn, std::string parent, ErasedRows* rows,
                               std::vector<std::string>* erased) {
  while (!parent.empty()) {
    ASSIGN_OR_RETURN(std::optional<std::string> grandparent, txn.LockDeletedSession(parent));
    if (!grandparent) break;
    ASSIGN_OR_RETURN(bool still_read, txn.HasForks(parent));
    if (still_read) break;
    RETURN_IF_ERROR(txn.EraseSessionRows(parent, rows));
    erased->push_back(parent);
    parent = std::move(*grandparent);
  }
  return Status::Ok();
}

}  // namespace

std::string StoreFront::Actor() const { return options_.actor; }

// Fills what every receipt carries and its digest; then the ledger entry.
Status StoreFront::SealReceipt(WriteTransaction& txn, const ErasedRows& rows,
                               const std::vector<BlobCandidate>& blobs, std::string_view action,
                               ErasureReceipt* receipt) {
  int64_t blob_bytes = 0;
  receipt->blobs.clear();
  for (const BlobCandidate& b : blobs) {
    receipt->blobs.push_back(b.sha256);
    blob_bytes += b.size;
  }
  receipt->counts = ErasureCounts(rows, static_cast<int64_t>(blobs.size()), blob_bytes);
  receipt->store = backend_->location();
  receipt->namespace_name =
      options_.namespace_name.empty() ? std::string(kDefaultNamespace) : options_.namespace_name;
  receipt->actor = Actor();
  receipt->digest = ErasureReceiptDigest(*receipt);
  if (ErasedAnything(*receipt)) RETURN_IF_ERROR(txn.ScrubDerivedIndexes());
  LedgerEntry entry{.ts_ms = receipt->erased_ms,
                    .actor = receipt->actor,
                    .action = std::string(action),
                    .scope = receipt->scope,
                    .counts = receipt->counts,
                    .receipt_id = receipt->id,
                    .receipt_digest = receipt->digest};
  return internal::ToStatus(txn.AppendLedgerEntry(entry));
}

// After the commit: the blob files (PostgreSQL: rows) the erasure freed.
Status StoreFront::RemoveErasedBlobs(const ErasureReceipt& receipt,
                                     const std::vector<BlobCandidate>& freed) {
  for (const BlobCandidate& blob : freed) {
    Result<RemovedBlob> removed = backend_->RemoveBlobIfUnreferenced(
        blob.stored_name.empty() ? blob.sha256 : blob.stored_name,
        std::numeric_limits<int64_t>::max(), /*dry_run=*/false);
    if (!removed) {
      return Status(removed.error().code(),
                    "the erasure committed (receipt " + receipt.id +
                        "), but a blob could not be deleted (`sessiondb gc` deletes it): " +
                        removed.error().message());
    }
  }
  if (!ErasedAnything(receipt)) return Status::Ok();
  Status scrubbed = backend_->ScrubAfterErasure();
  if (scrubbed.ok()) return scrubbed;
  return Status(scrubbed.code(),
                "the erasure committed (receipt " + receipt.id + "): " + scrubbed.message());
}

Status StoreFront::TrashSession(std::string_view id) {
  RETURN_IF_ERROR(CheckWritable());
  const int64_t now = Now();
  return backend_->RunWriteTransaction({}, [&](WriteTransaction& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<Session> session, txn.LockSession(id, RowLock::kExclusive));
    if (!session) {
      if (txn.earlier_commit_may_have_landed()) {
        ASSIGN_OR_RETURN(std::optional<Session> trashed, txn.LockTrashedSession(id));
        if (trashed && trashed->trashed_ms == now) return Status::Ok();
      }
      return SessionNotFound(id);
    }
    RETURN_IF_ERROR(txn.MoveToTrash(session->id, now));
    return internal::ToStatus(
        txn.AppendLedgerEntry({.ts_ms = now,
                               .actor = Actor(),
                               .action = "trash",
                               .scope = "session " + session->id,
                               .counts = {{"sessions", 1}, {"messages", session->message_count}}}));
  });
}

Result<Session> StoreFront::RestoreFromTrash(std::string_view id) {
  RETURN_IF_ERROR(CheckWritable());
  const int64_t now = Now();
  RETURN_IF_ERROR(backend_->RunWriteTransaction({}, [&](WriteTransaction& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<Session> session, txn.LockTrashedSession(id));
    if (!session) {
      if (txn.earlier_commit_may_have_landed()) {
        ASSIGN_OR_RETURN(std::optional<Session> live, txn.LockSession(id, RowLock::kShare));
        if (live) return Status::Ok();
      }
      return Status::NotFound("session " + std::string(id) +
                              " is not in the trash (`sessiondb trash list` lists it)");
    }
    RETURN_IF_ERROR(txn.TakeOutOfTrash(session->id));
    return internal::ToStatus(
        txn.AppendLedgerEntry({.ts_ms = now,
                               .actor = Actor(),
                               .action = "restore",
                               .scope = "session " + session->id,
                               .counts = {{"sessions", 1}, {"messages", session->message_count}}}));
  }));
  return backend_->LoadSession(id);
}

Result<ErasureReceipt> StoreFront::EmptyTrash(int64_t trashed_before_ms) {
  RETURN_IF_ERROR(CheckWritable());
  ErasureReceipt receipt;
  std::vector<BlobCandidate> freed;  // the blobs the erasure frees, as SealReceipt lists them
  const WriteOptions erasing{.erases_text = true};
  RETURN_IF_ERROR(backend_->RunWriteTransaction(erasing, [&](WriteTransaction& txn) -> Status {
    receipt = {};
    freed.clear();
    receipt.erased_ms = Now();
    receipt.id = NewUuidV7(receipt.erased_ms);
    receipt.scope = "the trash before " + std::to_string(trashed_before_ms) + " ms";
    ErasedRows rows;
    ASSIGN_OR_RETURN(std::vector<Session> trashed, txn.LockTrashedBefore(trashed_before_ms));
    for (const Session& session : trashed) {
      // Erased by the cascade of a fork processed before it.
      ASSIGN_OR_RETURN(std::optional<Session> still, txn.LockTrashedSession(session.id));
      if (!still) continue;
      ASSIGN_OR_RETURN(bool has_forks, txn.HasForks(session.id));
      if (has_forks) {
        // The delete cascade: forks still read its events; hidden for good.
        RETURN_IF_ERROR(txn.HideSession(session.id));
        receipt.kept_for_forks.push_back(session.id);
        continue;
      }
      RETURN_IF_ERROR(txn.EraseSessionRows(session.id, &rows));
      receipt.sessions.push_back(session.id);
      RETURN_IF_ERROR(EraseChildlessAncestors(txn, session.parent_id, &rows, &receipt.sessions));
    }
    // A session hidden above and erased later by its last fork's cascade
    // is erased, not kept.
    std::erase_if(receipt.kept_for_forks, [&](const std::string& id) {
      return std::find(receipt.sessions.begin(), receipt.sessions.end(), id) !=
             receipt.sessions.end();
    });
    ASSIGN_OR_RETURN(std::vector<BlobCandidate> blobs, txn.BlobsNoLongerReferenced(rows.blobs));
    if (receipt.sessions.empty() && receipt.kept_for_forks.empty()) {
      receipt.counts = ErasureCounts(rows, 0, 0);
      receipt.store = backend_->location();
      receipt.namespace_name = options_.namespace_name.empty() ? std::string(kDefaultNamespace)
                                                               : options_.namespace_name;
      receipt.actor = Actor();
      receipt.digest = ErasureReceiptDigest(receipt);
      return Status::Ok();  // nothing to record
    }
    freed = blobs;
    return SealReceipt(txn, rows, blobs, "empty-trash", &receipt);
  }));
  RETURN_IF_ERROR(RemoveErasedBlobs(receipt, freed));
  return receipt;
}

Result<ErasureReceipt> StoreFront::Erase(const EraseRequest& request) {
  RETURN_IF_ERROR(CheckWritable());
  if (request.session_ids.empty() && request.project.empty() && request.before_ms <= 0 &&
      !request.everything && request.messages.empty()) {
    return Err(Status::InvalidArgument(
        "an erasure needs sessions, a project, a date, messages or everything"));
  }
  for (const std::string& id : request.session_ids) RETURN_IF_ERROR(ValidateSessionId(id));
  const std::string project = request.project.empty() ? "" : NormalProjectPath(request.project);
  ErasureReceipt receipt;
  std::vector<BlobCandidate> freed;  // the blobs the erasure frees, as SealReceipt lists them
  const WriteOptions erasing{.erases_text = true};
  RETURN_IF_ERROR(backend_->RunWriteTransaction(erasing, [&](WriteTransaction& txn) -> Status {
    receipt = {};
    freed.clear();
    receipt.erased_ms = Now();
    receipt.id = NewUuidV7(receipt.erased_ms);
    receipt.scope = ScopeOf(request, project);
    ASSIGN_OR_RETURN(std::vector<Session> all, txn.LockAllSessions());
    std::map<std::string, const Session*> by_id;
    std::multimap<std::string, std::string> children;
    for (const Session& s : all) {
      by_id[s.id] = &s;
      if (!s.parent_id.empty()) children.emplace(s.parent_id, s.id);
    }
    std::set<std::string> chosen;
    for (const std::string& id : request.session_ids) {
      if (!by_id.count(id)) return SessionNotFound(id);
      chosen.insert(id);
    }
    for (const Session& s : all) {
      if (request.everything || (!project.empty() && InFolder(ProjectOf(s), project)) ||
          (request.before_ms > 0 && s.updated_ms < request.before_ms)) {
        chosen.insert(s.id);
      }
    }
    // A fork's inherited events are its parent's bytes: erasing a session
    // erases every fork that reads it.
    std::vector<std::string> pending(chosen.begin(), chosen.end());
    while (!pending.empty()) {
      const std::string id = std::move(pending.back());
      pending.pop_back();
      auto [from, to] = children.equal_range(id);
      for (auto it = from; it != to; ++it) {
        if (chosen.insert(it->second).second) pending.push_back(it->second);
      }
    }
    ErasedRows rows;
    for (const std::string& id : chosen) {
      RETURN_IF_ERROR(txn.EraseSessionRows(id, &rows));
      receipt.sessions.push_back(id);
    }
    for (const std::string& id : chosen) {
      const std::string& parent = by_id[id]->parent_id;
      if (parent.empty() || chosen.count(parent)) continue;
      RETURN_IF_ERROR(EraseChildlessAncestors(txn, parent, &rows, &receipt.sessions));
    }
    if (request.everything) {
      RETURN_IF_ERROR(txn.EraseCodeWrites("", &rows));
    } else if (!project.empty()) {
      RETURN_IF_ERROR(txn.EraseCodeWrites(project, &rows));
    }
    // Single messages, erased where they stand (as a prune leaves them).
    std::map<std::string, std::vector<int64_t>> by_session;
    for (const MessageRef& m : request.messages) {
      if (!by_id.count(m.session_id)) return SessionNotFound(m.session_id);
      if (std::find(receipt.sessions.begin(), receipt.sessions.end(), m.session_id) !=
          receipt.sessions.end()) {
        continue;  // erased whole
      }
      by_session[m.session_id].push_back(m.seq);
    }
    for (auto& [session_id, seqs] : by_session) {
      std::sort(seqs.begin(), seqs.end());
      seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
      const Session& session = *by_id[session_id];
      std::vector<BodyUpdate> stubs;
      std::vector<std::pair<Role, std::string>> texts;
      for (int64_t seq : seqs) {
        ASSIGN_OR_RETURN(std::optional<Event> event, txn.ReadOwnEvent(session_id, seq));
        if (!event || event->type != EventType::kMessage) {
          return Status::NotFound("session " + session_id + " has no message of its own at seq " +
                                  std::to_string(seq));
        }
        ASSIGN_OR_RETURN(std::vector<StoredMessageText> stored,
                         txn.ReadOwnMessages(session_id, seq, seq));
        Message stub;
        stub.role = event->message.role;
        stub.pruned = true;
        ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(stub));
        stubs.push_back({seq, std::move(body)});
        for (StoredMessageText& m : stored) texts.emplace_back(m.role, std::move(m.text));
        receipt.messages.push_back({session_id, seq});
      }
      std::string title = session.title;
      std::string preview = session.preview;
      ScrubPrunedTexts(texts, "", &title, &preview);
      if (title != session.title || preview != session.preview) {
        RETURN_IF_ERROR(txn.UpdateTitleAndPreview(session_id, title, preview));
      }
      ASSIGN_OR_RETURN(int64_t changed, txn.ReplaceBodies(session_id, stubs));
      rows.messages += changed;
      ASSIGN_OR_RETURN(std::set<std::string> dropped, txn.DropBlobReferences(session_id, seqs));
      rows.blobs.insert(dropped.begin(), dropped.end());
    }
    ASSIGN_OR_RETURN(std::vector<BlobCandidate> blobs, txn.BlobsNoLongerReferenced(rows.blobs));
    freed = blobs;
    // Rows are gone from the tables, but not from the WAL segments and
    // backups taken before: destroying the key they were sealed under reaches those.
    if (request.everything) {
      ASSIGN_OR_RETURN(receipt.destroyed_key_id, txn.DestroyDataKey());
    }
    return SealReceipt(txn, rows, blobs, "erase", &receipt);
  }));
  RETURN_IF_ERROR(RemoveErasedBlobs(receipt, freed));
  return receipt;
}

Result<ErasureCheck> StoreFront::VerifyErased(const ErasureReceipt& receipt) {
  ErasureCheck check;
  check.digest_ok = ErasureReceiptDigest(receipt) == receipt.digest;
  ++check.checks;
  if (!check.digest_ok) {
    check.problems.push_back(
        "the receipt's digest does not match its content: it was changed "
        "after it was issued");
  }
  RETURN_IF_ERROR(backend_->RunWriteTransaction({}, [&](WriteTransaction& txn) -> Status {
    // Run again from the start after a transient failure: keep only the digest's verdict.
    check.problems.resize(check.digest_ok ? 0 : 1);
    check.checks = 1;
    for (const std::string& id : receipt.sessions) {
      ErasedRows rows;
      ASSIGN_OR_RETURN(bool present, txn.CountSessionRows(id, &rows));
      check.checks += 9;
      if (present) check.problems.push_back("session " + id + " still has its row");
      const std::pair<const char*, int64_t> left[] = {
          {"events", rows.events},
          {"drafts", rows.drafts},
          {"usage rows", rows.usage_rows},
          {"code writes", rows.code_writes},
          {"search documents", rows.search_documents},
          {"embeddings", rows.embeddings},
          {"file versions", rows.file_versions},
          {"blob references", static_cast<int64_t>(rows.blobs.size())}};
      for (const auto& [what, n] : left) {
        if (n > 0) {
          check.problems.push_back("session " + id + " still has " + std::to_string(n) + " " +
                                   what);
        }
      }
    }
    for (const MessageRef& m : receipt.messages) {
      ++check.checks;
      ASSIGN_OR_RETURN(std::optional<Event> event, txn.ReadOwnEvent(m.session_id, m.seq));
      if (!event) continue;  // erased with its session since
      if (!event->message.pruned || !event->message.parts.empty()) {
        check.problems.push_back("message " + std::to_string(m.seq) + " of session " +
                                 m.session_id + " is not an erased stub");
      }
    }
    // Stored and referenced by no message: left behind. Referenced again
    // (a surviving message names those bytes): fine.
    const std::set<std::string> blobs(receipt.blobs.begin(), receipt.blobs.end());
    check.checks += static_cast<int64_t>(blobs.size());
    ASSIGN_OR_RETURN(std::vector<BlobCandidate> left, txn.BlobsNoLongerReferenced(blobs));
    for (const BlobCandidate& blob : left) {
      check.problems.push_back("blob " + blob.sha256 +
                               " is still stored though nothing refers to it; `sessiondb gc` "
                               "deletes it");
    }
    if (!receipt.destroyed_key_id.empty()) {
      ++check.checks;
      ASSIGN_OR_RETURN(std::string current, txn.CurrentDataKeyId());
      if (current == receipt.destroyed_key_id) {
        check.problems.push_back("data key " + current +
                                 " is still the namespace's key: it was not destroyed");
      }
    }
    return Status::Ok();
  }));
  return check;
}

Result<std::vector<LedgerEntry>> StoreFront::ReadLedger(const LedgerQuery& query) {
  RETURN_IF_ERROR(ValidateLedgerQuery(query));
  return backend_->ReadLedger(query);
}

}  // namespace store
}  // namespace sessiondb
