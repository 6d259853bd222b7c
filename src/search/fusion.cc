#include "search/fusion.h"

#include <algorithm>
#include <unordered_map>

namespace sessiondb::search {

namespace {

// Each document of either list once, with its ranks and its reciprocal rank
// score, in the order first met (keyword list first).
std::vector<FusedEntry> Merge(const std::vector<ListEntry>& keyword,
                              const std::vector<ListEntry>& vector) {
  std::unordered_map<int64_t, size_t> position;
  std::vector<FusedEntry> fused;
  auto entry = [&](int64_t doc_id) -> FusedEntry& {
    auto [it, inserted] = position.emplace(doc_id, fused.size());
    if (inserted) fused.push_back(FusedEntry{.doc_id = doc_id});
    return fused[it->second];
  };
  for (size_t i = 0; i < keyword.size(); ++i) {
    FusedEntry& e = entry(keyword[i].doc_id);
    e.keyword_rank = static_cast<int>(i + 1);
    e.keyword_score = keyword[i].score;
    e.score += 1.0 / (kRrfK + static_cast<double>(i + 1));
  }
  for (size_t i = 0; i < vector.size(); ++i) {
    FusedEntry& e = entry(vector[i].doc_id);
    e.vector_rank = static_cast<int>(i + 1);
    e.vector_score = vector[i].score;
    e.score += 1.0 / (kRrfK + static_cast<double>(i + 1));
  }
  return fused;
}

constexpr int kAbsent = 1 << 30;  // the rank of a document a list does not hold

}  // namespace

std::vector<FusedEntry> FuseRankings(const std::vector<ListEntry>& keyword,
                                     const std::vector<ListEntry>& vector) {
  std::vector<FusedEntry> fused = Merge(keyword, vector);
  std::stable_sort(fused.begin(), fused.end(), [](const FusedEntry& a, const FusedEntry& b) {
    if (a.score != b.score) return a.score > b.score;
    const int ka = a.keyword_rank == 0 ? kAbsent : a.keyword_rank;
    const int kb = b.keyword_rank == 0 ? kAbsent : b.keyword_rank;
    if (ka != kb) return ka < kb;
    return a.doc_id > b.doc_id;
  });
  return fused;
}

std::vector<FusedEntry> FuseKeywordFirst(const std::vector<ListEntry>& keyword,
                                         const std::vector<ListEntry>& vector) {
  std::vector<FusedEntry> fused = Merge(keyword, vector);
  std::stable_sort(fused.begin(), fused.end(), [](const FusedEntry& a, const FusedEntry& b) {
    const int ka = a.keyword_rank == 0 ? kAbsent : a.keyword_rank;
    const int kb = b.keyword_rank == 0 ? kAbsent : b.keyword_rank;
    if (ka != kb) return ka < kb;
    return a.vector_rank < b.vector_rank;  // both absent from the keyword list
  });
  // The score is the reciprocal of the place, so it falls as the list goes.
  for (size_t i = 0; i < fused.size(); ++i) {
    fused[i].score = 1.0 / (kRrfK + static_cast<double>(i + 1));
  }
  return fused;
}

}  // namespace sessiondb::search
