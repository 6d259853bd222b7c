// The rules every IndexBackend shares, written once, and what a Backend opens
// when asked for an index backend on the store's connection and has none
// better: its usual one.
#include "store/index_backend.h"

#include <algorithm>

#include "blob/sha256.h"
#include "store/backend.h"

namespace sessiondb::store {

Result<std::unique_ptr<IndexBackend>> Backend::OpenIndexBackendOnStoreConnection() {
  return OpenIndexBackend();
}

std::string CodeWriteHash(std::string_view path, std::string_view old_code,
                          std::string_view new_code) {
  const std::string_view nul("\0", 1);
  return blob::Sha256Hex({path, nul, old_code, nul, new_code});
}

bool FilterIsEmpty(const SearchFilter& f) {
  return f.session_id.empty() && f.events && f.code_writes && !f.role && f.since_ms <= 0 &&
         f.until_ms <= 0 && f.archived == ArchiveFilter::kAll && f.project.empty();
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xFF) end.pop_back();
  if (!end.empty()) end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

Result<bool> IndexBackend::HoldsWord(const std::string& word) {
  TextQuery one;
  one.all_of.push_back({TextPhrase{.words = {word}}});
  ASSIGN_OR_RETURN(KeywordRanking ranking, RankKeyword(one, SearchFilter{}, 1));
  return ranking.matches > 0;
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

Result<std::vector<IndexBackend::PageDocument>> IndexBackend::LoadPage(
    const TextQuery& query, std::span<const PageRequest> docs) {
  std::vector<PageDocument> out(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    PageDocument& d = out[i];
    ASSIGN_OR_RETURN(d.present, LoadHitDetails(docs[i].doc_id, &d.hit));
    if (!d.present) continue;
    if (docs[i].keyword) {
      ASSIGN_OR_RETURN(d.snippet, MatchSnippet(query, docs[i].doc_id));
    } else {
      ASSIGN_OR_RETURN(d.text, ReadDocumentText(docs[i].doc_id));
    }
  }
  return out;
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

Result<QueryCatchUp> CatchUpBeforeQuery(IndexBackend& backend, int64_t limit) {
  ASSIGN_OR_RETURN(TextIndexState state, backend.TextIndexProgress());
  if (state.pending == 0) return QueryCatchUp{};
  if (state.pending > limit) {
    return QueryCatchUp{.pending = state.pending,
                        .why = limit == 0
                                   ? "this search was asked not to index first (catch-up limit 0)"
                                   : "more than the " + std::to_string(limit) +
                                         " a search indexes before answering; `sessiondb reindex` "
                                         "(or a running server) indexes them"};
  }
  // What was written before the query, in batches, each a try of the write
  // lock: a writer holding it (a bulk import, a long transaction) would make
  // a wait last up to the busy timeout, and the query can answer without it.
  const int64_t total = state.pending;
  for (int64_t done = 0; done < total && state.pending > 0; done += kTextIndexBatch) {
    Result<TextIndexState> next =
        backend.TryIndexPendingText(std::min(kTextIndexBatch, total - done));
    if (!next) {
      const StatusCode code = next.error().code();
      if (code == StatusCode::kBusy) {
        return QueryCatchUp{.pending = state.pending,
                            .why =
                                "another writer holds the store's write lock, so this answer "
                                "is as of the index; a search after the lock is free "
                                "catches up"};
      }
      if (code == StatusCode::kFailedPrecondition) {  // read-only
        return QueryCatchUp{.pending = state.pending, .why = next.error().message()};
      }
      return Err(next.error());
    }
    state = *next;
  }
  if (state.pending == 0) return QueryCatchUp{};
  return QueryCatchUp{.pending = state.pending, .why = "written while this search ran"};
}

}  // namespace sessiondb::store
