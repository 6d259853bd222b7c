#include "server/search_service.h"

namespace sessiondb::server {

// Pending documents embedded before a vector search, at most (as the CLI).
constexpr int64_t kCatchUpEmbeddings = 5000;

Status SearchService::OpenIndexLocked() {
  if (index_) return Status::Ok();
  ASSIGN_OR_RETURN(index_, SearchIndex::Open(store_path_));
  return Status::Ok();
}

Status SearchService::OpenMemoryLocked() {
  if (memory_) return Status::Ok();
  ASSIGN_OR_RETURN(memory_, CodeMemory::Open(store_path_));
  return Status::Ok();
}

Result<SearchResults> SearchService::Search(const SearchRequest& request) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(OpenIndexLocked());
  if (request.mode != SearchMode::kKeyword) RETURN_IF_ERROR(index_->Embed(kCatchUpEmbeddings));
  return index_->Search(request);
}

Result<std::vector<RecalledCode>> SearchService::Recall(std::string_view path,
                                                        std::string_view code, int limit) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(OpenMemoryLocked());
  return memory_->Recall(path, code, limit);
}

Result<std::vector<ChurnEntry>> SearchService::Hotspots(const ChurnQuery& query) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(OpenMemoryLocked());
  return memory_->Hotspots(query);
}

}  // namespace sessiondb::server
