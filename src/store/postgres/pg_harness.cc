// The agent harness on this backend: forks, events, compaction prune,
// usage totals and drafts. (Being written: every call reports kInternal.)
#include "store/postgres/pg_store.h"

namespace sessiondb::postgres {
namespace {
Status NotYet() { return Status::Internal("not implemented on this backend yet"); }
}  // namespace

Result<Session> PgStore::ForkSession(std::string_view, int64_t, const NewSession&) { return Err(NotYet()); }
Result<std::vector<Event>> PgStore::ReadEvents(std::string_view, int64_t, int64_t) { return Err(NotYet()); }
Result<PruneReport> PgStore::PruneCompaction(std::string_view, int64_t) { return Err(NotYet()); }
Result<UsageReport> PgStore::GetUsage(std::string_view) { return Err(NotYet()); }
Result<Draft> PgStore::OpenDraft(std::string_view, Role, std::string_view) { return Err(NotYet()); }
Status PgStore::SaveDraft(const Draft&) { return NotYet(); }
Result<std::vector<Draft>> PgStore::ListDrafts(std::string_view) { return Err(NotYet()); }
Result<AppendResult> PgStore::FinishDraft(std::string_view, const Message&) { return Err(NotYet()); }
Status PgStore::DiscardDraft(std::string_view) { return NotYet(); }
Result<Event> PgStore::AppendEventRecord(std::string_view, EventType, std::string_view, std::string_view) { return Err(NotYet()); }
Result<std::optional<Event>> PgStore::FindLastCompaction(std::string_view, int64_t) { return Err(NotYet()); }
Result<std::optional<Event>> PgStore::FindResourceMessage(std::string_view, std::string_view) { return Err(NotYet()); }

}  // namespace sessiondb::postgres
