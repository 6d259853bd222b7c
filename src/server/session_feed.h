// What changed in the session list between two looks at it: the store-wide
// live stream (GET /v1/events) sends these so the page's list follows new
// sessions, new messages (preview, count, order), renames, archiving and
// deletions without a reload, whoever wrote them (this server or another
// process on the same store).
//
// The list itself is the only source: each Poll reads the kWatched most
// recently updated sessions and compares them with the last look, so nothing
// written meanwhile can be skipped, however it was written. Sessions further
// down are looked up only when this server names them (`hinted`, from the
// EventHub); a change to one of those by another process is not seen.
//
// Example:
//   SessionFeed feed(store);
//   RETURN_IF_ERROR(feed.Start());
//   ASSIGN_OR_RETURN(SessionListChanges changes, feed.Poll(sub.TakeChangedSessions()));
//   for (const Session& s : changes.changed) ... send it ...
//
// Thread-safety: one feed per stream, used by one thread at a time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sessiondb/store.h"

namespace sessiondb::server {

struct SessionListChanges {
  std::vector<Session> changed;      // created or changed since the last look
  std::vector<std::string> deleted;  // ids of sessions that no longer exist
  bool empty() const { return changed.empty() && deleted.empty(); }
};

class SessionFeed {
 public:
  // How many of the most recently updated sessions each look reads.
  static constexpr int kWatched = 200;

  explicit SessionFeed(Store& store) : store_(store) {}

  // Takes the first look: what Poll reports is what changed after it.
  Status Start();
  // What changed since the last look. `hinted` are ids of sessions this
  // server wrote, looked up even when outside the watched ones. Errors are
  // the store's.
  Result<SessionListChanges> Poll(const std::vector<std::string>& hinted);

 private:
  Store& store_;
  std::map<std::string, Session, std::less<>> seen_;  // the watched sessions, by id
};

}  // namespace sessiondb::server
