#include "search/fusion.h"

#include <gtest/gtest.h>

namespace sessiondb::search {
namespace {

std::vector<int64_t> Order(const std::vector<FusedEntry>& fused) {
  std::vector<int64_t> ids;
  for (const FusedEntry& f : fused) ids.push_back(f.doc_id);
  return ids;
}

TEST(Fusion, ByRankLetsAgreeingListsLiftADocument) {
  // Doc 3 is third by keyword but first by vector: by rank it comes first.
  const std::vector<ListEntry> keyword = {{1, 9}, {2, 8}, {3, 7}};
  const std::vector<ListEntry> vector = {{3, 0.9}, {4, 0.8}};
  const auto fused = FuseRankings(keyword, vector);
  EXPECT_EQ(Order(fused), (std::vector<int64_t>{3, 1, 2, 4}));
  EXPECT_NEAR(fused[0].score, 1.0 / 63 + 1.0 / 61, 1e-12);
}

TEST(Fusion, KeywordFirstKeepsTheKeywordOrderWholeThenAddsVectorOnlyHits) {
  const std::vector<ListEntry> keyword = {{1, 9}, {2, 8}, {3, 7}};
  const std::vector<ListEntry> vector = {{5, 0.95}, {3, 0.9}, {4, 0.8}, {1, 0.1}};
  const auto fused = FuseKeywordFirst(keyword, vector);
  EXPECT_EQ(Order(fused), (std::vector<int64_t>{1, 2, 3, 5, 4}));
  // Both ranks shown; the score falls with the place.
  EXPECT_EQ(fused[0].keyword_rank, 1);
  EXPECT_EQ(fused[0].vector_rank, 4);
  EXPECT_EQ(fused[2].vector_rank, 2);
  EXPECT_EQ(fused[3].keyword_rank, 0);
  EXPECT_EQ(fused[3].vector_rank, 1);
  for (size_t i = 0; i < fused.size(); ++i) {
    EXPECT_NEAR(fused[i].score, 1.0 / (kRrfK + static_cast<double>(i + 1)), 1e-12);
  }
}

TEST(Fusion, KeywordFirstWithOneListEmptyIsThatList) {
  EXPECT_EQ(Order(FuseKeywordFirst({{7, 1}, {6, 0.5}}, {})), (std::vector<int64_t>{7, 6}));
  EXPECT_EQ(Order(FuseKeywordFirst({}, {{7, 1}, {6, 0.5}})), (std::vector<int64_t>{7, 6}));
}

}  // namespace
}  // namespace sessiondb::search
