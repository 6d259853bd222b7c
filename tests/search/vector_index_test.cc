#include "search/vector_index.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "gtest/gtest.h"
#include "search/vector_codec.h"

namespace sessiondb::search {
namespace {

namespace fs = std::filesystem;

std::vector<float> RandomUnit(std::mt19937& rng, int dims) {
  std::normal_distribution<float> normal;
  std::vector<float> v(dims);
  double sum = 0;
  for (float& x : v) {
    x = normal(rng);
    sum += static_cast<double>(x) * x;
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

double Dot(std::span<const float> a, std::span<const float> b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// Ids 1..n (positive, as the store's are), seeded random unit vectors.
VectorSet RandomSet(size_t n, int dims, uint32_t seed) {
  std::mt19937 rng(seed);
  VectorSet set(dims);
  for (size_t i = 0; i < n; ++i) set.Add(static_cast<int64_t>(i + 1), RandomUnit(rng, dims));
  return set;
}

// The k best ids by brute force, in the test's own arithmetic (double).
std::vector<int64_t> BruteForce(const VectorSet& set, std::span<const float> q, size_t k,
                                const std::function<bool(int64_t)>& accept = {}) {
  std::vector<std::pair<double, int64_t>> all;
  for (size_t i = 0; i < set.size(); ++i) {
    if (accept && !accept(set.id_at(i))) continue;
    all.emplace_back(-Dot(q, set.vector_at(i)), set.id_at(i));
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> ids;
  for (size_t i = 0; i < std::min(k, all.size()); ++i) ids.push_back(all[i].second);
  return ids;
}

std::vector<int64_t> Ids(const std::vector<VectorHit>& hits) {
  std::vector<int64_t> ids;
  for (const VectorHit& h : hits) ids.push_back(h.id);
  return ids;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("sessiondb-vec-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// ---------------------------------------------------------------------------
// Codec

TEST(VectorCodec, RoundTripKeepsTheDirection) {
  std::mt19937 rng(7);
  for (int dims : {1, 3, 64, 384, 1536}) {
    std::vector<float> v = RandomUnit(rng, dims);
    std::string bytes = EncodeVector(v);
    EXPECT_EQ(bytes.size(), 4u + dims);
    auto back = DecodeVector(bytes);
    ASSERT_TRUE(back) << back.error().ToString();
    ASSERT_EQ(back->size(), static_cast<size_t>(dims));
    EXPECT_GT(Dot(v, *back), 0.999) << dims;
    EXPECT_NEAR(Dot(*back, *back), 1.0, 1e-5);
  }
}

TEST(VectorCodec, StartsWithTheLittleEndianScale) {
  std::vector<float> v = {0.5f, -0.25f};
  std::string bytes = EncodeVector(v);
  ASSERT_EQ(bytes.size(), 6u);
  // 0.5f is 0x3f000000.
  EXPECT_EQ(bytes.substr(0, 4), std::string("\x00\x00\x00\x3f", 4));
  EXPECT_EQ(static_cast<int8_t>(bytes[4]), 127);
  EXPECT_EQ(static_cast<int8_t>(bytes[5]), -64);  // round(-0.5 * 127) = -64 (away from zero)
}

TEST(VectorCodec, AZeroVectorStaysZero) {
  std::vector<float> v(8, 0.0f);
  auto back = DecodeVector(EncodeVector(v));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, v);
}

TEST(VectorCodec, ATruncatedVectorIsCorruption) {
  for (std::string bytes : {std::string(), std::string("\x01\x02\x03", 3)}) {
    auto back = DecodeVector(bytes);
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().code(), StatusCode::kCorruption);
  }
}

TEST(VectorCodec, ValuesThatDoNotFitTheScaleAreCorruption) {
  std::string bytes = EncodeVector(std::vector<float>{0.6f, 0.8f});
  bytes[5] = 50;  // the largest value no longer maps to 127
  EXPECT_EQ(DecodeVector(bytes).error().code(), StatusCode::kCorruption);
  std::string nan_scale("\x00\x00\xc0\x7f\x7f", 5);  // scale NaN
  EXPECT_EQ(DecodeVector(nan_scale).error().code(), StatusCode::kCorruption);
}

// ---------------------------------------------------------------------------
// VectorSet

TEST(VectorSet, FindsTheTrueNearestNeighbours) {
  VectorSet set = RandomSet(2000, 48, 1);
  EXPECT_EQ(set.size(), 2000u);
  EXPECT_EQ(set.dims(), 48);
  std::mt19937 rng(2);
  for (int q = 0; q < 20; ++q) {
    std::vector<float> query = RandomUnit(rng, 48);
    std::vector<VectorHit> hits = set.Search(query, 10);
    ASSERT_EQ(hits.size(), 10u);
    EXPECT_EQ(Ids(hits), BruteForce(set, query, 10));
    for (size_t i = 1; i < hits.size(); ++i) EXPECT_GE(hits[i - 1].score, hits[i].score);
    for (const VectorHit& h : hits) {
      EXPECT_NEAR(h.score, Dot(query, set.vector_at(h.id - 1)), 1e-5);
    }
  }
}

TEST(VectorSet, AVectorIsItsOwnBestMatch) {
  VectorSet set = RandomSet(500, 384, 3);
  for (size_t i : {0u, 17u, 499u}) {
    std::vector<VectorHit> hits = set.Search(set.vector_at(i), 1);
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].id, set.id_at(i));
    EXPECT_NEAR(hits[0].score, 1.0f, 1e-5);
  }
}

TEST(VectorSet, OnlyAcceptedIdsAreReturned) {
  VectorSet set = RandomSet(1000, 32, 4);
  std::mt19937 rng(5);
  std::vector<float> query = RandomUnit(rng, 32);
  auto even = [](int64_t id) { return id % 2 == 0; };
  std::vector<VectorHit> hits = set.Search(query, 15, even);
  ASSERT_EQ(hits.size(), 15u);
  for (const VectorHit& h : hits) EXPECT_EQ(h.id % 2, 0);
  EXPECT_EQ(Ids(hits), BruteForce(set, query, 15, even));
}

TEST(VectorSet, KLargerThanTheSetReturnsEverything) {
  VectorSet set = RandomSet(7, 16, 6);
  std::mt19937 rng(7);
  std::vector<float> query = RandomUnit(rng, 16);
  std::vector<VectorHit> hits = set.Search(query, 100);
  ASSERT_EQ(hits.size(), 7u);
  EXPECT_EQ(Ids(hits), BruteForce(set, query, 100));
  EXPECT_TRUE(set.Search(query, 0).empty());
  EXPECT_TRUE(VectorSet(16).Search(query, 5).empty());
}

TEST(VectorSet, AQueryOfTheWrongDimensionFindsNothing) {
  VectorSet set = RandomSet(10, 16, 8);
  std::vector<float> query(15, 0.1f);
  EXPECT_TRUE(set.Search(query, 5).empty());
}

// ---------------------------------------------------------------------------
// HnswIndex

class HnswIndexTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_ = new VectorSet(RandomSet(5000, 64, 11));
    std::mt19937 rng(12);
    queries_ = new std::vector<std::vector<float>>();
    for (int q = 0; q < 50; ++q) queries_->push_back(RandomUnit(rng, 64));
    std::vector<std::pair<int64_t, int64_t>> calls;
    auto index = HnswIndex::Build(
        *set_, [&calls](int64_t done, int64_t total) { calls.emplace_back(done, total); });
    ASSERT_TRUE(index) << index.error().ToString();
    index_ = index->release();
    progress_ = new std::vector<std::pair<int64_t, int64_t>>(std::move(calls));
  }
  static void TearDownTestSuite() {
    delete index_;
    delete set_;
    delete queries_;
    delete progress_;
  }

  static double MeanRecall(const HnswIndex& index, size_t k, size_t ef) {
    double sum = 0;
    for (const auto& q : *queries_)
      sum += RecallAtK(set_->Search(q, k), index.Search(q, k, ef).value());
    return sum / static_cast<double>(queries_->size());
  }

  static inline VectorSet* set_ = nullptr;
  static inline std::vector<std::vector<float>>* queries_ = nullptr;
  static inline HnswIndex* index_ = nullptr;
  static inline std::vector<std::pair<int64_t, int64_t>>* progress_ = nullptr;
};

// Random 64-dimensional vectors are a worst case for HNSW (no clusters, high
// intrinsic dimension): with m=16, ef_construction=100 recall@10 is about 0.88
// at ef=64 and 0.96 at ef=100; real embeddings do better.
TEST_F(HnswIndexTest, FindsAtLeastNinetyPercentOfTheExactTopTen) {
  ASSERT_EQ(index_->size(), 5000u);
  EXPECT_EQ(index_->dims(), 64);
  const double recall = MeanRecall(*index_, 10, /*ef=*/100);
  EXPECT_GE(recall, 0.9);
  // A wider search finds more; a narrow one noticeably less.
  EXPECT_GE(MeanRecall(*index_, 10, 400), 0.98);
  EXPECT_LT(MeanRecall(*index_, 10, 10), recall);
}

TEST_F(HnswIndexTest, ScoresAreCosinesBestFirst) {
  const auto& q = (*queries_)[0];
  std::vector<VectorHit> hits = index_->Search(q, 10).value();
  ASSERT_EQ(hits.size(), 10u);
  for (size_t i = 0; i < hits.size(); ++i) {
    EXPECT_NEAR(hits[i].score, Dot(q, set_->vector_at(hits[i].id - 1)), 1e-5);
    if (i > 0) {
      EXPECT_GE(hits[i - 1].score, hits[i].score);
    }
  }
}

TEST_F(HnswIndexTest, ReportsProgressUpToTheTotal) {
  ASSERT_FALSE(progress_->empty());
  EXPECT_EQ(progress_->back(), std::make_pair(int64_t{5000}, int64_t{5000}));
  for (size_t i = 1; i < progress_->size(); ++i) {
    EXPECT_LE((*progress_)[i - 1].first, (*progress_)[i].first);
  }
}

TEST_F(HnswIndexTest, SavedAndLoadedGivesTheSameResults) {
  TempDir dir;
  const std::string path = dir.file("vectors.hnsw");
  ASSERT_TRUE(index_->Save(path).ok());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  auto loaded = HnswIndex::Load(path, 64);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_TRUE((*loaded)->mapped());
  EXPECT_EQ((*loaded)->size(), 5000u);
  // hnswlib (in memory) and the mapped loop walk the same graph; their dot
  // products add in another order, so scores agree to float rounding.
  for (const auto& q : *queries_) {
    std::vector<VectorHit> a = index_->Search(q, 10).value();
    std::vector<VectorHit> b = (*loaded)->Search(q, 10).value();
    ASSERT_EQ(Ids(a), Ids(b));
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i].score, b[i].score, 1e-5);
  }
  // Saving over an existing index replaces it.
  ASSERT_TRUE((*loaded)->Save(path).ok());
  EXPECT_TRUE(HnswIndex::Load(path, 64));
}

TEST_F(HnswIndexTest, OnlyAcceptedIdsAreReturned) {
  auto rare = [](int64_t id) { return id % 97 == 0; };  // 51 of 5000
  auto common = [](int64_t id) { return id % 3 != 0; };
  for (const auto& q : *queries_) {
    std::vector<VectorHit> hits = index_->Search(q, 10, 64, rare).value();
    ASSERT_EQ(hits.size(), 10u);
    for (const VectorHit& h : hits) EXPECT_EQ(h.id % 97, 0);
    std::vector<VectorHit> more = index_->Search(q, 10, 64, common).value();
    ASSERT_EQ(more.size(), 10u);
    for (const VectorHit& h : more) EXPECT_NE(h.id % 3, 0);
  }
  // A filter that accepts nothing, and one that accepts fewer than k.
  EXPECT_TRUE(
      index_->Search((*queries_)[0], 10, 64, [](int64_t) { return false; }).value().empty());
  std::vector<VectorHit> few =
      index_->Search((*queries_)[0], 10, 64, [](int64_t id) { return id <= 3; }).value();
  std::set<int64_t> ids;
  for (const VectorHit& h : few) ids.insert(h.id);
  EXPECT_EQ(ids, (std::set<int64_t>{1, 2, 3}));
}

TEST_F(HnswIndexTest, AFilteredSearchKeepsItsRecall) {
  auto common = [](int64_t id) { return id % 3 != 0; };
  double sum = 0;
  for (const auto& q : *queries_) {
    sum += RecallAtK(set_->Search(q, 10, common), index_->Search(q, 10, 100, common).value());
  }
  EXPECT_GE(sum / static_cast<double>(queries_->size()), 0.9);
}

TEST(HnswIndex, LoadingAMissingFileIsNotFound) {
  TempDir dir;
  auto loaded = HnswIndex::Load(dir.file("absent.hnsw"), 64);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code(), StatusCode::kNotFound);
}

TEST(HnswIndex, LoadingGarbageIsCorruptionNotACrash) {
  TempDir dir;
  const std::string path = dir.file("garbage.hnsw");
  std::mt19937 rng(13);
  for (size_t size : {0u, 10u, 48u, 4096u}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    std::ofstream(path, std::ios::binary) << bytes;
    auto loaded = HnswIndex::Load(path, 64);
    ASSERT_FALSE(loaded) << size;
    EXPECT_EQ(loaded.error().code(), StatusCode::kCorruption) << size;
  }
}

TEST(HnswIndex, ADamagedOrTruncatedIndexIsCorruption) {
  VectorSet set = RandomSet(300, 16, 14);
  auto index = HnswIndex::Build(set);
  ASSERT_TRUE(index);
  TempDir dir;
  const std::string path = dir.file("v.hnsw");
  ASSERT_TRUE((*index)->Save(path).ok());
  std::string good;
  {
    std::ifstream in(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_TRUE(HnswIndex::Load(path, 16));

  auto load_bytes = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return HnswIndex::Load(path, 16);
  };
  // A flip in the level-0 block (the middle of the file) is not read at
  // open (hnsw_file_test.cc: searches meet it or not); Verify finds it.
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  auto opened = load_bytes(flipped);
  ASSERT_TRUE(opened) << opened.error().ToString();
  EXPECT_EQ((*opened)->Verify().code(), StatusCode::kCorruption);
  flipped = good;
  flipped[20] ^= 0x40;  // in the header
  EXPECT_EQ(load_bytes(flipped).error().code(), StatusCode::kCorruption);
  EXPECT_EQ(load_bytes(good.substr(0, good.size() - 1)).error().code(), StatusCode::kCorruption);
  EXPECT_EQ(load_bytes(good + "x").error().code(), StatusCode::kCorruption);
  // The right file for another dimension.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << good;
  EXPECT_EQ(HnswIndex::Load(path, 32).error().code(), StatusCode::kCorruption);
}

TEST(HnswIndex, SmallAndEmptySetsWork) {
  VectorSet empty(8);
  auto index = HnswIndex::Build(empty);
  ASSERT_TRUE(index) << index.error().ToString();
  EXPECT_EQ((*index)->size(), 0u);
  std::vector<float> q(8, 0.0f);
  q[0] = 1.0f;
  EXPECT_TRUE((*index)->Search(q, 5).value().empty());
  TempDir dir;
  ASSERT_TRUE((*index)->Save(dir.file("e.hnsw")).ok());
  auto loaded = HnswIndex::Load(dir.file("e.hnsw"), 8);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_TRUE((*loaded)->Search(q, 5).value().empty());

  VectorSet three = RandomSet(3, 8, 15);
  auto small = HnswIndex::Build(three);
  ASSERT_TRUE(small);
  std::vector<VectorHit> hits = (*small)->Search(three.vector_at(1), 10).value();
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].id, 2);
}

TEST(HnswIndex, NegativeOrRepeatedIdsAreRejected) {
  VectorSet set(4);
  std::vector<float> v = {1, 0, 0, 0};
  set.Add(-1, v);
  EXPECT_EQ(HnswIndex::Build(set).error().code(), StatusCode::kInvalidArgument);
  VectorSet twice(4);
  twice.Add(5, v);
  twice.Add(5, v);
  EXPECT_EQ(HnswIndex::Build(twice).error().code(), StatusCode::kInvalidArgument);
}

TEST(RecallAtK, CountsTheShareOfExactIdsFound) {
  std::vector<VectorHit> exact = {{1, 0.9f}, {2, 0.8f}, {3, 0.7f}, {4, 0.6f}};
  std::vector<VectorHit> approx = {{1, 0.9f}, {3, 0.7f}, {9, 0.65f}, {4, 0.6f}};
  EXPECT_DOUBLE_EQ(RecallAtK(exact, approx), 0.75);
  EXPECT_DOUBLE_EQ(RecallAtK(exact, {}), 0.0);
  EXPECT_DOUBLE_EQ(RecallAtK({}, approx), 1.0);
}

}  // namespace
}  // namespace sessiondb::search
