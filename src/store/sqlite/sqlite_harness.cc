// The agent harness on this backend: forks, events, compaction prune,
// usage totals and drafts. (Being written: every call reports kInternal.)
#include "store/sqlite/sqlite_store.h"

namespace sessiondb::sqlite {
namespace {
Status NotYet() { return Status::Internal("not implemented on this backend yet"); }
}  // namespace

Result<Session> SqliteStore::ForkSession(std::string_view, int64_t, const NewSession&) { return Err(NotYet()); }
Result<std::vector<Event>> SqliteStore::ReadEvents(std::string_view, int64_t, int64_t) { return Err(NotYet()); }
Result<PruneReport> SqliteStore::PruneCompaction(std::string_view, int64_t) { return Err(NotYet()); }
Result<UsageReport> SqliteStore::GetUsage(std::string_view) { return Err(NotYet()); }
Result<Draft> SqliteStore::OpenDraft(std::string_view, Role, std::string_view) { return Err(NotYet()); }
Status SqliteStore::SaveDraft(const Draft&) { return NotYet(); }
Result<std::vector<Draft>> SqliteStore::ListDrafts(std::string_view) { return Err(NotYet()); }
Result<AppendResult> SqliteStore::FinishDraft(std::string_view, const Message&) { return Err(NotYet()); }
Status SqliteStore::DiscardDraft(std::string_view) { return NotYet(); }
Result<Event> SqliteStore::AppendEventRecord(std::string_view, EventType, std::string_view, std::string_view) { return Err(NotYet()); }
Result<std::optional<Event>> SqliteStore::FindLastCompaction(std::string_view, int64_t) { return Err(NotYet()); }
Result<std::optional<Event>> SqliteStore::FindResourceMessage(std::string_view, std::string_view) { return Err(NotYet()); }

}  // namespace sessiondb::sqlite
