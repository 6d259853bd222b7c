#include "store/store_copy.h"

#include <algorithm>
#include <functional>
#include <set>

namespace sessiondb {

namespace {
constexpr int kPage = 500;
}  // namespace

Result<CopyReport> CopyStore(Store& from, Store& to, const ProgressFn& progress) {
  CopyReport report;
  ASSIGN_OR_RETURN(StorageStats stats, from.Stats());
  const BlobSourceFn blob_source = [&from](std::string_view sha) {
    return from.ReadBlob(sha, /*verify=*/false);
  };
  std::set<std::string> copied;  // in this run, parents ahead of their place in the list

  // Copies one session, its fork ancestors first so it stays a fork.
  std::function<Status(const Session&)> copy_one = [&](const Session& session) -> Status {
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
    Session target = session;
    int64_t from_seq = 1;
    if (!session.parent_id.empty()) {
      auto parent = from.GetSession(session.parent_id);
      if (parent) {
        RETURN_IF_ERROR(copy_one(*parent));
        from_seq = session.fork_seq + 1;  // the rest is the parent's
      } else if (parent.error().code() == StatusCode::kNotFound) {
        // A deleted parent kept only for its forks is not copied: the fork
        // arrives holding its whole history.
        target.parent_id.clear();
        target.fork_seq = 0;
      } else {
        return parent.error();
      }
    }
    ASSIGN_OR_RETURN(std::vector<Event> events, from.ReadEvents(session.id, from_seq));
    RETURN_IF_ERROR(to.RestoreSession(target, events, blob_source));
    copied.insert(session.id);
    ++report.sessions_copied;
    report.messages_copied += std::count_if(
        events.begin(), events.end(), [](const Event& e) { return e.type == EventType::kMessage; });
    return Status::Ok();
  };

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
  ASSIGN_OR_RETURN(std::optional<std::string> active, from.GetActiveSession());
  if (active) RETURN_IF_ERROR(to.SetActiveSession(*active));
  return report;
}

}  // namespace sessiondb
