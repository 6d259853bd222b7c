// What every route of the HTTP API shares: the store, its path (for search
// and imports), the operator's options, the live-event hub, the drafts being
// streamed, the search service and the history imports the page offers. Owned by HttpServer; routes
// hold a reference. Thread-safety: the members are safe to use from any thread (Store is).
#pragma once

#include <atomic>
#include <string>

#include "server/event_hub.h"
#include "server/history_imports.h"
#include "server/http_router.h"
#include "server/live_drafts.h"
#include "server/search_service.h"
#include "server/server_options.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

struct ApiState {
  ApiState(Store& s, std::string path, const ServerOptions& o)
      : store(s),
        store_path(std::move(path)),
        options(o),
        drafts(s, hub),
        search(s),
        imports(s, hub, o.history_sources) {}

  Store& store;
  const std::string store_path;
  const ServerOptions options;
  EventHub hub;
  LiveDrafts drafts;
  SearchService search;
  HistoryImports imports;            // the agents' history the page offers to import
  std::atomic<int> open_streams{0};  // live event streams now, at most options.max_streams
};

// Route groups, one file each.
void AddSessionRoutes(Router& router, ApiState& api);  // sessions, active, messages, blobs
void AddHarnessRoutes(Router& router,
                      ApiState& api);  // fork, compactions, views, projection, usage, drafts
void AddEventRoutes(Router& router, ApiState& api);    // the live event stream
void AddSearchRoutes(Router& router, ApiState& api);   // search, code memory
void AddInteropRoutes(Router& router, ApiState& api);  // import, export, health, stats
// DELETE of a session, the trash, erasure, the ledger, retention
void AddForgetRoutes(Router& router, ApiState& api);
void AddFileVersionRoutes(Router& router, ApiState& api);  // a session's file versions

}  // namespace sessiondb::server
