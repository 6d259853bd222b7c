// The saved HNSW index sealed under a key (issue 35): the file holds none of
// the vectors' bytes, loads to the same answers, and a changed, cut, renamed
// or foreign file fails cleanly as kCorruption; without a key nothing changes.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/cipher.h"
#include "gtest/gtest.h"
#include "search/vector_index.h"

namespace sessiondb::search {
namespace {

namespace fs = std::filesystem;

constexpr int kDims = 32;

std::vector<float> RandomUnit(std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(kDims);
  double sum = 0;
  for (float& x : v) {
    x = normal(rng);
    sum += static_cast<double>(x) * x;
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string Raw(std::span<const float> v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)};
}

std::vector<int64_t> Ids(const std::vector<VectorHit>& hits) {
  std::vector<int64_t> ids;
  for (const VectorHit& h : hits) ids.push_back(h.id);
  return ids;
}

class SealedVectorFileTest : public ::testing::Test {
 protected:
  // 5,000 vectors of 32 dimensions: a file of ~1.3 MiB, two sealed chunks.
  static void SetUpTestSuite() {
    std::mt19937 rng(35);
    set_ = new VectorSet(kDims);
    for (int64_t id = 1; id <= 5000; ++id) set_->Add(id, RandomUnit(rng));
    queries_ = new std::vector<std::vector<float>>();
    for (int q = 0; q < 20; ++q) queries_->push_back(RandomUnit(rng));
    auto index = HnswIndex::Build(*set_);
    ASSERT_TRUE(index) << index.error().ToString();
    index_ = index->release();
  }
  static void TearDownTestSuite() {
    delete index_;
    delete set_;
    delete queries_;
  }

  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sessiondb-sealed-vec-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter_++));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  // How many of the set's vectors appear, raw, in `bytes` (any 16 bytes of
  // one are a canary: random floats do not repeat by chance).
  static int VectorsIn(const std::string& bytes) {
    int hits = 0;
    for (size_t i = 0; i < set_->size(); i += 50) {
      if (bytes.find(Raw(set_->vector_at(i)).substr(0, 16)) != std::string::npos) ++hits;
    }
    return hits;
  }

  void ExpectSameAnswers(const HnswIndex& loaded) {
    for (const auto& q : *queries_) {
      std::vector<VectorHit> a = index_->Search(q, 10).value();
      std::vector<VectorHit> b = loaded.Search(q, 10).value();
      ASSERT_EQ(Ids(a), Ids(b));
      for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i].score, b[i].score, 1e-5);
    }
  }

  static void ExpectCorruption(const Result<std::unique_ptr<HnswIndex>>& loaded) {
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.error().code(), StatusCode::kCorruption) << loaded.error().ToString();
  }

  static inline VectorSet* set_ = nullptr;
  static inline std::vector<std::vector<float>>* queries_ = nullptr;
  static inline HnswIndex* index_ = nullptr;
  static inline int counter_ = 0;
  fs::path dir_;
  cipher::SecretKey key_ = cipher::SecretKey::Random();
};

TEST_F(SealedVectorFileTest, TheFileHoldsNoVectorAndLoadsToTheSameAnswers) {
  const std::string plain_path = file("plain.hnsw");
  const std::string path = file("model.hnsw");
  ASSERT_TRUE(index_->Save(plain_path).ok());
  ASSERT_TRUE(index_->Save(path, nullptr, &key_).ok());
  // The scan finds the vectors in a plaintext file, and none in the sealed one.
  EXPECT_GT(VectorsIn(ReadFile(plain_path)), 90);
  const std::string sealed = ReadFile(path);
  EXPECT_EQ(VectorsIn(sealed), 0);
  EXPECT_EQ(sealed.find("SDBHNSW2"), std::string::npos);
  EXPECT_GT(sealed.size(), size_t{1} << 20);  // more than one chunk

  auto loaded = HnswIndex::Load(path, kDims, &key_);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_EQ((*loaded)->size(), 5000u);
  EXPECT_TRUE((*loaded)->Verify().ok());
  ExpectSameAnswers(**loaded);

  // A loaded (decrypted) index saves sealed again, never in plaintext.
  ASSERT_TRUE((*loaded)->Save(path, nullptr, &key_).ok());
  EXPECT_EQ(VectorsIn(ReadFile(path)), 0);
  auto again = HnswIndex::Load(path, kDims, &key_);
  ASSERT_TRUE(again) << again.error().ToString();
  ExpectSameAnswers(**again);
}

TEST_F(SealedVectorFileTest, AFlippedByteAnywhereIsCorruption) {
  const std::string path = file("model.hnsw");
  ASSERT_TRUE(index_->Save(path, nullptr, &key_).ok());
  const std::string sealed = ReadFile(path);
  for (size_t at : {size_t{2}, size_t{12}, size_t{30}, size_t{1} << 20, sealed.size() - 20,
                    sealed.size() - 1}) {
    SCOPED_TRACE(at);
    std::string damaged = sealed;
    damaged[at] ^= 0x04;
    WriteFile(path, damaged);
    ExpectCorruption(HnswIndex::Load(path, kDims, &key_));
  }
}

TEST_F(SealedVectorFileTest, ATruncatedFileIsCorruption) {
  const std::string path = file("model.hnsw");
  ASSERT_TRUE(index_->Save(path, nullptr, &key_).ok());
  const std::string sealed = ReadFile(path);
  WriteFile(path, sealed.substr(0, sealed.size() - 100));
  ExpectCorruption(HnswIndex::Load(path, kDims, &key_));
  WriteFile(path, sealed.substr(0, 10));
  ExpectCorruption(HnswIndex::Load(path, kDims, &key_));
  WriteFile(path, "");
  ExpectCorruption(HnswIndex::Load(path, kDims, &key_));
}

TEST_F(SealedVectorFileTest, AnotherKeyOrAnotherNameCannotOpenIt) {
  const std::string path = file("model_a.hnsw");
  ASSERT_TRUE(index_->Save(path, nullptr, &key_).ok());
  const cipher::SecretKey other = cipher::SecretKey::Random();
  ExpectCorruption(HnswIndex::Load(path, kDims, &other));
  // The base name is bound in: the file of one model renamed to another's.
  fs::copy_file(path, file("model_b.hnsw"));
  ExpectCorruption(HnswIndex::Load(file("model_b.hnsw"), kDims, &key_));
  // Without the key it is no index at all.
  ExpectCorruption(HnswIndex::Load(path, kDims));
}

TEST_F(SealedVectorFileTest, APlaintextFileIsNotReadWhenAKeyIsSet) {
  const std::string path = file("model.hnsw");
  ASSERT_TRUE(index_->Save(path).ok());
  ExpectCorruption(HnswIndex::Load(path, kDims, &key_));
  auto missing = HnswIndex::Load(file("absent.hnsw"), kDims, &key_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
}

TEST_F(SealedVectorFileTest, WithoutAKeyTheFileIsAsBefore) {
  const std::string path = file("model.hnsw");
  ASSERT_TRUE(index_->Save(path, nullptr, nullptr).ok());
  const std::string bytes = ReadFile(path);
  EXPECT_EQ(bytes.substr(0, 8), "SDBHNSW2");
  auto loaded = HnswIndex::Load(path, kDims);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_TRUE((*loaded)->mapped());
  ExpectSameAnswers(**loaded);
  // Saving the mapped index copies the file byte for byte.
  const std::string copy = file("copy.hnsw");
  ASSERT_TRUE((*loaded)->Save(copy).ok());
  EXPECT_TRUE(ReadFile(copy) == bytes);
}

}  // namespace
}  // namespace sessiondb::search
