// Reciprocal rank fusion: one ranking from a keyword list and a vector list.
// A document's score is the sum over the lists holding it of 1 / (k + rank),
// so agreeing lists lift a document and neither list's raw scale matters.
#pragma once

#include <cstdint>
#include <vector>

namespace sessiondb::search {

struct ListEntry {
  int64_t doc_id = 0;
  double score = 0;  // the list's own score (BM25, cosine), kept for display
};

struct FusedEntry {
  int64_t doc_id = 0;
  double score = 0;
  int keyword_rank = 0;  // 1-based; 0 when absent from the list
  double keyword_score = 0;
  int vector_rank = 0;
  double vector_score = 0;
};

inline constexpr double kRrfK = 60;

// Both lists best first. Ties are broken by keyword rank, then doc id (newer
// first), so the order is deterministic.
std::vector<FusedEntry> FuseRankings(const std::vector<ListEntry>& keyword,
                                     const std::vector<ListEntry>& vector);

// The keyword order kept whole: every keyword hit first, in its order, then
// the hits only the vector list holds, in its order; each score is
// 1 / (kRrfK + place), the ranks as FuseRankings gives them. For an embedder that knows spelling,
// not meaning: fused by rank, its near-miss spellings (a keyword hit ranked 17,343rd that the
// vector list ranks first) would pass strong keyword hits, so hybrid could rank worse than keyword
// alone. This way it never does, and still finds what no keyword matched.
std::vector<FusedEntry> FuseKeywordFirst(const std::vector<ListEntry>& keyword,
                                         const std::vector<ListEntry>& vector);

}  // namespace sessiondb::search
