// The sealed blob folder (issue 35): round trips, one copy per content under
// one key, names and files that hold no plaintext, and every kind of damage
// (a flipped byte, a truncation, a file copied under another name, another
// key) detected and named.
#include "blob/sealed_blob_store.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "blob/sha256.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace sessiondb::blob {
namespace {

namespace fs = std::filesystem;
using sessiondb::testing::TempDir;

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const fs::path& path, const std::string& bytes) {
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Every regular file under `root`.
std::vector<fs::path> FilesUnder(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  return files;
}

// How many files under `root` contain `canary`.
int FilesHolding(const fs::path& root, const std::string& canary) {
  int hits = 0;
  for (const fs::path& file : FilesUnder(root)) {
    if (ReadFile(file).find(canary) != std::string::npos) ++hits;
  }
  return hits;
}

class SealedBlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = OpenSealed(key_); }

  std::unique_ptr<BlobStore> OpenSealed(const cipher::SecretKey& key) {
    auto files = FileBlobStore::Open(root(), /*sync=*/false);
    EXPECT_TRUE(files) << files.error().ToString();
    return SealBlobStore(std::move(*files), key);
  }

  std::string root() const { return dir_.Sub("blobs"); }
  fs::path FileOf(std::string_view sha256) const {
    return BlobFilePath(root(), SealedBlobName(key_, sha256));
  }

  // Puts `bytes` and returns their digest.
  std::string PutBytes(const std::string& bytes) {
    std::string sha = Sha256Hex(bytes);
    Status put = store_->Put(sha, bytes);
    EXPECT_TRUE(put.ok()) << put.ToString();
    return sha;
  }

  // Reads the blob through OpenReader in pieces of `piece` bytes.
  Result<std::string> ReadStreamed(std::string_view sha, size_t piece) {
    ASSIGN_OR_RETURN(std::unique_ptr<BlobReader> reader, store_->OpenReader(sha));
    std::string out;
    while (true) {
      ASSIGN_OR_RETURN(std::string got, reader->Read(piece));
      if (got.empty()) break;
      out += got;
    }
    if (static_cast<int64_t>(out.size()) != reader->size()) {
      return Err(Status::Internal("reader size disagrees"));
    }
    return out;
  }

  void ExpectCorruptionNaming(std::string_view sha) {
    Result<std::string> got = store_->Get(sha, /*verify=*/false);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code(), StatusCode::kCorruption) << got.error().ToString();
    EXPECT_NE(got.error().message().find(std::string(sha)), std::string::npos)
        << got.error().message();
    Result<std::string> streamed = ReadStreamed(sha, 4096);
    ASSERT_FALSE(streamed);
    EXPECT_EQ(streamed.error().code(), StatusCode::kCorruption) << streamed.error().ToString();
    EXPECT_NE(streamed.error().message().find(std::string(sha)), std::string::npos)
        << streamed.error().message();
  }

  TempDir dir_;
  cipher::SecretKey key_ = cipher::SecretKey::Random();
  std::unique_ptr<BlobStore> store_;
};

TEST_F(SealedBlobStoreTest, RoundTripsBlobsOfEverySize) {
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{1000}, kSealedChunkBytes - 1, kSealedChunkBytes,
        kSealedChunkBytes + 1, 2 * kSealedChunkBytes, size_t{1} << 20, (size_t{1} << 20) + 12345}) {
    SCOPED_TRACE(size);
    const std::string bytes = RandomBytes(size, static_cast<uint32_t>(size));
    const std::string sha = PutBytes(bytes);
    Result<std::string> got = store_->Get(sha, /*verify=*/true);
    ASSERT_TRUE(got) << got.error().ToString();
    EXPECT_TRUE(*got == bytes);
    for (size_t piece : {size_t{1000}, kSealedChunkBytes, size_t{1} << 20}) {
      Result<std::string> streamed = ReadStreamed(sha, piece);
      ASSERT_TRUE(streamed) << streamed.error().ToString();
      EXPECT_TRUE(*streamed == bytes);
    }
    Result<BlobInfo> info = store_->Stat(sha);
    ASSERT_TRUE(info) << info.error().ToString();
    EXPECT_EQ(info->size, static_cast<int64_t>(size));
    EXPECT_EQ(info->sha256, sha);
    EXPECT_GT(info->mtime_ms, 0);
  }
}

TEST_F(SealedBlobStoreTest, WritingTheSameBytesTwiceKeepsOneCopy) {
  const std::string bytes = RandomBytes(100000, 7);
  const std::string sha = PutBytes(bytes);
  PutBytes(bytes);
  const std::vector<BlobToPut> batch = {{sha, bytes}, {sha, bytes}};
  ASSERT_TRUE(store_->PutAll(batch).ok());
  EXPECT_EQ(FilesUnder(fs::path(root()) / "sha256").size(), 1u);
  Result<std::string> got = store_->Get(sha, /*verify=*/true);
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_TRUE(*got == bytes);
}

TEST_F(SealedBlobStoreTest, PutAllStoresEachBlob) {
  std::vector<std::string> bytes = {RandomBytes(10, 1), RandomBytes(70000, 2), ""};
  std::vector<std::string> shas;
  std::vector<BlobToPut> batch;
  for (const std::string& b : bytes) shas.push_back(Sha256Hex(b));
  for (size_t i = 0; i < bytes.size(); ++i) batch.push_back({shas[i], bytes[i]});
  ASSERT_TRUE(store_->PutAll(batch).ok());
  for (size_t i = 0; i < bytes.size(); ++i) {
    Result<std::string> got = store_->Get(shas[i], /*verify=*/true);
    ASSERT_TRUE(got) << got.error().ToString();
    EXPECT_TRUE(*got == bytes[i]);
  }
  EXPECT_EQ(store_->Stage("abc", 3), nullptr);
}

TEST_F(SealedBlobStoreTest, FileNamesRevealNothingWithoutTheKey) {
  const std::string sha = PutBytes("the same bytes");
  const std::vector<fs::path> files = FilesUnder(fs::path(root()) / "sha256");
  ASSERT_EQ(files.size(), 1u);
  const std::string name = files[0].filename().string();
  EXPECT_NE(name, sha);
  EXPECT_TRUE(IsSha256Hex(name));
  EXPECT_EQ(name, SealedBlobName(key_, sha));
  EXPECT_NE(SealedBlobName(cipher::SecretKey::Random(), sha), name);
}

TEST_F(SealedBlobStoreTest, NoFileHoldsTheBlobsPlaintext) {
  const std::string canary = "CANARY-7f3a9c-sealed-blob-plaintext";
  std::string big = RandomBytes(3 * kSealedChunkBytes, 3);
  big.replace(kSealedChunkBytes - 10, canary.size(), canary);  // across a chunk boundary
  const std::string small = "hello " + canary + " world";
  const std::string sha_small = PutBytes(small);
  const std::string sha_big = PutBytes(big);
  EXPECT_EQ(FilesHolding(root(), canary), 0);
  EXPECT_EQ(FilesHolding(root(), sha_small), 0);
  EXPECT_EQ(FilesHolding(root(), *cipher::FromHex(sha_small, "sha")), 0);
  EXPECT_EQ(FilesHolding(root(), big.substr(2 * kSealedChunkBytes, 64)), 0);

  // The scan itself works: a plain store shows the canary.
  auto plain = FileBlobStore::Open(dir_.Sub("plain"), /*sync=*/false);
  ASSERT_TRUE(plain);
  ASSERT_TRUE((*plain)->Put(sha_small, small).ok());
  ASSERT_TRUE((*plain)->Put(sha_big, big).ok());
  EXPECT_EQ(FilesHolding(dir_.Sub("plain"), canary), 2);
}

TEST_F(SealedBlobStoreTest, AFlippedByteInAChunkIsCorruptionNamingTheBlob) {
  const std::string bytes = RandomBytes(3 * kSealedChunkBytes + 5, 4);
  const std::string sha = PutBytes(bytes);
  const fs::path file = FileOf(sha);
  const std::string sealed = ReadFile(file);
  for (size_t at : {size_t{3}, size_t{90}, 2 * kSealedChunkBytes + 500, sealed.size() - 1}) {
    SCOPED_TRACE(at);
    std::string damaged = sealed;
    damaged[at] ^= 0x20;
    WriteFile(file, damaged);
    ExpectCorruptionNaming(sha);
  }
}

TEST_F(SealedBlobStoreTest, ATruncatedFileIsCorruption) {
  const std::string bytes = RandomBytes(2 * kSealedChunkBytes + 100, 5);
  const std::string sha = PutBytes(bytes);
  const fs::path file = FileOf(sha);
  const std::string sealed = ReadFile(file);
  // Cut mid-chunk, at a chunk boundary (the last chunk dropped whole), and
  // inside the header.
  for (size_t keep :
       {sealed.size() - 50, sealed.size() - (100 + cipher::kSealOverhead), size_t{40}}) {
    SCOPED_TRACE(keep);
    WriteFile(file, sealed.substr(0, keep));
    ExpectCorruptionNaming(sha);
  }
}

TEST_F(SealedBlobStoreTest, AFileCopiedOverAnotherBlobsNameIsCorruption) {
  const std::string a = PutBytes(RandomBytes(5000, 6));
  const std::string b = PutBytes(RandomBytes(5000, 7));
  WriteFile(FileOf(b), ReadFile(FileOf(a)));
  ExpectCorruptionNaming(b);
  Result<std::string> still = store_->Get(a, /*verify=*/true);
  EXPECT_TRUE(still) << still.error().ToString();
}

TEST_F(SealedBlobStoreTest, AChunkFromAnotherBlobDoesNotOpen) {
  const std::string a = PutBytes(RandomBytes(2 * kSealedChunkBytes, 8));
  const std::string b = PutBytes(RandomBytes(2 * kSealedChunkBytes, 9));
  const std::string file_a = ReadFile(FileOf(a));
  std::string file_b = ReadFile(FileOf(b));
  const size_t header = file_b.size() - 2 * (kSealedChunkBytes + cipher::kSealOverhead);
  file_b.replace(header, kSealedChunkBytes + cipher::kSealOverhead,
                 file_a.substr(header, kSealedChunkBytes + cipher::kSealOverhead));
  WriteFile(FileOf(b), file_b);
  ExpectCorruptionNaming(b);
}

TEST_F(SealedBlobStoreTest, SwappedChunksDoNotOpen) {
  const std::string sha = PutBytes(RandomBytes(2 * kSealedChunkBytes, 10));
  std::string sealed = ReadFile(FileOf(sha));
  const size_t record = kSealedChunkBytes + cipher::kSealOverhead;
  const size_t header = sealed.size() - 2 * record;
  const std::string first = sealed.substr(header, record);
  sealed.replace(header, record, sealed.substr(header + record, record));
  sealed.replace(header + record, record, first);
  WriteFile(FileOf(sha), sealed);
  ExpectCorruptionNaming(sha);
}

TEST_F(SealedBlobStoreTest, AnotherKeyCannotOpenTheBlob) {
  const std::string sha = PutBytes(RandomBytes(3000, 11));
  const cipher::SecretKey other_key = cipher::SecretKey::Random();
  // Under another key the blob has another name: absent.
  std::unique_ptr<BlobStore> other = OpenSealed(other_key);
  Result<std::string> got = other->Get(sha, false);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kNotFound);
  // Even the file moved to that name does not open.
  const fs::path moved = BlobFilePath(root(), SealedBlobName(other_key, sha));
  fs::create_directories(moved.parent_path());
  fs::copy_file(FileOf(sha), moved);
  got = other->Get(sha, false);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kCorruption) << got.error().ToString();
  EXPECT_NE(got.error().message().find("does not decrypt"), std::string::npos);
}

TEST_F(SealedBlobStoreTest, ForEachYieldsTheOriginalDigests) {
  std::set<std::string> put;
  for (uint32_t i = 0; i < 5; ++i) put.insert(PutBytes(RandomBytes(i * 40000, 20 + i)));
  // Files no blob of this key: another key's blob, and a damaged header.
  std::unique_ptr<BlobStore> other = OpenSealed(cipher::SecretKey::Random());
  const std::string foreign = RandomBytes(10, 99);
  ASSERT_TRUE(other->Put(Sha256Hex(foreign), foreign).ok());
  const std::string damaged = PutBytes("soon damaged");
  std::string sealed = ReadFile(FileOf(damaged));
  sealed[20] ^= 1;
  WriteFile(FileOf(damaged), sealed);

  std::set<std::string> listed;
  Status walked = store_->ForEach([&](const BlobInfo& info) {
    listed.insert(info.sha256);
    Result<BlobInfo> stat = store_->Stat(info.sha256);
    EXPECT_TRUE(stat);
    if (stat) {
      EXPECT_EQ(stat->size, info.size);
    }
    return Status::Ok();
  });
  ASSERT_TRUE(walked.ok()) << walked.ToString();
  EXPECT_EQ(listed, put);
}

TEST_F(SealedBlobStoreTest, RemoveDeletesTheKeyedFile) {
  const std::string sha = PutBytes("to be removed");
  ASSERT_TRUE(fs::exists(FileOf(sha)));
  ASSERT_TRUE(store_->Remove(sha).ok());
  EXPECT_FALSE(fs::exists(FileOf(sha)));
  Result<BlobInfo> info = store_->Stat(sha);
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code(), StatusCode::kNotFound);
  EXPECT_NE(info.error().message().find(sha), std::string::npos);
  EXPECT_TRUE(store_->Remove(sha).ok());
}

TEST_F(SealedBlobStoreTest, SkipThenReadGivesTheRightBytes) {
  const std::string bytes = RandomBytes(5 * kSealedChunkBytes + 777, 12);
  const std::string sha = PutBytes(bytes);
  const std::vector<std::pair<int64_t, size_t>> cases = {
      {0, 10},
      {5, 100},
      {static_cast<int64_t>(kSealedChunkBytes), 50},
      {static_cast<int64_t>(kSealedChunkBytes) - 3, 10},
      {static_cast<int64_t>(3 * kSealedChunkBytes) + 17, 200000},
      {static_cast<int64_t>(bytes.size()) - 5, 100},
      {static_cast<int64_t>(bytes.size()), 100},
  };
  for (const auto& [skip, read] : cases) {
    SCOPED_TRACE(skip);
    auto reader = store_->OpenReader(sha);
    ASSERT_TRUE(reader) << reader.error().ToString();
    ASSERT_TRUE((*reader)->Skip(skip).ok());
    std::string got;
    while (got.size() < read) {
      Result<std::string> piece = (*reader)->Read(read - got.size());
      ASSERT_TRUE(piece) << piece.error().ToString();
      if (piece->empty()) break;
      got += *piece;
    }
    EXPECT_TRUE(got == bytes.substr(static_cast<size_t>(skip), read));
  }
  // Skips after reads, inside and across chunks.
  auto reader = store_->OpenReader(sha);
  ASSERT_TRUE(reader);
  int64_t at = 0;
  for (int64_t step : {int64_t{100}, int64_t{70000}, int64_t{1}, int64_t{200000}}) {
    Result<std::string> piece = (*reader)->Read(10);
    ASSERT_TRUE(piece);
    EXPECT_TRUE(*piece == bytes.substr(static_cast<size_t>(at), 10));
    at += 10;
    ASSERT_TRUE((*reader)->Skip(step).ok());
    at += step;
  }
  EXPECT_FALSE((*reader)->Skip(static_cast<int64_t>(bytes.size())).ok());
}

TEST_F(SealedBlobStoreTest, NamesThatAreNoDigestAreRejected) {
  EXPECT_EQ(store_->Put("not-a-digest", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(store_->Get("ABC", false));
}

}  // namespace
}  // namespace sessiondb::blob
