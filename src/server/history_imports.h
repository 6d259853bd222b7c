// The imports the page offers: each of ServerOptions::history_sources (the
// agents' history folders `serve` found, such as ~/.claude/projects), run on
// a thread of its own when the page asks, with its progress readable while
// it runs. One import runs at a time; a source can be imported again (an
// import only adds what the store lacks).
//
// Example:
//   HistoryImports imports(store, hub, {{"Claude Code", "/home/me/.claude/projects"}});
//   Status started = imports.Start(0);  // kFailedPrecondition while one runs
//   Json state = imports.Describe();    // {"sources":[{"state":"running",...}]}
//
// Thread-safety: every method may be called from any thread. The destructor
// waits for a running import to finish.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/json_forms.h"
#include "core/mutex.h"
#include "server/event_hub.h"
#include "server/server_options.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

class HistoryImports {
 public:
  HistoryImports(Store& store, EventHub& hub, std::vector<HistorySource> sources);
  ~HistoryImports();
  HistoryImports(const HistoryImports&) = delete;
  HistoryImports& operator=(const HistoryImports&) = delete;

  // {"sources": [{"id", "agent", "folder", "state" ("idle", "running",
  // "done", "failed"), "done_bytes", "total_bytes", "report" (when done),
  // "error" (when failed)}]}.
  Json Describe() const EXCLUDES(mu_);

  // Starts importing source `id`. kNotFound for no such source,
  // kFailedPrecondition while an import runs.
  Status Start(size_t id) EXCLUDES(mu_);

 private:
  struct Progress {
    std::string state = "idle";
    int64_t done_bytes = 0;
    int64_t total_bytes = 0;
    std::optional<Json> report;
    std::string error;
  };

  void Run(size_t id);

  Store& store_;
  EventHub& hub_;
  const std::vector<HistorySource> sources_;
  mutable Mutex mu_;
  std::vector<Progress> progress_ GUARDED_BY(mu_);
  bool running_ GUARDED_BY(mu_) = false;
  std::thread worker_;  // started and joined by Start and the destructor, under mu_'s rule
};

}  // namespace sessiondb::server
