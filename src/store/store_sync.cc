// Two-way sync of two stores (store_sync.h, docs/sync.md), over the public
// Store API; only the sync's own state (its identity, the base of each peer,
// the sessions being replaced) is kept through the front's backend, as
// settings.
#include "store/store_sync.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <span>
#include <utility>

#include "blob/sha256.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/uuid.h"
#include "store/store_copy.h"
#include "store/store_front.h"

namespace sessiondb {
// Named inside the anonymous namespace: the unity build joins this file with
// others of src/store/ that have helpers of the same names.
namespace {
namespace two_way {

// Where the sync keeps its state, as settings of each store.
constexpr std::string_view kSettingSyncId = "sync_id";            // this store's identity
constexpr std::string_view kSettingSyncBase = "sync_base/";       // + the peer's identity
constexpr std::string_view kSettingSyncPending = "sync_pending";  // sessions being replaced
// + the peer's identity: the id of the last file version of this store the
// peer was given.
constexpr std::string_view kSettingSyncVersions = "sync_versions/";
constexpr int kListPage = 1000;
constexpr int kBaseVersion = 1;

// What both stores held of a session at the end of the last run.
struct BaseEntry {
  int64_t seq = 0;
  bool trashed = false;
  bool archived = false;
  std::string title_hash;
};

struct Base {
  int64_t generation = 0;
  std::map<std::string, BaseEntry> sessions;
};

std::string TitleHash(std::string_view title) { return blob::Sha256Hex(title).substr(0, 16); }

BaseEntry EntryOf(const Session& s, bool trashed) {
  return {.seq = s.last_seq,
          .trashed = trashed,
          .archived = s.archived,
          .title_hash = TitleHash(s.title)};
}

int64_t CountMessages(std::span<const Event> events) {
  return std::ranges::count_if(events,
                               [](const Event& e) { return e.type == EventType::kMessage; });
}

// One of the two stores, as this run sees it.
struct Side {
  Store* store = nullptr;
  store::Backend* backend = nullptr;
  std::string sync_id;
  std::map<std::string, Session> live;
  std::map<std::string, Session> trashed;
  std::set<std::string> pending;  // sessions this store is having replaced
  bool pending_dirty = false;
  SyncChanges* changes = nullptr;

  bool Has(const std::string& id) const { return live.contains(id) || trashed.contains(id); }
  const Session& Get(const std::string& id) const {
    auto it = live.find(id);
    return it != live.end() ? it->second : trashed.at(id);
  }
  // True if a session this store lists (live or in the trash) forks `id`.
  bool HasForksOf(const std::string& id) const {
    for (const auto* sessions : {&live, &trashed}) {
      for (const auto& [child, s] : *sessions) {
        if (s.parent_id == id) return true;
      }
    }
    return false;
  }
  BlobSourceFn BlobSource() const {
    Store* from = store;
    return [from](std::string_view sha) { return from->ReadBlob(sha, /*verify=*/false); };
  }
};

Result<std::string> LoadOrMakeSyncId(store::Backend& backend) {
  ASSIGN_OR_RETURN(std::optional<std::string> id, backend.LoadSetting(kSettingSyncId));
  if (id && !id->empty()) return *id;
  const std::string made = NewUuidV7(SystemNowMs());
  RETURN_IF_ERROR(backend.StoreSetting(kSettingSyncId, made));
  return made;
}

// The base this store keeps for `peer`; an empty one when none (or one it
// cannot read: a base only ever makes the sync keep more).
Result<Base> LoadBase(store::Backend& backend, const std::string& peer) {
  Base base;
  ASSIGN_OR_RETURN(std::optional<std::string> text,
                   backend.LoadSetting(std::string(kSettingSyncBase) + peer));
  if (!text) return base;
  Result<nlohmann::json> doc = ParseJson(*text);
  if (!doc || MemberOr(*doc, "version", 0) != kBaseVersion) return base;
  base.generation = MemberOr(*doc, "generation", int64_t{0});
  const nlohmann::json& sessions = MemberOf(*doc, "sessions");
  if (!sessions.is_object()) return base;
  for (auto it = sessions.begin(); it != sessions.end(); ++it) {
    const nlohmann::json& v = it.value();
    if (!v.is_array() || v.size() != 4 || !v[0].is_number_integer() || !v[1].is_boolean() ||
        !v[2].is_boolean() || !v[3].is_string()) {
      continue;
    }
    base.sessions[it.key()] = {.seq = v[0].get<int64_t>(),
                               .trashed = v[1].get<bool>(),
                               .archived = v[2].get<bool>(),
                               .title_hash = v[3].get<std::string>()};
  }
  return base;
}

Status SaveBase(store::Backend& backend, const std::string& peer, const Base& base) {
  nlohmann::json sessions = nlohmann::json::object();
  for (const auto& [id, e] : base.sessions) {
    sessions[id] = nlohmann::json::array({e.seq, e.trashed, e.archived, e.title_hash});
  }
  const nlohmann::json doc = {
      {"version", kBaseVersion}, {"generation", base.generation}, {"sessions", sessions}};
  return backend.StoreSetting(std::string(kSettingSyncBase) + peer, doc.dump());
}

Result<std::set<std::string>> LoadPending(store::Backend& backend) {
  std::set<std::string> pending;
  ASSIGN_OR_RETURN(std::optional<std::string> text, backend.LoadSetting(kSettingSyncPending));
  if (!text) return pending;
  Result<nlohmann::json> doc = ParseJson(*text);
  if (!doc || !doc->is_array()) return pending;
  for (const nlohmann::json& id : *doc) {
    if (id.is_string()) pending.insert(id.get<std::string>());
  }
  return pending;
}

Status SavePending(Side& side) {
  side.pending_dirty = false;
  return side.backend->StoreSetting(kSettingSyncPending, nlohmann::json(side.pending).dump());
}

Status ListAll(Side& side) {
  for (bool trash : {false, true}) {
    ListOptions options{.limit = kListPage, .archived = ArchiveFilter::kAll, .trash = trash};
    while (true) {
      ASSIGN_OR_RETURN(SessionPage page, side.store->ListSessions(options));
      for (Session& s : page.sessions) {
        std::string id = s.id;
        (trash ? side.trashed : side.live)[id] = std::move(s);
      }
      if (page.next_cursor.empty()) break;
      options.cursor = page.next_cursor;
    }
  }
  return Status::Ok();
}

// The id of the event at `seq` of the session's history ("" past its end).
Result<std::string> EventIdAt(Store& store, const std::string& session_id, int64_t seq) {
  ASSIGN_OR_RETURN(std::vector<Event> events, store.ReadEvents(session_id, seq, 1));
  if (events.empty() || events[0].seq != seq) return std::string();
  return events[0].id;
}

// A stable UUID-shaped id made from `text`: the fork a divergence makes gets
// the same ids of sessions and events whichever run (and whichever store)
// makes it, so a rerun finds it.
std::string DerivedId(std::string_view text) {
  const std::string h = blob::Sha256Hex(text);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-8" + h.substr(13, 3) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

class Sync {
 public:
  Sync(Side& a, Side& b, const SyncOptions& options, SyncReport& report)
      : side_{&a, &b}, options_(options), report_(report) {}

  // Reconciles one session present in at least one store or in the base.
  Status Reconcile(const std::string& id, const BaseEntry* base);
  // Erases (or deletes) in one store what the other has forgotten.
  Status ApplyForgets();

  std::map<std::string, BaseEntry>& new_base() { return new_base_; }

 private:
  Status CopyNewSession(Side& from, Side& to, const Session& session, bool* copied);
  Status CopyEvents(Side& from, Side& to, const std::string& id, int64_t from_seq);
  Status AlignAttributes(const std::string& id, const BaseEntry* base);
  Status ResolveDivergence(const std::string& id, int64_t common_max);
  Status Refresh(Side& side, const std::string& id);

  Side* side_[2];
  const SyncOptions& options_;
  SyncReport& report_;
  std::map<std::string, BaseEntry> new_base_;
  // (present side, id) of the sessions the other store forgot.
  std::vector<std::pair<int, std::string>> forgets_;
};

Status Sync::Refresh(Side& side, const std::string& id) {
  ASSIGN_OR_RETURN(Session s, side.store->GetSession(id));
  side.trashed.erase(id);
  side.live[id] = std::move(s);
  return Status::Ok();
}

Status Sync::CopyEvents(Side& from, Side& to, const std::string& id, int64_t from_seq) {
  const int64_t batch = std::max<int64_t>(1, options_.batch_events);
  while (true) {
    ASSIGN_OR_RETURN(std::vector<Event> events, from.store->ReadEvents(id, from_seq, batch));
    if (events.empty()) break;
    RETURN_IF_ERROR(to.store->RestoreEvents(id, events, from.BlobSource()));
    to.changes->events_copied += std::ssize(events);
    to.changes->messages_copied += CountMessages(events);
    from_seq = events.back().seq + 1;
    if (std::ssize(events) < batch) break;
  }
  return Refresh(to, id);
}

Status Sync::CopyNewSession(Side& from, Side& to, const Session& session, bool* copied) {
  *copied = false;
  if (!session.parent_id.empty()) {
    // A fork is restored as a fork, in one transaction (its index entry's
    // count includes what it inherits), once its parent is there.
    if (!to.live.contains(session.parent_id)) {
      report_.skipped.push_back("session " + session.id + ": a fork of " + session.parent_id +
                                ", which the other store does not hold");
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(std::vector<Event> events,
                     from.store->ReadEvents(session.id, session.fork_seq + 1));
    RETURN_IF_ERROR(to.store->RestoreSession(session, events, from.BlobSource()));
    to.changes->events_copied += std::ssize(events);
    to.changes->messages_copied += CountMessages(events);
  } else {
    // A root in runs: the first with its index entry, the rest continuing it.
    ASSIGN_OR_RETURN(
        std::vector<Event> first,
        from.store->ReadEvents(session.id, 1, std::max<int64_t>(1, options_.batch_events)));
    RETURN_IF_ERROR(to.store->RestoreSession(session, first, from.BlobSource()));
    to.changes->events_copied += std::ssize(first);
    to.changes->messages_copied += CountMessages(first);
    if (!first.empty()) RETURN_IF_ERROR(CopyEvents(from, to, session.id, first.back().seq + 1));
  }
  ++to.changes->sessions_created;
  RETURN_IF_ERROR(Refresh(to, session.id));
  *copied = true;
  return Status::Ok();
}

// Both stores appended to `id` past a common seq. The branch whose first
// new event is older stays the session in both; the other store's branch
// becomes a fork of it at the common seq (made in the winner first, so that
// nothing is lost at any instant), and the loser's session is replaced by the
// winner's under a pending mark a rerun honours.
Status Sync::ResolveDivergence(const std::string& id, int64_t common_max) {
  Side& a = *side_[0];
  Side& b = *side_[1];
  // The last common seq: the ids agree up to it and differ after it.
  int64_t lo = 0;
  int64_t hi = common_max;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    ASSIGN_OR_RETURN(std::string ia, EventIdAt(*a.store, id, mid));
    ASSIGN_OR_RETURN(std::string ib, EventIdAt(*b.store, id, mid));
    (ia == ib ? lo : hi) = mid;
  }
  const int64_t k = lo;
  const Session& sa = a.live.at(id);
  const Session& sb = b.live.at(id);
  if (sa.parent_id != sb.parent_id || sa.fork_seq != sb.fork_seq || k < sa.fork_seq) {
    report_.skipped.push_back("session " + id +
                              ": the two stores hold different histories it inherits; "
                              "left as it is");
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(std::vector<Event> ea, a.store->ReadEvents(id, k + 1, 1));
  ASSIGN_OR_RETURN(std::vector<Event> eb, b.store->ReadEvents(id, k + 1, 1));
  if (ea.empty() || eb.empty())
    return Status::Corruption("session " + id + ": log changed mid-sync");
  const bool a_first =
      ea[0].ts_ms < eb[0].ts_ms || (ea[0].ts_ms == eb[0].ts_ms && ea[0].id < eb[0].id);
  Side& winner = a_first ? a : b;
  Side& loser = a_first ? b : a;
  const Event& loser_first = a_first ? eb[0] : ea[0];
  if (loser.HasForksOf(id)) {
    report_.skipped.push_back("session " + id +
                              ": appended to in both stores since the last sync, and forked "
                              "where its later branch was written; left as it is");
    return Status::Ok();
  }
  const Session lost = loser.live.at(id);
  const std::string stem = DerivedId(loser_first.id);
  const std::string fork_id = id.substr(0, 80) + ".sync-" + stem.substr(0, 8) + stem.substr(9, 4);

  // The loser's branch, as the fork's own events under ids of their own.
  ASSIGN_OR_RETURN(std::vector<Event> history, loser.store->ReadEvents(id, 1));
  std::vector<Event> own(history.begin() + k, history.end());
  for (Event& e : own) {
    e.id = DerivedId("sessiondb sync fork " + fork_id + " " + e.id);
    e.session_id = fork_id;
    if (e.type == EventType::kMessage) {
      e.message.id = e.id;
      e.message.session_id = fork_id;
    }
  }
  std::vector<Event> whole(history.begin(), history.begin() + k);
  whole.insert(whole.end(), own.begin(), own.end());
  Session fork = lost;
  fork.id = fork_id;
  fork.parent_id = id;
  fork.fork_seq = k;
  fork.created_ms = own.front().ts_ms;
  fork.message_count = CountMessages(ApplyRewinds(whole));
  fork.trashed_ms = 0;

  auto step = [this](std::string_view name) {
    return options_.after_step ? options_.after_step(name) : Status::Ok();
  };
  loser.pending.insert(id);
  RETURN_IF_ERROR(SavePending(loser));
  RETURN_IF_ERROR(step("marked"));
  if (!winner.live.contains(fork_id)) {
    auto there = winner.store->GetSession(fork_id);
    if (!there && there.error().code() != StatusCode::kNotFound) return Err(there.error());
    if (!there) {
      RETURN_IF_ERROR(winner.store->RestoreSession(fork, own, loser.BlobSource()));
      ++winner.changes->sessions_created;
      winner.changes->events_copied += std::ssize(own);
      winner.changes->messages_copied += CountMessages(own);
    }
    RETURN_IF_ERROR(Refresh(winner, fork_id));
  }
  RETURN_IF_ERROR(step("fork-written"));
  // The loser's session goes, and comes back as the winner's.
  RETURN_IF_ERROR(loser.store->DeleteSession(id));
  loser.live.erase(id);
  RETURN_IF_ERROR(step("deleted"));
  bool copied = false;
  RETURN_IF_ERROR(CopyNewSession(winner, loser, winner.live.at(id), &copied));
  RETURN_IF_ERROR(step("restored"));
  if (!loser.live.contains(fork_id)) {
    RETURN_IF_ERROR(CopyNewSession(winner, loser, winner.live.at(fork_id), &copied));
  }
  loser.pending.erase(id);
  RETURN_IF_ERROR(SavePending(loser));
  ++report_.forks_made;
  new_base_[fork_id] = EntryOf(winner.live.at(fork_id), false);
  return Status::Ok();
}

// Renames and the archive flag: the store that changed one since the last
// run gives it to the other. With no base, or both changed, each keeps its own.
Status Sync::AlignAttributes(const std::string& id, const BaseEntry* base) {
  if (base == nullptr) return Status::Ok();
  Session& sa = side_[0]->live.at(id);
  Session& sb = side_[1]->live.at(id);
  if (sa.archived != sb.archived) {
    const bool a_changed = sa.archived != base->archived;
    const bool b_changed = sb.archived != base->archived;
    if (a_changed != b_changed) {
      Side& to = a_changed ? *side_[1] : *side_[0];
      const bool value = a_changed ? sa.archived : sb.archived;
      RETURN_IF_ERROR(to.store->SetArchived(id, value));
      ++to.changes->updated;
      (a_changed ? sb : sa).archived = value;
    }
  }
  if (sa.title != sb.title) {
    const bool a_changed = TitleHash(sa.title) != base->title_hash;
    const bool b_changed = TitleHash(sb.title) != base->title_hash;
    if (a_changed != b_changed) {
      Side& to = a_changed ? *side_[1] : *side_[0];
      const std::string title = a_changed ? sa.title : sb.title;
      RETURN_IF_ERROR(to.store->RenameSession(id, title));
      ++to.changes->updated;
      (a_changed ? sb : sa).title = title;
    }
  }
  return Status::Ok();
}

Status Sync::Reconcile(const std::string& id, const BaseEntry* base) {
  Side& a = *side_[0];
  Side& b = *side_[1];
  const bool in_a = a.Has(id);
  const bool in_b = b.Has(id);
  if (!in_a && !in_b) return Status::Ok();
  if (in_a != in_b) {
    Side& have = in_a ? a : b;
    Side& lack = in_a ? b : a;
    if (base != nullptr && !lack.pending.contains(id)) {
      forgets_.emplace_back(in_a ? 0 : 1, id);  // the other store forgot it
      return Status::Ok();
    }
    // A session in the trash before any sync saw it stays where it is: its
    // log cannot be read until it is restored.
    if (!have.live.contains(id)) return Status::Ok();
    bool copied = false;
    RETURN_IF_ERROR(CopyNewSession(have, lack, have.live.at(id), &copied));
    if (copied) {
      if (lack.pending.erase(id) > 0) RETURN_IF_ERROR(SavePending(lack));
      new_base_[id] = EntryOf(lack.live.at(id), false);
    }
    return Status::Ok();
  }
  // In both: first the trash. One side trashed it since the last run (or
  // no run saw it: the trash wins, it can be restored) or restored it.
  const bool ta = a.trashed.contains(id);
  const bool tb = b.trashed.contains(id);
  if (ta != tb) {
    Side& in_trash = ta ? a : b;
    Side& out = ta ? b : a;
    if (base == nullptr || !base->trashed) {
      RETURN_IF_ERROR(out.store->TrashSession(id));
      ++out.changes->trashed;
      out.trashed[id] = out.live.at(id);
      out.live.erase(id);
    } else {
      ASSIGN_OR_RETURN(Session back, in_trash.store->RestoreFromTrash(id));
      ++in_trash.changes->restored;
      in_trash.trashed.erase(id);
      in_trash.live[id] = back;
    }
  }
  if (a.trashed.contains(id)) {
    BaseEntry e = EntryOf(a.trashed.at(id), true);
    if (base != nullptr && b.trashed.at(id).last_seq != e.seq) e.seq = base->seq;
    new_base_[id] = e;
    return Status::Ok();
  }
  // Both live: the events past the shorter log's end, when the two agree up
  // to it (the ids at its last seq match), else a divergence.
  const int64_t la = a.live.at(id).last_seq;
  const int64_t lb = b.live.at(id).last_seq;
  const bool unchanged = base != nullptr && la == base->seq && lb == base->seq;
  if (!unchanged) {
    const int64_t m = std::min(la, lb);
    bool agree = true;
    if (m > 0) {
      ASSIGN_OR_RETURN(std::string ia, EventIdAt(*a.store, id, m));
      ASSIGN_OR_RETURN(std::string ib, EventIdAt(*b.store, id, m));
      agree = ia == ib;
    }
    if (!agree) {
      const size_t skipped = report_.skipped.size();
      RETURN_IF_ERROR(ResolveDivergence(id, m));
      if (report_.skipped.size() != skipped) {
        if (base != nullptr) new_base_[id] = *base;
        return Status::Ok();
      }
    } else if (la < lb) {
      RETURN_IF_ERROR(CopyEvents(b, a, id, la + 1));
    } else if (lb < la) {
      RETURN_IF_ERROR(CopyEvents(a, b, id, lb + 1));
    }
  }
  RETURN_IF_ERROR(AlignAttributes(id, base));
  // Whole in both: a replacement a killed run left marked is done.
  for (Side* side : side_) {
    if (side->pending.erase(id) > 0) side->pending_dirty = true;
  }
  new_base_[id] = EntryOf(a.live.at(id), false);
  return Status::Ok();
}

Status Sync::ApplyForgets() {
  // Per store: the sessions the other store erased in one erasure (which
  // takes their forks with them, as it did there); those it deleted while
  // forks of them remain there, deleted here too, forks first, so they are
  // kept for those forks here as well.
  for (int present = 0; present < 2; ++present) {
    Side& here = *side_[present];
    const Side& other = *side_[1 - present];
    EraseRequest erase;
    erase.reason = "sync: erased in the other store";
    std::vector<std::string> deletes;
    for (const auto& [side, id] : forgets_) {
      if (side != present) continue;
      if (other.HasForksOf(id)) {
        if (here.live.contains(id)) deletes.push_back(id);
      } else {
        erase.session_ids.push_back(id);
      }
    }
    if (!erase.session_ids.empty()) {
      ASSIGN_OR_RETURN(ErasureReceipt receipt, here.store->Erase(erase));
      here.changes->erased += std::ssize(receipt.sessions);
    }
    for (auto it = deletes.rbegin(); it != deletes.rend(); ++it) {  // forks first
      RETURN_IF_ERROR(here.store->DeleteSession(*it));
      ++here.changes->erased;
    }
  }
  return Status::Ok();
}

}  // namespace two_way
}  // namespace

Result<SyncReport> SyncStores(Store& a, Store& b, const SyncOptions& options,
                              const ProgressFn& progress) {
  SyncReport report;
  two_way::Side side_a;
  two_way::Side side_b;
  two_way::Side* sides[2] = {&side_a, &side_b};
  Store* stores[2] = {&a, &b};
  SyncChanges* changes[2] = {&report.into_a, &report.into_b};
  for (int i = 0; i < 2; ++i) {
    auto* front = dynamic_cast<store::StoreFront*>(stores[i]);
    if (front == nullptr) return Err(Status::InvalidArgument("sync needs stores Store::Open made"));
    sides[i]->store = stores[i];
    sides[i]->backend = &front->backend();
    sides[i]->changes = changes[i];
    ASSIGN_OR_RETURN(sides[i]->sync_id, two_way::LoadOrMakeSyncId(*sides[i]->backend));
  }
  if (side_a.sync_id == side_b.sync_id) {
    return Err(Status::InvalidArgument("both stores are the same store (sync id " + side_a.sync_id +
                                       "): nothing to sync"));
  }
  ASSIGN_OR_RETURN(two_way::Base base_a, two_way::LoadBase(*side_a.backend, side_b.sync_id));
  ASSIGN_OR_RETURN(two_way::Base base_b, two_way::LoadBase(*side_b.backend, side_a.sync_id));
  const two_way::Base& base = base_a.generation >= base_b.generation ? base_a : base_b;
  for (two_way::Side* side : sides) {
    ASSIGN_OR_RETURN(side->pending, two_way::LoadPending(*side->backend));
    RETURN_IF_ERROR(two_way::ListAll(*side));
  }

  // Parents before their forks: each session's depth in the fork tree.
  std::map<std::string, std::string> parent_of;
  std::set<std::string> ids;
  for (two_way::Side* side : sides) {
    for (const auto* sessions : {&side->live, &side->trashed}) {
      for (const auto& [id, s] : *sessions) {
        ids.insert(id);
        if (!s.parent_id.empty()) parent_of[id] = s.parent_id;
      }
    }
  }
  for (const auto& [id, e] : base.sessions) ids.insert(id);
  std::vector<std::pair<int, std::string>> order;
  for (const std::string& id : ids) {
    int depth = 0;
    for (auto it = parent_of.find(id); it != parent_of.end() && depth < 10'000;
         it = parent_of.find(it->second)) {
      ++depth;
    }
    order.emplace_back(depth, id);
  }
  std::sort(order.begin(), order.end());

  two_way::Sync sync(side_a, side_b, options, report);
  int64_t done = 0;
  for (const auto& [depth, id] : order) {
    auto it = base.sessions.find(id);
    RETURN_IF_ERROR(sync.Reconcile(id, it == base.sessions.end() ? nullptr : &it->second));
    ++report.sessions_examined;
    if (progress) progress(++done, std::ssize(order));
  }
  // Forgetting last, forks first: a session both held that one store no
  // longer has is erased (or deleted) in the other.
  RETURN_IF_ERROR(sync.ApplyForgets());
  // Then the file versions each store recorded since it last gave the other
  // its versions: after the erasures, so none of an erased session travels.
  // A version copied in comes back once the other way and is found there.
  for (int from = 0; from < 2; ++from) {
    two_way::Side& here = *sides[from];
    two_way::Side& there = *sides[1 - from];
    const std::string key = std::string(two_way::kSettingSyncVersions) + there.sync_id;
    ASSIGN_OR_RETURN(std::optional<std::string> saved, here.backend->LoadSetting(key));
    int64_t after_id = 0;  // none, or unreadable: from the start (copies are found there)
    if (saved) std::from_chars(saved->data(), saved->data() + saved->size(), after_id);
    int64_t last_id = after_id;
    ASSIGN_OR_RETURN(const int64_t copied,
                     CopyFileVersionsAfter(*here.store, *there.store, after_id, &last_id));
    there.changes->file_versions_copied += copied;
    if (last_id != after_id) {
      RETURN_IF_ERROR(here.backend->StoreSetting(key, std::to_string(last_id)));
    }
  }

  two_way::Base next;
  next.generation = std::max(base_a.generation, base_b.generation) + 1;
  next.sessions = std::move(sync.new_base());
  RETURN_IF_ERROR(two_way::SaveBase(*side_a.backend, side_b.sync_id, next));
  RETURN_IF_ERROR(two_way::SaveBase(*side_b.backend, side_a.sync_id, next));
  for (two_way::Side* side : sides) {
    if (side->pending_dirty) RETURN_IF_ERROR(two_way::SavePending(*side));
  }
  return report;
}

}  // namespace sessiondb
