#include "retention_workload.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "sessiondb/store.h"

namespace sessiondb::bench {
namespace {

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;

[[noreturn]] void Fail(const std::string& what) {
  std::cerr << "sessiondb_bench: retain: " << what << "\n";
  std::exit(1);
}

void Ok(const Status& s, const std::string& what) {
  if (!s.ok()) Fail(what + ": " + s.ToString());
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// An empty store at `dir` whose clock reads `*clock_ms`.
std::unique_ptr<Store> Build(const std::filesystem::path& dir, const int64_t* clock_ms) {
  std::filesystem::remove_all(dir);
  StoreOptions o;
  o.durability = Durability::kProcessCrashSafe;
  o.clock = [clock_ms] { return *clock_ms; };
  auto store = Store::Open(dir.string(), o);
  if (!store) Fail("opening " + dir.string() + ": " + store.error().ToString());
  return std::move(*store);
}

}  // namespace

void RunRetentionWorkload(const std::filesystem::path& root, int64_t sessions, int64_t erased) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  int64_t clock_ms = now_ms;
  std::cerr << "[bench] retain: " << sessions << " sessions in each of two stores, " << erased
            << " to erase (setup takes a while)" << std::endl;
  auto policy_store = Build(root / "retain-policy", &clock_ms);
  auto delete_store = Build(root / "retain-delete", &clock_ms);
  for (int64_t i = 0; i < sessions; ++i) {
    const bool old = i < erased;
    clock_ms = old ? now_ms - 100 * kDayMs : now_ms - kDayMs;
    const std::string id = "r-" + std::to_string(i);
    for (Store* store : {policy_store.get(), delete_store.get()}) {
      auto s = store->CreateSession({.id = id});
      if (!s) Fail("create: " + s.error().ToString());
      if (old) Ok(store->SetArchived(id, true), "archive");
    }
    if (i % 20000 == 0) std::cerr << "[bench]   " << i << " sessions" << std::endl;
  }
  clock_ms = now_ms;
  Ok(policy_store->SetRetentionPolicy({.rules = {{.erase_archived_after_idle_days = 90}}}),
     "policy");

  auto start = std::chrono::steady_clock::now();
  auto dry = policy_store->ApplyRetention(/*dry_run=*/true);
  const double dry_s = SecondsSince(start);
  if (!dry) Fail("dry run: " + dry.error().ToString());
  start = std::chrono::steady_clock::now();
  auto run = policy_store->ApplyRetention(/*dry_run=*/false);
  const double apply_s = SecondsSince(start);
  if (!run) Fail("run: " + run.error().ToString());
  if (static_cast<int64_t>(run->erased.size()) != erased) {
    Fail("the run erased " + std::to_string(run->erased.size()) + ", not " +
         std::to_string(erased));
  }

  start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < erased; ++i) {
    Ok(delete_store->DeleteSession("r-" + std::to_string(i)), "delete");
  }
  const double delete_s = SecondsSince(start);

  std::cout << nlohmann::json{{"peer", "sessiondb"},
                              {"workload", "retain"},
                              {"sessions", sessions},
                              {"erased", erased},
                              {"retain_dry_run_s", dry_s},
                              {"retain_apply_s", apply_s},
                              {"delete_session_s", delete_s},
                              {"apply_over_delete", delete_s > 0 ? apply_s / delete_s : 0.0}}
                   .dump()
            << std::endl;
  policy_store.reset();
  delete_store.reset();
  std::filesystem::remove_all(root / "retain-policy");
  std::filesystem::remove_all(root / "retain-delete");
}

}  // namespace sessiondb::bench
