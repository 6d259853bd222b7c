// The rules every IndexBackend shares, written once.
#include "store/index_backend.h"

#include <algorithm>

namespace sessiondb::store {

bool FilterIsEmpty(const SearchFilter& f) {
  return f.session_id.empty() && f.events && f.code_writes && !f.role && f.since_ms <= 0 &&
         f.until_ms <= 0 && f.archived == ArchiveFilter::kAll && f.project.empty();
}

void FinishRanking(int64_t max_candidates, KeywordRanking* ranking) {
  if (static_cast<int64_t>(ranking->docs.size()) > max_candidates) {
    ranking->docs.pop_back();
    ranking->bounded = true;
  }
  ranking->matches = static_cast<int64_t>(ranking->docs.size());
  // Stable: equal scores stay in the order read, newest first.
  std::stable_sort(ranking->docs.begin(), ranking->docs.end(),
                   [](const RankedDoc& a, const RankedDoc& b) { return a.score > b.score; });
}

}  // namespace sessiondb::store
