#include "store/store_copy.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <vector>

namespace sessiondb {

namespace {
constexpr int kPage = 500;

// What tells two versions without a tool call apart (CopyStore).
using VersionIdentity =
    std::tuple<std::string, std::string, int, bool, std::string, std::string, int64_t>;

VersionIdentity IdentityOf(const FileVersion& v) {
  return {v.agent_session, v.file_path, static_cast<int>(v.phase), v.exists, v.sha256,
          v.source,        v.time_ms};
}

}  // namespace

// In the order recorded, so each file's history keeps its order. Reads
// only the new versions of `from`, and `to`'s versions of their files.
Result<int64_t> CopyFileVersionsAfter(Store& from, Store& to, int64_t after_id, int64_t* last_id) {
  int64_t copied = 0;
  *last_id = after_id;
  // What `to` holds of a file, read once per file: its versions without a
  // tool call, and its newest id. A version recorded there comes back with
  // an id past that newest exactly when it is new: ids only grow, and a row
  // kept already that RecordFileVersion returns instead is of the same file.
  struct Held {
    std::set<VersionIdentity> without_call;
    int64_t newest_id = 0;
  };
  std::map<std::string, Held> held;
  auto held_of = [&](const std::string& path) -> Result<Held*> {
    auto it = held.find(path);
    if (it != held.end()) return &it->second;
    Held& file = held[path];
    FileVersionQuery query{.file_path = path, .limit = kMaxFileVersionsListed};
    while (true) {
      ASSIGN_OR_RETURN(std::vector<FileVersion> page, to.ListFileVersions(query));
      for (const FileVersion& v : page) {
        if (v.tool_use_id.empty()) file.without_call.insert(IdentityOf(v));
        file.newest_id = std::max(file.newest_id, v.id);
      }
      if (std::ssize(page) < query.limit) break;
      query.after_id = page.back().id;
    }
    return &file;
  };
  FileVersionQuery query{.after_id = after_id, .limit = kPage};
  while (true) {
    ASSIGN_OR_RETURN(std::vector<FileVersion> page, from.ListFileVersions(query));
    if (!page.empty()) *last_id = page.back().id;
    for (const FileVersion& v : page) {
      ASSIGN_OR_RETURN(Held * file, held_of(v.file_path));
      if (v.tool_use_id.empty() && !file->without_call.insert(IdentityOf(v)).second) continue;
      std::string content;
      if (v.exists) {
        ASSIGN_OR_RETURN(content, from.ReadBlob(v.sha256, /*verify=*/false));
      }
      FileVersion copy = v;
      copy.id = 0;
      ASSIGN_OR_RETURN(FileVersion kept, to.RecordFileVersion(copy, content));
      if (kept.id > file->newest_id) {
        ++copied;
        file->newest_id = kept.id;
      }
    }
    if (std::ssize(page) < query.limit) break;
    query.after_id = page.back().id;
  }
  return copied;
}

Result<CopyReport> CopyStore(Store& from, Store& to, const ProgressFn& progress) {
  CopyReport report;
  ASSIGN_OR_RETURN(StorageStats stats, from.Stats());
  const BlobSourceFn blob_source = [&from](std::string_view sha) {
    return from.ReadBlob(sha, /*verify=*/false);
  };
  std::set<std::string> copied;  // in this run, parents ahead of their place in the list
  // Deleted ancestors this run restored in `to` (in the order made), each
  // deleted again once its forks are in, so that it is kept hidden for them
  // as in `from`.
  std::vector<std::string> stand_ins;
  std::set<std::string> stand_in_set;

  std::function<Status(const Session&)> copy_one;

  // Makes sure `to` holds the ancestors of fork `session` whose parent `from`
  // no longer lists (deleted, kept hidden for its forks), with the events the
  // fork inherits from them under their own ids. `inherited`: the fork's
  // events up to its fork point, as ReadEvents gives them; each names the
  // session that wrote it.
  auto restore_deleted_ancestors = [&](const std::vector<Event>& inherited) -> Status {
    std::string previous;  // the ancestor before the current one
    size_t i = 0;
    while (i < inherited.size()) {
      const std::string owner = inherited[i].session_id;
      size_t end = i;
      while (end < inherited.size() && inherited[end].session_id == owner) ++end;
      auto live = from.GetSession(owner);
      if (live) {
        RETURN_IF_ERROR(copy_one(*live));
      } else if (live.error().code() != StatusCode::kNotFound) {
        return live.error();
      } else if (stand_in_set.contains(owner)) {
        // Restored for an earlier fork: it may need more of its events now.
        ASSIGN_OR_RETURN(Session there, to.GetSession(owner));
        std::vector<Event> more;
        for (size_t k = i; k < end; ++k) {
          if (inherited[k].seq > there.last_seq) more.push_back(inherited[k]);
        }
        if (!more.empty()) RETURN_IF_ERROR(to.RestoreEvents(owner, more, blob_source));
      } else {
        auto there = to.GetSession(owner);
        if (!there && there.error().code() != StatusCode::kNotFound) return there.error();
        if (there) {
          return Status::AlreadyExists("session '" + owner +
                                       "' is in the destination already, and in the source it "
                                       "is a deleted parent kept for its forks; remove it from "
                                       "the destination and copy again");
        }
        Session parent;
        parent.id = owner;
        parent.created_ms = inherited[i].ts_ms;
        parent.updated_ms = inherited[end - 1].ts_ms;
        const int64_t first_seq = inherited[i].seq;
        if (!previous.empty()) {
          parent.parent_id = previous;
          parent.fork_seq = first_seq - 1;
        }
        RETURN_IF_ERROR(to.RestoreSession(
            parent, std::span<const Event>(inherited.data() + i, end - i), blob_source));
        stand_ins.push_back(owner);
        stand_in_set.insert(owner);
      }
      previous = owner;
      i = end;
    }
    return Status::Ok();
  };

  // Copies one session, its fork ancestors first so it stays a fork.
  copy_one = [&](const Session& session) -> Status {
    if (copied.contains(session.id)) return Status::Ok();
    auto existing = to.GetSession(session.id);
    if (existing) {
      if (existing->last_seq != session.last_seq) {
        return Status::AlreadyExists(
            "session '" + session.id + "' is in the destination already with " +
            std::to_string(existing->last_seq) + " events, and in the source with " +
            std::to_string(session.last_seq) + "; remove one of them and copy again");
      }
      ++report.sessions_skipped;
      copied.insert(session.id);
      return Status::Ok();
    }
    if (existing.error().code() != StatusCode::kNotFound) return existing.error();
    int64_t from_seq = 1;
    if (!session.parent_id.empty()) {
      auto parent = from.GetSession(session.parent_id);
      if (parent) {
        RETURN_IF_ERROR(copy_one(*parent));
      } else if (parent.error().code() == StatusCode::kNotFound) {
        // A deleted parent kept only for its forks: restored in `to` with
        // what the fork inherits (ids and all), and deleted there again at
        // the end, so the fork stays a fork of the same history.
        ASSIGN_OR_RETURN(std::vector<Event> inherited,
                         from.ReadEvents(session.id, 1, session.fork_seq));
        RETURN_IF_ERROR(restore_deleted_ancestors(inherited));
      } else {
        return parent.error();
      }
      from_seq = session.fork_seq + 1;  // the rest is the parent's
    }
    ASSIGN_OR_RETURN(std::vector<Event> events, from.ReadEvents(session.id, from_seq));
    RETURN_IF_ERROR(to.RestoreSession(session, events, blob_source));
    copied.insert(session.id);
    ++report.sessions_copied;
    report.messages_copied += std::count_if(
        events.begin(), events.end(), [](const Event& e) { return e.type == EventType::kMessage; });
    return Status::Ok();
  };

  auto copy_all = [&]() -> Status {
    ListOptions page_options{.limit = kPage, .archived = ArchiveFilter::kAll};
    int64_t done = 0;
    while (true) {
      ASSIGN_OR_RETURN(SessionPage page, from.ListSessions(page_options));
      for (const Session& session : page.sessions) {
        RETURN_IF_ERROR(copy_one(session));
        if (progress) progress(++done, stats.sessions);
      }
      if (page.next_cursor.empty()) break;
      page_options.cursor = page.next_cursor;
    }
    return Status::Ok();
  };
  const Status status = copy_all();
  // Deleted again, forks first: each is kept hidden for the forks that read
  // it. Done after a failure too, so no deleted session shows up in `to`.
  for (auto it = stand_ins.rbegin(); it != stand_ins.rend(); ++it) {
    const Status removed = to.DeleteSession(*it);
    if (status.ok() && !removed.ok()) return Err(removed);
  }
  RETURN_IF_ERROR(status);
  int64_t last_id = 0;
  ASSIGN_OR_RETURN(report.file_versions_copied, CopyFileVersionsAfter(from, to, 0, &last_id));
  ASSIGN_OR_RETURN(std::optional<std::string> active, from.GetActiveSession());
  if (active) RETURN_IF_ERROR(to.SetActiveSession(*active));
  return report;
}

}  // namespace sessiondb
