#include "store/store_copy.h"

#include <algorithm>

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
  ListOptions page_options{.limit = kPage, .archived = ArchiveFilter::kAll};
  int64_t done = 0;
  while (true) {
    ASSIGN_OR_RETURN(SessionPage page, from.ListSessions(page_options));
    for (const Session& session : page.sessions) {
      auto existing = to.GetSession(session.id);
      if (existing) {
        if (existing->last_seq != session.last_seq) {
          return Err(Status::AlreadyExists(
              "session '" + session.id + "' is in the destination already with " +
              std::to_string(existing->last_seq) + " events, and in the source with " +
              std::to_string(session.last_seq) + "; remove one of them and copy again"));
        }
        ++report.sessions_skipped;
      } else if (existing.error().code() != StatusCode::kNotFound) {
        return Err(existing.error());
      } else {
        // Every event, inherited ones included: a fork arrives whole.
        ASSIGN_OR_RETURN(std::vector<Event> events, from.ReadEvents(session.id));
        RETURN_IF_ERROR(to.RestoreSession(session, events, blob_source));
        ++report.sessions_copied;
        report.messages_copied += std::count_if(events.begin(), events.end(), [](const Event& e) {
          return e.type == EventType::kMessage;
        });
      }
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
