// The content-addressed blob folder.
#include "blob/blob_store.h"

#include <fstream>
#include <set>
#include <thread>

#include "blob/sha256.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace sessiondb::blob {
namespace {

using sessiondb::testing::TempDir;

class FileBlobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = FileBlobStore::Open(dir_.Sub("blobs"), /*sync=*/true);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }
  size_t FileCount() {
    size_t n = 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(dir_.Sub("blobs") + "/sha256")) {
      n += e.is_regular_file();
    }
    return n;
  }
  TempDir dir_;
  std::unique_ptr<FileBlobStore> store_;
};

TEST_F(FileBlobStoreTest, BytesRoundTripUnderTheirShardedName) {
  std::string bytes("binary\0bytes\xff", 13);
  std::string sha = Sha256Hex(bytes);
  ASSERT_TRUE(store_->Put(sha, bytes).ok());
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), bytes);
  auto path = store_->Path(sha);
  ASSERT_TRUE(path);
  EXPECT_EQ(*path, dir_.Sub("blobs") + "/sha256/" + sha.substr(0, 2) + "/" + sha);
  auto info = store_->Stat(sha);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->size, 13);
}

TEST_F(FileBlobStoreTest, WritingTheSameBytesTwiceKeepsOneCopy) {
  std::string sha = Sha256Hex("same");
  ASSERT_TRUE(store_->Put(sha, "same").ok());
  ASSERT_TRUE(store_->Put(sha, "same").ok());
  EXPECT_EQ(FileCount(), 1u);
}

TEST_F(FileBlobStoreTest, AMissingBlobIsNotFound) {
  std::string sha = Sha256Hex("never written");
  EXPECT_EQ(store_->Get(sha, false).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat(sha).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Path(sha).error().code(), StatusCode::kNotFound);
}

TEST_F(FileBlobStoreTest, NamesThatAreNotDigestsAreRefused) {
  EXPECT_EQ(store_->Put("../../etc/passwd", "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Get("abc", false).error().code(), StatusCode::kInvalidArgument);
}

TEST_F(FileBlobStoreTest, VerifyDetectsBytesThatNoLongerMatchTheirName) {
  std::string sha = Sha256Hex("original");
  ASSERT_TRUE(store_->Put(sha, "original").ok());
  std::string path = *store_->Path(sha);
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "tampered";
  EXPECT_EQ(*store_->Get(sha, /*verify=*/false), "tampered");
  auto verified = store_->Get(sha, /*verify=*/true);
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().code(), StatusCode::kCorruption);
}

TEST_F(FileBlobStoreTest, ForEachListsExactlyTheBlobsAndIgnoresStrayFiles) {
  std::set<std::string> expected;
  for (int i = 0; i < 20; ++i) {
    std::string bytes = "blob " + std::to_string(i);
    expected.insert(Sha256Hex(bytes));
    ASSERT_TRUE(store_->Put(Sha256Hex(bytes), bytes).ok());
  }
  std::string shard = dir_.Sub("blobs") + "/sha256/" + expected.begin()->substr(0, 2);
  std::ofstream(shard + "/notes.txt") << "not a blob";
  std::set<std::string> seen;
  ASSERT_TRUE(store_
                  ->ForEach([&](const BlobInfo& info) {
                    seen.insert(info.sha256);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(seen, expected);
}

TEST_F(FileBlobStoreTest, RemoveDeletesAndIsQuietWhenAlreadyGone) {
  std::string sha = Sha256Hex("temporary");
  ASSERT_TRUE(store_->Put(sha, "temporary").ok());
  ASSERT_TRUE(store_->Remove(sha).ok());
  EXPECT_FALSE(store_->Stat(sha));
  EXPECT_TRUE(store_->Remove(sha).ok());
}

TEST_F(FileBlobStoreTest, EightThreadsWritingTheSameBlobLeaveOneIntactFile) {
  std::string bytes(256 * 1024, 'z');
  bytes[1000] = 'q';
  std::string sha = Sha256Hex(bytes);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) failures += !store_->Put(sha, bytes).ok();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(FileCount(), 1u);
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), bytes);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.Sub("blobs") + "/tmp"));
}

}  // namespace
}  // namespace sessiondb::blob
