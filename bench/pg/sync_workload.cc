// The sync workload (sync_workload.h).
#include "sync_workload.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <vector>

#include "sessiondb/store.h"
#include "store/store_copy.h"
#include "store/store_sync.h"

namespace sessiondb::bench {

namespace {

constexpr int kSyncSessions = 100;
constexpr int kSyncMessagesPerSession = 1'000;
constexpr int kSyncBatch = 500;

double SyncSecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Appends kSyncSessions sessions of kSyncMessagesPerSession messages (about
// 300 bytes of text each, user and assistant in turn) named `prefix`-N.
Status FillSyncSessions(Store& store, const std::string& prefix) {
  const std::string filler(260, 'x');
  for (int s = 0; s < kSyncSessions; ++s) {
    const std::string id = prefix + "-" + std::to_string(s);
    ASSIGN_OR_RETURN(Session session, store.CreateSession({.id = id, .title = "Sync " + id}));
    std::vector<Message> batch;
    for (int m = 0; m < kSyncMessagesPerSession; ++m) {
      Message message;
      message.role = m % 2 == 0 ? Role::kUser : Role::kAssistant;
      message.parts = {Part::Text(id + " message " + std::to_string(m) + " " + filler)};
      batch.push_back(std::move(message));
      if (std::ssize(batch) == kSyncBatch) {
        RETURN_IF_ERROR(store.AppendBatch(session.id, batch));
        batch.clear();
      }
    }
    if (!batch.empty()) RETURN_IF_ERROR(store.AppendBatch(session.id, batch));
  }
  return Status::Ok();
}

}  // namespace

nlohmann::json RunSyncWorkload(const std::string& postgres_uri, const std::string& namespace_prefix,
                               const std::string& dir) {
  nlohmann::json out = {{"workload", "sync_100k"}};
  auto fail = [&out](const std::string& step, const Status& status) {
    out["error"] = step + ": " + status.ToString();
    return out;
  };
  const std::string embedded_dir = (std::filesystem::path(dir) / "sync").string();
  std::error_code ec;
  std::filesystem::remove_all(embedded_dir, ec);
  StoreOptions embedded_options;
  embedded_options.durability = Durability::kProcessCrashSafe;
  embedded_options.redact_secrets = false;
  StoreOptions pg_options = embedded_options;
  pg_options.namespace_name = namespace_prefix + "-sync";
  auto embedded = Store::Open(embedded_dir, embedded_options);
  if (!embedded) return fail("opening the embedded store", embedded.error());
  auto pg = Store::Open(postgres_uri, pg_options);
  if (!pg) return fail("opening PostgreSQL", pg.error());

  const int64_t each_way = int64_t{kSyncSessions} * kSyncMessagesPerSession;
  out["messages_each_way"] = each_way;
  if (Status s = FillSyncSessions(**embedded, "laptop"); !s.ok()) return fail("filling", s);
  auto start = std::chrono::steady_clock::now();
  auto there = SyncStores(**embedded, **pg);
  if (!there) return fail("sync to PostgreSQL", there.error());
  const double to_pg = SyncSecondsSince(start);

  // The floor: the same sessions copied whole (CopyStore) into an empty namespace.
  StoreOptions copy_options = pg_options;
  copy_options.namespace_name = namespace_prefix + "-sync-copy";
  auto copy_target = Store::Open(postgres_uri, copy_options);
  if (!copy_target) return fail("opening PostgreSQL", copy_target.error());
  start = std::chrono::steady_clock::now();
  auto copied = CopyStore(**embedded, **copy_target);
  if (!copied) return fail("the copy baseline", copied.error());
  const double copy_s = SyncSecondsSince(start);
  copy_target->reset();

  if (Status s = FillSyncSessions(**pg, "server"); !s.ok()) return fail("filling PostgreSQL", s);
  start = std::chrono::steady_clock::now();
  auto back = SyncStores(**embedded, **pg);
  if (!back) return fail("sync back", back.error());
  const double to_embedded = SyncSecondsSince(start);

  start = std::chrono::steady_clock::now();
  auto noop = SyncStores(**embedded, **pg);
  if (!noop) return fail("the sync with nothing to do", noop.error());
  const double noop_s = SyncSecondsSince(start);

  out["to_postgres_s"] = to_pg;
  out["to_postgres_messages"] = there->into_b.messages_copied;
  out["to_postgres_messages_per_s"] = static_cast<double>(there->into_b.messages_copied) / to_pg;
  out["copy_to_postgres_s"] = copy_s;
  out["copy_to_postgres_messages_per_s"] = static_cast<double>(copied->messages_copied) / copy_s;
  out["to_postgres_vs_copy"] = copy_s / to_pg;
  out["to_embedded_s"] = to_embedded;
  out["to_embedded_messages"] = back->into_a.messages_copied;
  out["to_embedded_messages_per_s"] =
      static_cast<double>(back->into_a.messages_copied) / to_embedded;
  out["noop_s"] = noop_s;
  out["noop_unchanged"] = noop->unchanged();
  return out;
}

}  // namespace sessiondb::bench
