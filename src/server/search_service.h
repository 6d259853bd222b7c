// The server's search and code memory of its one Store, opened on first use
// and kept: loading the vectors costs seconds on a large store, so they are
// loaded once, not per request. Neither is thread-safe, so calls take turns.
// Embedding new documents is background work (EmbeddingWorker, started with
// StartBackgroundEmbedding); a search only reads.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/mutex.h"
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
  void StartBackgroundEmbedding(const std::function<void(const std::string&)>& log) EXCLUDES(mu_);
  // How far the background embedding is behind; nullopt when it is not running.
  std::optional<EmbeddingProgress> EmbeddingStatus() const EXCLUDES(mu_);

  Result<SearchResults> Search(const SearchRequest& request) EXCLUDES(mu_);
  Result<std::vector<RecalledCode>> Recall(std::string_view path, std::string_view code, int limit)
      EXCLUDES(mu_);
  Result<std::vector<ChurnEntry>> Hotspots(const ChurnQuery& query) EXCLUDES(mu_);

 private:
  Status OpenIndexLocked() REQUIRES(mu_);
  Status OpenMemoryLocked() REQUIRES(mu_);

  Store& store_;
  const int64_t wait_backlog_;
  mutable Mutex mu_;
  std::unique_ptr<SearchIndex> index_ GUARDED_BY(mu_);
  std::unique_ptr<CodeMemory> memory_ GUARDED_BY(mu_);
  // Set once, before any search; the worker itself is thread-safe.
  std::unique_ptr<EmbeddingWorker> worker_ GUARDED_BY(mu_);
};

}  // namespace sessiondb::server
