// The server's one SearchIndex and CodeMemory, opened on first use and kept:
// loading the vectors costs seconds on a large store, so they are loaded
// once, not per request. Neither is thread-safe, so calls take turns.
// On a PostgreSQL store every call fails with kFailedPrecondition.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sessiondb/memory.h"
#include "sessiondb/search.h"

namespace sessiondb::server {

class SearchService {
 public:
  explicit SearchService(std::string store_path) : store_path_(std::move(store_path)) {}

  // Vector and hybrid searches first embed what is pending (up to 5,000
  // documents, like the CLI), so new messages are found at once.
  Result<SearchResults> Search(const SearchRequest& request);
  Result<std::vector<RecalledCode>> Recall(std::string_view path, std::string_view code,
                                           int limit);
  Result<std::vector<ChurnEntry>> Hotspots(const ChurnQuery& query);

 private:
  Status OpenIndexLocked();
  Status OpenMemoryLocked();

  const std::string store_path_;
  std::mutex mu_;
  std::unique_ptr<SearchIndex> index_;   // guarded by mu_
  std::unique_ptr<CodeMemory> memory_;   // guarded by mu_
};

}  // namespace sessiondb::server
