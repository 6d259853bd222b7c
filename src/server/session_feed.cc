#include "server/session_feed.h"

#include <algorithm>
#include <tuple>

namespace sessiondb::server {

namespace {

// Everything the list shows or sorts by.
bool SameEntry(const Session& a, const Session& b) {
  return std::tie(a.title, a.preview, a.updated_ms, a.message_count, a.last_seq, a.archived,
                  a.metadata_json, a.parent_id, a.fork_seq) ==
         std::tie(b.title, b.preview, b.updated_ms, b.message_count, b.last_seq, b.archived,
                  b.metadata_json, b.parent_id, b.fork_seq);
}

Result<std::vector<Session>> Watched(Store& store) {
  ASSIGN_OR_RETURN(SessionPage page, store.ListSessions({.limit = SessionFeed::kWatched,
                                                         .archived = ArchiveFilter::kAll}));
  return std::move(page.sessions);
}

}  // namespace

Status SessionFeed::Start() {
  ASSIGN_OR_RETURN(std::vector<Session> sessions, Watched(store_));
  seen_.clear();
  for (Session& s : sessions) seen_.emplace(s.id, std::move(s));
  return Status::Ok();
}

Result<SessionListChanges> SessionFeed::Poll(const std::vector<std::string>& hinted) {
  ASSIGN_OR_RETURN(std::vector<Session> sessions, Watched(store_));
  const bool whole_list = sessions.size() < static_cast<size_t>(kWatched);
  std::map<std::string, Session, std::less<>> now;
  SessionListChanges changes;
  // Oldest first, so that a client inserting each at the top ends up in order.
  for (auto it = sessions.rbegin(); it != sessions.rend(); ++it) {
    auto before = seen_.find(it->id);
    if (before == seen_.end() || !SameEntry(before->second, *it)) changes.changed.push_back(*it);
    now.emplace(it->id, std::move(*it));
  }
  // Named by this server but not watched: looked up, since the list may not
  // reach them. Those that dropped out of the watched ones too.
  std::vector<std::string> lookups;
  for (const std::string& id : hinted) {
    if (!now.contains(id)) lookups.push_back(id);
  }
  for (const auto& [id, session] : seen_) {
    if (now.contains(id)) continue;
    if (whole_list) {
      changes.deleted.push_back(id);
    } else if (std::find(lookups.begin(), lookups.end(), id) == lookups.end()) {
      lookups.push_back(id);
    }
  }
  for (const std::string& id : lookups) {
    if (std::find(changes.deleted.begin(), changes.deleted.end(), id) != changes.deleted.end()) {
      continue;
    }
    Result<Session> session = store_.GetSession(id);
    if (session) {
      // Still there, only older than the watched ones; reported when this
      // server changed it.
      if (std::find(hinted.begin(), hinted.end(), id) != hinted.end()) {
        changes.changed.insert(changes.changed.begin(), std::move(*session));
      }
    } else if (session.error().code() == StatusCode::kNotFound) {
      changes.deleted.push_back(id);
    } else {
      return Err(session.error());
    }
  }
  seen_ = std::move(now);
  return changes;
}

}  // namespace sessiondb::server
