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

Result<int64_t> CatchUpTextIndex(IndexBackend& backend, int64_t max_documents,
                                 const std::function<void(int64_t, int64_t)>& progress) {
  ASSIGN_OR_RETURN(TextIndexState state, backend.TextIndexProgress());
  if (state.pending == 0) return int64_t{0};
  // What was written before the call: documents added while it runs are the
  // next catch-up's, so a steady stream of writes cannot keep it going.
  const int64_t total = max_documents < 0 ? state.pending : std::min(state.pending, max_documents);
  const int64_t per_batch = max_documents < 0 ? kBulkTextIndexBatch : kTextIndexBatch;
  int64_t done = 0;
  if (progress) progress(0, total);
  while (done < total) {
    const int64_t batch = std::min(per_batch, total - done);
    ASSIGN_OR_RETURN(state, backend.IndexPendingText(batch));
    done += batch;
    if (progress) progress(std::min(done, total), total);
    if (state.pending == 0) break;
  }
  return state.pending;
}

Result<int64_t> CatchUpBeforeQuery(IndexBackend& backend, int64_t limit) {
  ASSIGN_OR_RETURN(TextIndexState state, backend.TextIndexProgress());
  if (state.pending == 0 || state.pending > limit) return state.pending;
  Result<int64_t> left = CatchUpTextIndex(backend, limit);
  if (left) return *left;
  const StatusCode code = left.error().code();
  if (code == StatusCode::kFailedPrecondition || code == StatusCode::kBusy) return state.pending;
  return Err(left.error());
}

}  // namespace sessiondb::store
