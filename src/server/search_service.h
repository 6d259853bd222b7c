// The server's search and code memory of its one Store, opened on first use
// and kept: loading the vectors costs seconds on a large store, so they are
// loaded once, not per request. Neither is thread-safe, so calls take turns.
// Embedding new documents is background work (EmbeddingWorker, started with
// StartBackgroundEmbedding); a search only reads.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

class SearchService {
 public:
  // `wait_backlog`: a vector or hybrid search waits (at most 2 s) for the
  // background embedding when at most this many documents are pending, so a
  // caller finds what it just wrote; 0 never waits.
  SearchService(Store& store, int64_t wait_backlog = 5000)
      : store_(store), wait_backlog_(wait_backlog) {}

  // Starts embedding pending documents in the background. A failure (say, an
  // embedder that cannot be set up) goes to `log`; search still works
  // (keyword ranking needs no vectors).
  void StartBackgroundEmbedding(const std::function<void(const std::string&)>& log);
  // How far the background embedding is behind; nullopt when it is not running.
  std::optional<EmbeddingProgress> EmbeddingStatus() const;

  Result<SearchResults> Search(const SearchRequest& request);
  Result<std::vector<RecalledCode>> Recall(std::string_view path, std::string_view code,
                                           int limit);
  Result<std::vector<ChurnEntry>> Hotspots(const ChurnQuery& query);

 private:
  Status OpenIndexLocked();
  Status OpenMemoryLocked();

  Store& store_;
  const int64_t wait_backlog_;
  mutable std::mutex mu_;
  std::unique_ptr<SearchIndex> index_;       // guarded by mu_
  std::unique_ptr<CodeMemory> memory_;       // guarded by mu_
  std::unique_ptr<EmbeddingWorker> worker_;  // set once, before any search; thread-safe
};

}  // namespace sessiondb::server
