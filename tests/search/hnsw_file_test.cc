// The saved HNSW index file (search/mapped_hnsw.h): a version 2 file is
// mapped and searched in place and answers as the index it was saved from;
// a version 1 file of the previous release is still read; and a hostile
// file (truncated, flipped, out-of-range links or ids, overflowing counts,
// a header claiming huge sizes, even with its checksums fixed up) is a
// Corruption status or a worse answer, never a crash or a read outside the
// mapping (the sanitizer runs of this suite would catch one).
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "search/fnv.h"
#include "search/mapped_hnsw.h"
#include "search/vector_index.h"

namespace sessiondb::search {
namespace {

namespace fs = std::filesystem;

constexpr int kDims = 32;

std::vector<float> Unit(std::vector<float> v) {
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

// Points around `clusters` random centres (what an embedder of meaning
// gives), ids 1..n.
struct Clustered {
  Clustered(size_t n, size_t clusters, uint32_t seed) : set(kDims) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::vector<std::vector<float>> centres(clusters, std::vector<float>(kDims));
    for (auto& c : centres) {
      for (float& x : c) x = normal(rng);
      c = Unit(c);
    }
    auto draw = [&] {
      std::vector<float> v = centres[rng() % clusters];
      for (float& x : v) x += 0.1f * normal(rng);
      return Unit(v);
    };
    for (size_t i = 0; i < n; ++i) set.Add(static_cast<int64_t>(i + 1), draw());
    for (int q = 0; q < 40; ++q) queries.push_back(draw());
  }
  VectorSet set;
  std::vector<std::vector<float>> queries;
};

std::vector<int64_t> Ids(const std::vector<VectorHit>& hits) {
  std::vector<int64_t> ids;
  for (const VectorHit& h : hits) ids.push_back(h.id);
  return ids;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("sessiondb-hnswfile-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

HnswFileHeader HeaderOf(const std::string& bytes) {
  HnswFileHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  return h;
}

// Writes `h` into `bytes` with its checksum made right again: what a
// hostile file can always do, so the checks after the checksum must hold.
void PutHeader(std::string* bytes, HnswFileHeader h) {
  h.header_fnv = Fnv1a64(
      std::string_view(reinterpret_cast<const char*>(&h), offsetof(HnswFileHeader, header_fnv)));
  std::memcpy(bytes->data(), &h, sizeof(h));
}

// Recomputes the upper block's checksum after an edit inside it.
void FixUpperChecksum(std::string* bytes) {
  HnswFileHeader h = HeaderOf(*bytes);
  h.upper_fnv = Fnv1a64(std::string_view(*bytes).substr(h.upper_offset, h.upper_bytes));
  PutHeader(bytes, h);
}

void PutU32(std::string* bytes, uint64_t offset, uint32_t value) {
  std::memcpy(bytes->data() + offset, &value, sizeof(value));
}

// A saved index of 3,000 clustered points, shared by the tests below.
class HnswFileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    data_ = new Clustered(3000, 30, 21);
    auto built = HnswIndex::Build(data_->set, {}, 16, 100, 2);
    ASSERT_TRUE(built) << built.error().ToString();
    built_ = built->release();
    dir_ = new TempDir();
    path_ = new std::string(dir_->file("v.hnsw"));
    ASSERT_TRUE(built_->Save(*path_).ok());
    good_ = new std::string(ReadAll(*path_));
  }
  static void TearDownTestSuite() {
    delete built_;
    delete data_;
    delete path_;
    delete good_;
    delete dir_;
  }

  // Loads `bytes` as the index file; when it opens, runs every query
  // (plain and filtered) and returns the first error, else OK.
  static Result<std::unique_ptr<HnswIndex>> LoadBytes(const std::string& bytes) {
    WriteAll(*path_, bytes);
    return HnswIndex::Load(*path_, kDims);
  }
  static Status SearchAll(const HnswIndex& index) {
    for (const auto& q : data_->queries) {
      auto hits = index.Search(q, 10, 32);
      if (!hits) return hits.error();
      auto some = index.Search(q, 5, 16, [](int64_t id) { return id % 50 == 0; });
      if (!some) return some.error();
    }
    return Status::Ok();
  }
  // The offset of element `e`'s level-0 list.
  static uint64_t Level0(uint32_t e) {
    const HnswFileHeader h = HeaderOf(*good_);
    return h.level0_offset + e * h.element_bytes;
  }

  static inline Clustered* data_ = nullptr;
  static inline HnswIndex* built_ = nullptr;
  static inline TempDir* dir_ = nullptr;
  static inline std::string* path_ = nullptr;
  static inline std::string* good_ = nullptr;
};

TEST_F(HnswFileTest, TheMappedIndexAnswersAsTheIndexItWasSavedFrom) {
  auto mapped = LoadBytes(*good_);
  ASSERT_TRUE(mapped) << mapped.error().ToString();
  ASSERT_TRUE((*mapped)->mapped());
  EXPECT_FALSE(built_->mapped());
  EXPECT_EQ((*mapped)->size(), 3000u);
  EXPECT_TRUE((*mapped)->Verify().ok());
  // The same graph walked by hnswlib (in memory) and by the mapped loop: the
  // same answers, up to the last bits of a float sum (hnswlib's SIMD adds in
  // another order), so nearly every list is identical and recall is equal.
  size_t identical = 0;
  double agreement = 0, recall_built = 0, recall_mapped = 0;
  for (const auto& q : data_->queries) {
    const std::vector<VectorHit> exact = data_->set.Search(q, 10);
    auto a = built_->Search(q, 10, 32);
    auto b = (*mapped)->Search(q, 10, 32);
    ASSERT_TRUE(a && b);
    identical += Ids(*a) == Ids(*b);
    agreement += RecallAtK(*a, *b);
    recall_built += RecallAtK(exact, *a);
    recall_mapped += RecallAtK(exact, *b);
    for (size_t i = 0; i < b->size() && i < a->size(); ++i) {
      if ((*a)[i].id == (*b)[i].id) {
        EXPECT_NEAR((*a)[i].score, (*b)[i].score, 1e-5);
      }
    }
  }
  const double n = static_cast<double>(data_->queries.size());
  EXPECT_GE(identical, data_->queries.size() * 9 / 10);
  EXPECT_GE(agreement / n, 0.99);
  EXPECT_GE(recall_mapped / n, 0.95);
  EXPECT_NEAR(recall_mapped / n, recall_built / n, 0.01);
  // Filtered: only accepted ids, as many as asked.
  for (const auto& q : data_->queries) {
    auto hits = (*mapped)->Search(q, 10, 32, [](int64_t id) { return id % 7 == 0; });
    ASSERT_TRUE(hits);
    ASSERT_EQ(hits->size(), 10u);
    for (const VectorHit& h : *hits) EXPECT_EQ(h.id % 7, 0);
  }
}

// The first read of a record is a pread, the second faults its page in
// and later ones read it in place (MappedHnsw::NoteVectorRead): every pass
// answers the same.
TEST_F(HnswFileTest, RepeatedQueriesAnswerTheSameWhicheverWayARecordIsRead) {
  auto loaded = LoadBytes(*good_);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  std::vector<std::vector<VectorHit>> first;
  for (const auto& q : data_->queries) {
    auto hits = (*loaded)->Search(q, 10, 32);
    ASSERT_TRUE(hits) << hits.error().ToString();
    first.push_back(*hits);
  }
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t i = 0; i < data_->queries.size(); ++i) {
      auto hits = (*loaded)->Search(data_->queries[i], 10, 32);
      ASSERT_TRUE(hits) << hits.error().ToString();
      ASSERT_EQ(hits->size(), first[i].size());
      for (size_t j = 0; j < hits->size(); ++j) {
        EXPECT_EQ((*hits)[j].id, first[i][j].id) << "pass " << pass << " query " << i;
        EXPECT_EQ((*hits)[j].score, first[i][j].score) << "pass " << pass << " query " << i;
      }
    }
  }
}

// A filter that accepts a handful of ids widens the search to the whole
// index, which is then scanned exactly (HnswIndex::Scan): by pread, 256 KiB
// at a time, so this index of about 800 KB is read in four chunks. The scan
// finds what the exact search over the same vectors finds.
TEST_F(HnswFileTest, AnExactScanOfTheFileFindsWhatTheVectorsHold) {
  auto loaded = LoadBytes(*good_);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  const HnswFileHeader h = HeaderOf(*good_);
  ASSERT_GT(h.count * h.element_bytes, 3 * (uint64_t{256} << 10));
  // Ids from the first, a middle and the last chunk.
  auto accept = [](int64_t id) { return id == 3 || id == 1500 || id == 2999 || id == 3000; };
  for (const auto& q : data_->queries) {
    auto hits = (*loaded)->Search(q, 10, 16, accept);
    ASSERT_TRUE(hits) << hits.error().ToString();
    const std::vector<VectorHit> exact = data_->set.Search(q, 10, accept);
    ASSERT_EQ(hits->size(), 4u);
    ASSERT_EQ(Ids(*hits), Ids(exact));
    for (size_t i = 0; i < exact.size(); ++i) EXPECT_NEAR((*hits)[i].score, exact[i].score, 1e-5);
  }
}

TEST_F(HnswFileTest, ASavedMappedIndexIsTheSameFile) {
  auto mapped = LoadBytes(*good_);
  ASSERT_TRUE(mapped);
  TempDir other;
  ASSERT_TRUE((*mapped)->Save(other.file("copy.hnsw")).ok());
  EXPECT_EQ(ReadAll(other.file("copy.hnsw")), *good_);
}

// tests/data/vector_index_v1.hnsw was written by the release before the
// mapped format (HnswIndex::Save at commit 0b574e1) over the 200 vectors of
// 8 dimensions drawn below.
TEST(HnswFileVersion1, AFileOfThePreviousReleaseIsStillRead) {
  std::mt19937 rng(77);
  VectorSet set(8);
  for (int i = 0; i < 200; ++i) {
    std::normal_distribution<float> normal;
    std::vector<float> v(8);
    double sum = 0;
    for (float& x : v) {
      x = normal(rng);
      sum += static_cast<double>(x) * x;
    }
    for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
    set.Add(i + 1, v);
  }
  const std::string v1 = std::string(SESSIONDB_TESTDATA_DIR) + "/vector_index_v1.hnsw";
  ASSERT_EQ(ReadAll(v1).substr(0, 8), "SDBHNSW1");
  auto old = HnswIndex::Load(v1, 8);
  ASSERT_TRUE(old) << old.error().ToString();
  EXPECT_FALSE((*old)->mapped());  // read the old way
  ASSERT_EQ((*old)->size(), 200u);
  double recall = 0;
  for (size_t i = 0; i < set.size(); i += 10) {
    auto hits = (*old)->Search(set.vector_at(i), 5, 64);
    ASSERT_TRUE(hits);
    recall += RecallAtK(set.Search(set.vector_at(i), 5), *hits);
    ASSERT_FALSE(hits->empty());
    EXPECT_EQ((*hits)[0].id, set.id_at(i));  // each vector finds itself first
  }
  EXPECT_GE(recall / 20, 0.95);
  // Saved again, it becomes version 2 and answers the same.
  TempDir dir;
  ASSERT_TRUE((*old)->Save(dir.file("v2.hnsw")).ok());
  EXPECT_EQ(ReadAll(dir.file("v2.hnsw")).substr(0, 8), "SDBHNSW2");
  auto now = HnswIndex::Load(dir.file("v2.hnsw"), 8);
  ASSERT_TRUE(now) << now.error().ToString();
  EXPECT_TRUE((*now)->mapped());
  for (size_t i = 0; i < set.size(); i += 10) {
    auto a = (*old)->Search(set.vector_at(i), 5, 64);
    auto b = (*now)->Search(set.vector_at(i), 5, 64);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(Ids(*a), Ids(*b));
  }
  // The wrong dimension is refused for either version.
  EXPECT_EQ(HnswIndex::Load(v1, 16).error().code(), StatusCode::kCorruption);
  EXPECT_EQ(HnswIndex::Load(dir.file("v2.hnsw"), 16).error().code(), StatusCode::kCorruption);
}

TEST_F(HnswFileTest, EveryTruncationIsCorruption) {
  std::vector<size_t> sizes = {0, 1, 8, 111, 112, 4095, 4096, 4097, good_->size() - 1};
  for (size_t s = 4096; s < good_->size(); s += 997) sizes.push_back(s);
  for (size_t size : sizes) {
    auto loaded = LoadBytes(good_->substr(0, size));
    ASSERT_FALSE(loaded) << size;
    EXPECT_EQ(loaded.error().code(), StatusCode::kCorruption) << size;
  }
  auto longer = LoadBytes(*good_ + "x");
  ASSERT_FALSE(longer);
  EXPECT_EQ(longer.error().code(), StatusCode::kCorruption);
}

TEST_F(HnswFileTest, AFlippedByteInTheHeaderOrUpperLevelsIsCorruptionAtOpen) {
  const HnswFileHeader h = HeaderOf(*good_);
  ASSERT_GT(h.upper_count, 0u);
  for (uint64_t at : {uint64_t{0}, uint64_t{9}, uint64_t{20}, uint64_t{60}, uint64_t{100},
                      h.upper_offset, h.upper_offset + 5, h.upper_offset + h.upper_bytes / 2,
                      h.upper_offset + h.upper_bytes - 1}) {
    std::string bytes = *good_;
    bytes[at] ^= 0x10;
    auto loaded = LoadBytes(bytes);
    ASSERT_FALSE(loaded) << at;
    EXPECT_EQ(loaded.error().code(), StatusCode::kCorruption) << at;
  }
}

TEST_F(HnswFileTest, AFlippedByteInLevelZeroCostsAnAnswerNeverACrash) {
  // Level 0 is not read at open: the damage shows when a search meets it
  // (kCorruption) or as a slightly wrong score; Verify finds it always.
  std::mt19937 rng(5);
  const HnswFileHeader h = HeaderOf(*good_);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes = *good_;
    const uint64_t at = h.level0_offset + rng() % (h.upper_offset - h.level0_offset);
    bytes[at] ^= static_cast<char>(1u << (rng() % 8));
    auto loaded = LoadBytes(bytes);
    ASSERT_TRUE(loaded) << at << ": " << loaded.error().ToString();
    const Status searched = SearchAll(**loaded);
    if (!searched.ok()) {
      EXPECT_EQ(searched.code(), StatusCode::kCorruption) << at;
    }
    const Status verified = (*loaded)->Verify();
    EXPECT_EQ(verified.code(), StatusCode::kCorruption) << at;
    EXPECT_NE(verified.message().find("damaged"), std::string::npos);
  }
}

TEST_F(HnswFileTest, ALevelZeroLinkOutOfRangeIsCorruptionWhenWalked) {
  // Every element's first neighbour points past the end: any search walks
  // into one.
  const HnswFileHeader h = HeaderOf(*good_);
  for (uint32_t bad : {static_cast<uint32_t>(h.count), uint32_t{0xffffffff}}) {
    std::string bytes = *good_;
    for (uint32_t e = 0; e < h.count; ++e) PutU32(&bytes, Level0(e) + 4, bad);
    auto loaded = LoadBytes(bytes);
    ASSERT_TRUE(loaded);
    auto hits = (*loaded)->Search(data_->queries[0], 10, 32);
    ASSERT_FALSE(hits);
    EXPECT_EQ(hits.error().code(), StatusCode::kCorruption);
    EXPECT_NE(hits.error().message().find("links outside the index"), std::string::npos);
  }
}

// A record no query has read yet is read by pread, not through the mapping
// (MappedHnsw::ReadRecord), so a file cut short under a fresh index (which
// sessiondb never does: it replaces by rename) costs its first search an
// error, where a read of the mapping would have killed the process (SIGBUS).
TEST_F(HnswFileTest, AFileCutShortUnderAFreshIndexCostsItsSearchAnErrorNotTheProcess) {
  auto loaded = LoadBytes(*good_);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  const HnswFileHeader h = HeaderOf(*good_);
  ASSERT_EQ(::truncate(path_->c_str(), static_cast<off_t>(h.level0_offset + h.element_bytes / 2)),
            0);
  auto hits = (*loaded)->Search(data_->queries[1], 10, 32);
  ASSERT_FALSE(hits);
  EXPECT_EQ(hits.error().code(), StatusCode::kCorruption);
  EXPECT_NE(hits.error().message().find("ends inside element"), std::string::npos)
      << hits.error().message();
  // The file made whole again opens and answers as before.
  auto again = LoadBytes(*good_);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_TRUE(SearchAll(**again).ok());
}

TEST_F(HnswFileTest, ALevelZeroCountOverItsCapacityIsCorruptionWhenWalked) {
  const HnswFileHeader h = HeaderOf(*good_);
  for (uint32_t count : {2 * h.m + 1, uint32_t{0xffff}, uint32_t{0xffffffff}}) {
    std::string bytes = *good_;
    for (uint32_t e = 0; e < h.count; ++e) PutU32(&bytes, Level0(e), count);
    auto loaded = LoadBytes(bytes);
    ASSERT_TRUE(loaded);
    auto hits = (*loaded)->Search(data_->queries[0], 10, 32);
    ASSERT_FALSE(hits);
    EXPECT_EQ(hits.error().code(), StatusCode::kCorruption);
  }
}

TEST_F(HnswFileTest, ANegativeIdIsCorruptionWhenReturned) {
  const HnswFileHeader h = HeaderOf(*good_);
  std::string bytes = *good_;
  const uint64_t negative = uint64_t{1} << 63;
  for (uint32_t e = 0; e < h.count; ++e) {
    std::memcpy(bytes.data() + Level0(e) + h.element_bytes - 8, &negative, 8);
  }
  auto loaded = LoadBytes(bytes);
  ASSERT_TRUE(loaded);
  auto hits = (*loaded)->Search(data_->queries[0], 10, 32);
  ASSERT_FALSE(hits);
  EXPECT_EQ(hits.error().code(), StatusCode::kCorruption);
  // The exact scan of a selective filter reads every id: the same answer.
  auto scanned = (*loaded)->Search(data_->queries[0], 10, 32, [](int64_t) { return false; });
  ASSERT_FALSE(scanned);
  EXPECT_EQ(scanned.error().code(), StatusCode::kCorruption);
}

TEST_F(HnswFileTest, AHeaderClaimingHugeOrInconsistentSizesIsCorruption) {
  const HnswFileHeader good = HeaderOf(*good_);
  std::vector<std::pair<const char*, HnswFileHeader>> lies;
  auto lie = [&](const char* what, auto edit) {
    HnswFileHeader h = good;
    edit(h);
    lies.emplace_back(what, h);
  };
  lie("count 2^32-2", [](HnswFileHeader& h) { h.count = 0xfffffffeu; });
  lie("count 2^63", [](HnswFileHeader& h) { h.count = uint64_t{1} << 63; });
  lie("count + 1", [](HnswFileHeader& h) { h.count += 1; });
  lie("count - 1", [](HnswFileHeader& h) { h.count -= 1; });
  lie("m 2^31", [](HnswFileHeader& h) { h.m = 1u << 31; });
  lie("m 0", [](HnswFileHeader& h) { h.m = 0; });
  lie("m + 1", [](HnswFileHeader& h) { h.m += 1; });
  lie("element bytes 2^62", [](HnswFileHeader& h) { h.element_bytes = uint64_t{1} << 62; });
  lie("upper bytes 2^64-1", [](HnswFileHeader& h) { h.upper_bytes = ~uint64_t{0}; });
  lie("upper offset 2^64-8", [](HnswFileHeader& h) { h.upper_offset = ~uint64_t{0} - 7; });
  lie("upper count 2^64-1", [](HnswFileHeader& h) { h.upper_count = ~uint64_t{0}; });
  lie("upper count + 1", [](HnswFileHeader& h) { h.upper_count += 1; });
  lie("max level 2^32-1", [](HnswFileHeader& h) { h.max_level = ~0u; });
  lie("max level + 1", [](HnswFileHeader& h) { h.max_level += 1; });
  lie("entry point = count",
      [](HnswFileHeader& h) { h.entry_point = static_cast<uint32_t>(h.count); });
  lie("entry point at level 0", [&](HnswFileHeader& h) {
    // The first element without an upper entry.
    for (uint32_t e = 0;; ++e) {
      bool upper = false;
      for (uint64_t i = 0; i < good.upper_count; ++i) {
        uint32_t el;
        std::memcpy(&el, good_->data() + good.upper_offset + 8 * i, 4);
        upper |= el == e;
      }
      if (!upper) {
        h.entry_point = e;
        return;
      }
    }
  });
  lie("level 0 elsewhere", [](HnswFileHeader& h) { h.level0_offset = 0; });
  lie("dims 2^32-1", [](HnswFileHeader& h) { h.dims = ~0u; });
  for (const auto& [what, h] : lies) {
    std::string bytes = *good_;
    PutHeader(&bytes, h);
    auto loaded = LoadBytes(bytes);
    ASSERT_FALSE(loaded) << what;
    EXPECT_EQ(loaded.error().code(), StatusCode::kCorruption) << what;
  }
}

TEST_F(HnswFileTest, BadUpperLevelsAreCorruptionAtOpenEvenWithTheirChecksumFixed) {
  const HnswFileHeader h = HeaderOf(*good_);
  const uint64_t entries = h.upper_offset;
  const uint64_t lists = h.upper_offset + 8 * h.upper_count;
  struct Edit {
    const char* what;
    uint64_t offset;
    uint32_t value;
  };
  uint32_t first_element, first_level;
  std::memcpy(&first_element, good_->data() + entries, 4);
  std::memcpy(&first_level, good_->data() + entries + 4, 4);
  const std::vector<Edit> edits = {
      {"entry element out of range", entries, static_cast<uint32_t>(h.count)},
      {"entries out of order", entries + 8, first_element},
      {"entry level 0", entries + 4, 0},
      {"entry level above the top", entries + 4, h.max_level + 1},
      {"entry level not matching the lists", entries + 4,
       first_level < h.max_level ? first_level + 1 : first_level - 1},
      {"list count over m", lists, h.m + 1},
      {"list count 2^16-1", lists, 0xffff},
      {"neighbour out of range", lists + 4, static_cast<uint32_t>(h.count)},
      {"neighbour 2^32-1", lists + 4, 0xffffffffu},
  };
  for (const Edit& edit : edits) {
    std::string bytes = *good_;
    PutU32(&bytes, edit.offset, edit.value);
    FixUpperChecksum(&bytes);
    auto loaded = LoadBytes(bytes);
    ASSERT_FALSE(loaded) << edit.what;
    EXPECT_EQ(loaded.error().code(), StatusCode::kCorruption) << edit.what;
  }
}

TEST_F(HnswFileTest, RandomDamageWithChecksumsFixedNeverCrashes) {
  // Any bytes, checksums made right: open refuses or searches answer or
  // report corruption. Under AddressSanitizer a read outside the mapping or
  // the copies would stop the test.
  std::mt19937 rng(99);
  const HnswFileHeader h = HeaderOf(*good_);
  int opened = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = *good_;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) {
      // Half in the header and the upper block, where open must catch it.
      const bool small = rng() % 2 == 0;
      uint64_t at = small ? (rng() % 2 ? rng() % sizeof(HnswFileHeader)
                                       : h.upper_offset + rng() % h.upper_bytes)
                          : rng() % bytes.size();
      bytes[at] = static_cast<char>(rng());
    }
    HnswFileHeader damaged = HeaderOf(bytes);
    if (damaged.upper_offset == h.upper_offset && damaged.upper_bytes == h.upper_bytes) {
      FixUpperChecksum(&bytes);
    } else {
      PutHeader(&bytes, damaged);
    }
    auto loaded = LoadBytes(bytes);
    if (!loaded) {
      EXPECT_EQ(loaded.error().code(), StatusCode::kCorruption);
      continue;
    }
    ++opened;
    const Status searched = SearchAll(**loaded);
    if (!searched.ok()) {
      EXPECT_EQ(searched.code(), StatusCode::kCorruption);
    }
  }
  EXPECT_GT(opened, 0);  // some damage is only found by searching
}

TEST(HnswFileEmpty, AnEmptyIndexIsSavedMappedAndSearched) {
  VectorSet empty(kDims);
  auto index = HnswIndex::Build(empty);
  ASSERT_TRUE(index);
  TempDir dir;
  ASSERT_TRUE((*index)->Save(dir.file("e.hnsw")).ok());
  EXPECT_EQ(fs::file_size(dir.file("e.hnsw")), kHnswHeaderBytes);
  auto loaded = HnswIndex::Load(dir.file("e.hnsw"), kDims);
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_TRUE((*loaded)->mapped());
  auto hits = (*loaded)->Search(std::vector<float>(kDims, 0.1f), 5);
  ASSERT_TRUE(hits);
  EXPECT_TRUE(hits->empty());
}

}  // namespace
}  // namespace sessiondb::search
