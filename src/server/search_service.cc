#include "server/search_service.h"

namespace sessiondb::server {

// How long a search waits for the background embedding of a short backlog.
constexpr int kCatchUpWaitMs = 2000;

void SearchService::StartBackgroundEmbedding(const std::function<void(const std::string&)>& log) {
  MutexLock lock(&mu_);
  if (worker_) return;
  Result<std::unique_ptr<EmbeddingWorker>> worker = EmbeddingWorker::Start(store_);
  if (!worker) {
    log("new documents will not be embedded (vector search sees only what `sessiondb "
        "reindex` embedded): " +
        worker.error().message());
    return;
  }
  worker_ = std::move(*worker);
}

std::optional<EmbeddingProgress> SearchService::EmbeddingStatus() const {
  MutexLock lock(&mu_);
  if (!worker_) return std::nullopt;
  return worker_->progress();
}

Status SearchService::OpenIndexLocked() {
  if (index_) return Status::Ok();
  ASSIGN_OR_RETURN(index_, SearchIndex::Open(store_));
  return Status::Ok();
}

Status SearchService::OpenMemoryLocked() {
  if (memory_) return Status::Ok();
  ASSIGN_OR_RETURN(memory_, CodeMemory::Open(store_));
  return Status::Ok();
}

Result<SearchResults> SearchService::Search(const SearchRequest& request) {
  EmbeddingWorker* worker = nullptr;
  {
    MutexLock lock(&mu_);
    worker = worker_.get();
  }
  // Outside the lock: other searches go on while this one waits.
  if (worker != nullptr && request.mode != SearchMode::kKeyword && wait_backlog_ > 0) {
    worker->WaitUntilCaughtUp(wait_backlog_, kCatchUpWaitMs);
  }
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(OpenIndexLocked());
  return index_->Search(request);
}

Result<std::vector<RecalledCode>> SearchService::Recall(std::string_view path,
                                                        std::string_view code, int limit) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(OpenMemoryLocked());
  return memory_->Recall(path, code, limit);
}

Result<std::vector<ChurnEntry>> SearchService::Hotspots(const ChurnQuery& query) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(OpenMemoryLocked());
  return memory_->Hotspots(query);
}

}  // namespace sessiondb::server
