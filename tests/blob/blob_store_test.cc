// The content-addressed blob folder: layout, one copy per content, integrity,
// listing, and writers racing on the same blob.
#include "blob/blob_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
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

// Replaces the contents of a (read-only) blob file, as a disk fault or a
// stray tool would.
void Overwrite(const std::string& path, const std::string& bytes) {
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Sets a file's mtime to `seconds_ago` in the past.
void Age(const std::string& path, int seconds_ago) {
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds_ago;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

class FileBlobStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto opened = FileBlobStore::Open(root(), /*sync=*/GetParam());
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }

  std::string root() const { return dir_.Sub("blobs"); }

  // Every regular file under sha256/, as "shard/name".
  std::set<std::string> Files() const {
    std::set<std::string> files;
    for (auto& e : fs::recursive_directory_iterator(root() + "/sha256")) {
      if (e.is_regular_file()) {
        files.insert(e.path().parent_path().filename().string() + "/" +
                     e.path().filename().string());
      }
    }
    return files;
  }

  // The names ForEach reports.
  std::multiset<std::string> Listed() {
    std::multiset<std::string> seen;
    Status s = store_->ForEach([&](const BlobInfo& info) {
      seen.insert(info.sha256);
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return seen;
  }

  // Puts `bytes` under their digest and returns the digest.
  std::string Put(const std::string& bytes) {
    std::string sha = Sha256Hex(bytes);
    Status s = store_->Put(sha, bytes);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return sha;
  }

  TempDir dir_;
  std::unique_ptr<FileBlobStore> store_;
};

INSTANTIATE_TEST_SUITE_P(SyncAndNoSync, FileBlobStoreTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Synced" : "Unsynced";
                         });

TEST_P(FileBlobStoreTest, OpenCreatesTheDigestAndTempFolders) {
  EXPECT_TRUE(fs::is_directory(root() + "/sha256"));
  EXPECT_TRUE(fs::is_directory(root() + "/tmp"));
}

TEST_P(FileBlobStoreTest, BytesRoundTripByteForByte) {
  for (std::string bytes :
       {std::string(), std::string("binary\0bytes\xff", 13), RandomBytes(1 << 20, 1)}) {
    std::string sha = Put(bytes);
    auto read = store_->Get(sha, /*verify=*/true);
    ASSERT_TRUE(read) << read.error().ToString();
    EXPECT_EQ(*read, bytes);
  }
}

TEST_P(FileBlobStoreTest, ABlobLivesUnderItsShardedFullName) {
  std::string sha = Put("sharded");
  const std::string path = BlobFilePath(root(), sha);
  EXPECT_EQ(path, root() + "/sha256/" + sha.substr(0, 2) + "/" + sha);
  EXPECT_TRUE(fs::is_regular_file(path));
  EXPECT_EQ(Files(), std::set<std::string>{sha.substr(0, 2) + "/" + sha});
  EXPECT_TRUE(fs::is_empty(root() + "/tmp"));
}

TEST_P(FileBlobStoreTest, AReaderStreamsTheBytesAndOutlivesARemove) {
  const std::string bytes = RandomBytes(70'000, 9);
  std::string sha = Put(bytes);
  auto reader = store_->OpenReader(sha);
  ASSERT_TRUE(reader) << reader.error().ToString();
  EXPECT_EQ((*reader)->size(), 70'000);
  // Removed once opened: the open file still reads whole (gc cannot tear it).
  ASSERT_TRUE(store_->Remove(sha).ok());
  std::string streamed;
  while (true) {
    auto piece = (*reader)->Read(32'768);
    ASSERT_TRUE(piece) << piece.error().ToString();
    if (piece->empty()) break;
    streamed += *piece;
  }
  EXPECT_EQ(streamed, bytes);
}

TEST_P(FileBlobStoreTest, StatGivesTheSizeAndARecentModificationTime) {
  const int64_t before_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  std::string sha = Put(std::string(1234, 'x'));
  auto info = store_->Stat(sha);
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_EQ(info->sha256, sha);
  EXPECT_EQ(info->size, 1234);
  EXPECT_GE(info->mtime_ms, before_ms - 2000);  // file systems round times
  EXPECT_LE(info->mtime_ms, before_ms + 60'000);
}

TEST_P(FileBlobStoreTest, WritingTheSameBytesTwiceKeepsOneCopy) {
  std::string sha = Put("same");
  Put("same");
  EXPECT_EQ(Files().size(), 1u);
  EXPECT_EQ(Listed(), std::multiset<std::string>{sha});
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), "same");
}

TEST_P(FileBlobStoreTest, WritingAnExistingBlobAgainRefreshesItsModificationTime) {
  std::string sha = Put("reused");
  const std::string path = BlobFilePath(root(), sha);
  Age(path, 3 * 24 * 3600);
  const int64_t aged_ms = store_->Stat(sha)->mtime_ms;
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const ino_t inode_before = st.st_ino;

  Put("reused");
  EXPECT_GT(store_->Stat(sha)->mtime_ms, aged_ms + 2 * 24 * 3600 * 1000LL);
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, inode_before) << "the existing blob was rewritten, not touched";
}

TEST_P(FileBlobStoreTest, ABlobOfTheWrongSizeIsReplacedByTheNextWrite) {
  std::string sha = Put("the real bytes");
  Overwrite(BlobFilePath(root(), sha), "torn");
  Put("the real bytes");
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), "the real bytes");
}

TEST_P(FileBlobStoreTest, AMissingBlobIsNotFound) {
  std::string sha = Sha256Hex("never written");
  EXPECT_EQ(store_->Get(sha, /*verify=*/false).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Get(sha, /*verify=*/true).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat(sha).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->OpenReader(sha).error().code(), StatusCode::kNotFound);
  EXPECT_NE(store_->Get(sha, false).error().message().find(sha), std::string::npos);
}

TEST_P(FileBlobStoreTest, NamesThatAreNotDigestsAreRefused) {
  for (std::string name : {std::string("../../etc/passwd"), std::string("abc"),
                           std::string(64, 'A'), "../" + std::string(61, 'a')}) {
    EXPECT_EQ(store_->Put(name, "x").code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(store_->Get(name, false).error().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(store_->Stat(name).error().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(store_->OpenReader(name).error().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(store_->Remove(name).code(), StatusCode::kInvalidArgument) << name;
  }
  EXPECT_TRUE(Files().empty());
}

TEST_P(FileBlobStoreTest, VerifyDetectsBytesThatNoLongerMatchTheirName) {
  std::string sha = Put("original");
  Overwrite(BlobFilePath(root(), sha), "tampered");
  EXPECT_EQ(*store_->Get(sha, /*verify=*/false), "tampered");
  auto verified = store_->Get(sha, /*verify=*/true);
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().code(), StatusCode::kCorruption);
  EXPECT_NE(verified.error().message().find(sha), std::string::npos);
}

TEST_P(FileBlobStoreTest, VerifyDetectsAFlippedBitOfTheSameSize) {
  std::string bytes = RandomBytes(100'000, 2);
  std::string sha = Put(bytes);
  bytes[50'000] ^= 0x01;
  Overwrite(BlobFilePath(root(), sha), bytes);
  EXPECT_EQ(store_->Get(sha, /*verify=*/true).error().code(), StatusCode::kCorruption);
}

TEST_P(FileBlobStoreTest, RemoveDeletesAndIsQuietWhenAlreadyGone) {
  std::string kept = Put("kept");
  std::string sha = Put("temporary");
  ASSERT_TRUE(store_->Remove(sha).ok());
  EXPECT_EQ(store_->Stat(sha).error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Remove(sha).ok());
  EXPECT_TRUE(store_->Remove(Sha256Hex("never written")).ok());
  EXPECT_EQ(Listed(), std::multiset<std::string>{kept});
}

TEST_P(FileBlobStoreTest, ForEachListsExactlyTheBlobsWithTheirSizes) {
  std::map<std::string, int64_t> expected;
  for (int i = 0; i < 50; ++i) {
    std::string bytes = "blob " + std::to_string(i) + std::string(i, '.');
    expected[Put(bytes)] = static_cast<int64_t>(bytes.size());
  }
  std::map<std::string, int64_t> seen;
  ASSERT_TRUE(store_
                  ->ForEach([&](const BlobInfo& info) {
                    EXPECT_TRUE(seen.emplace(info.sha256, info.size).second) << "listed twice";
                    EXPECT_GT(info.mtime_ms, 0);
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(seen, expected);
}

TEST_P(FileBlobStoreTest, ForEachIgnoresStrayFilesAndFolders) {
  std::string sha = Put("the only blob");
  const std::string base = root() + "/sha256/";
  const std::string shard = base + sha.substr(0, 2) + "/";
  std::ofstream(shard + "notes.txt") << "not a blob";
  std::ofstream(shard + std::string(64, 'A')) << "uppercase name";
  std::ofstream(shard + sha + ".tmp") << "suffixed name";
  fs::create_directories(shard + Sha256Hex("a folder"));  // right shape, not a file
  const std::string other = sha[0] == '0' ? "1" : "0";
  std::ofstream(base + "README") << "stray file in sha256/";
  fs::create_directories(base + "zz");
  std::ofstream(base + "zz/" + Sha256Hex("x")) << "x";  // shard folder with a non-hex name
  fs::create_directories(base + other + sha.substr(1, 1));
  std::ofstream(base + other + sha.substr(1, 1) + "/" + sha) << "in the wrong shard";
  std::ofstream(base + (sha.substr(0, 2) == "ab" ? "cd" : "ab")) << "a shard-shaped file";
  std::ofstream(root() + "/tmp/123-4-5.tmp") << "a writer's temp file";
  EXPECT_EQ(Listed(), std::multiset<std::string>{sha});
}

TEST_P(FileBlobStoreTest, ForEachStopsAtAndReturnsTheFirstError) {
  for (int i = 0; i < 10; ++i) Put("blob " + std::to_string(i));
  int visited = 0;
  Status s = store_->ForEach(
      [&](const BlobInfo&) { return ++visited == 3 ? Status::Busy("stop here") : Status::Ok(); });
  EXPECT_EQ(s.code(), StatusCode::kBusy);
  EXPECT_EQ(s.message(), "stop here");
  EXPECT_EQ(visited, 3);
}

TEST_P(FileBlobStoreTest, OpenRemovesTempFilesOlderThanAnHourAndKeepsYoungOnes) {
  const std::string stale = root() + "/tmp/crashed.tmp";
  const std::string young = root() + "/tmp/in-flight.tmp";
  std::ofstream(stale) << "left by a crash";
  std::ofstream(young) << "a live writer's";
  Age(stale, 2 * 3600);
  Age(young, 60);
  auto reopened = FileBlobStore::Open(root(), GetParam());
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(young));
}

TEST_P(FileBlobStoreTest, ReopeningKeepsTheBlobs) {
  std::string sha = Put("durable");
  store_.reset();
  auto reopened = FileBlobStore::Open(root(), GetParam());
  ASSERT_TRUE(reopened);
  EXPECT_EQ(*(*reopened)->Get(sha, /*verify=*/true), "durable");
}

TEST_P(FileBlobStoreTest, EightThreadsWritingTheSameBlobLeaveOneIntactFile) {
  std::string bytes = RandomBytes(256 * 1024, 3);
  std::string sha = Sha256Hex(bytes);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) failures += !store_->Put(sha, bytes).ok();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Files().size(), 1u);
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), bytes);
  EXPECT_TRUE(fs::is_empty(root() + "/tmp"));
}

TEST_P(FileBlobStoreTest, EightThreadsWritingDifferentBlobsKeepThemAll) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        std::string bytes = RandomBytes(1000, static_cast<uint32_t>(t * 1000 + i));
        failures += !store_->Put(Sha256Hex(bytes), bytes).ok();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Listed().size(), 200u);
  Status s = store_->ForEach([&](const BlobInfo& info) {
    auto bytes = store_->Get(info.sha256, /*verify=*/true);
    return bytes ? Status::Ok() : bytes.error();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_P(FileBlobStoreTest, ProcessesSharingTheFolderWriteOneIntactCopy) {
  std::string bytes = RandomBytes(512 * 1024, 4);
  std::string sha = Sha256Hex(bytes);
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Each process opens the folder itself, as a second program would.
      auto store = FileBlobStore::Open(root(), GetParam());
      bool ok = store.has_value();
      for (int i = 0; ok && i < 10; ++i) ok = (*store)->Put(sha, bytes).ok();
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(Files().size(), 1u);
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), bytes);
  EXPECT_TRUE(fs::is_empty(root() + "/tmp"));
}

TEST_P(FileBlobStoreTest, PutAllStoresEachBlobOnceAndLeavesNoTempFile) {
  std::vector<std::string> bytes;
  for (uint32_t i = 0; i < 70; ++i) bytes.push_back(RandomBytes(1000 + i, 100 + i));
  const std::string already = Put(bytes[3]);
  std::vector<std::string> digests;
  std::vector<BlobToPut> blobs;
  for (const std::string& b : bytes) digests.push_back(Sha256Hex(b));
  // More than PutAll holds open at once, and one digest twice.
  for (size_t i = 0; i < bytes.size(); ++i) blobs.push_back({digests[i], bytes[i]});
  blobs.push_back({digests[0], bytes[0]});
  Status s = store_->PutAll(blobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Files().size(), bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto got = store_->Get(digests[i], /*verify=*/true);
    ASSERT_TRUE(got) << i << ": " << got.error().ToString();
    EXPECT_EQ(*got, bytes[i]);
  }
  EXPECT_EQ(already, digests[3]);
  EXPECT_TRUE(fs::is_empty(root() + "/tmp"));
}

TEST_P(FileBlobStoreTest, PutAllRefusesABadNameBeforeWritingAnything) {
  const std::string good = RandomBytes(100, 1);
  const std::string good_sha = Sha256Hex(good);
  std::vector<BlobToPut> blobs = {{good_sha, good}, {"not-a-digest", "x"}};
  Status s = store_->PutAll(blobs);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Files().empty());
}

// The order PutAll's writes reach the file system, through the seam. The
// files' syncs run on threads of their own (all "sync", so their order does
// not show), and staged files are written on another: calls are recorded
// under a lock. With
// `fail_syncs`, every file sync fails with EIO (after nothing was synced).
class RecordingFileSystem final : public FileSystem {
 public:
  bool fail_syncs = false;

  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void clear() {
    std::lock_guard lock(mu_);
    calls_.clear();
  }

  Result<std::unique_ptr<WritableFile>> Create(const std::string& path, bool exclusive,
                                               int mode) override {
    Record("create");
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, real_->Create(path, exclusive, mode));
    return std::unique_ptr<WritableFile>(new File(this, std::move(file)));
  }
  Status Rename(const std::string& from, const std::string& to) override {
    Record("rename");
    return real_->Rename(from, to);
  }
  Status Remove(const std::string& path) override { return real_->Remove(path); }
  Status CreateDirectory(const std::string& path, int mode) override {
    return real_->CreateDirectory(path, mode);
  }
  Status SyncDirectory(const std::string& path) override {
    Record("sync directory " + fs::path(path).filename().string());
    return real_->SyncDirectory(path);
  }

 private:
  void Record(std::string call) {
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(call));
  }

  class File final : public WritableFile {
   public:
    File(RecordingFileSystem* fs, std::unique_ptr<WritableFile> real)
        : fs_(fs), real_(std::move(real)) {}
    Status Append(std::string_view bytes) override {
      fs_->Record("append");
      return real_->Append(bytes);
    }
    Status Sync() override {
      fs_->Record("sync");
      if (fs_->fail_syncs) return Status::Io("injected: fdatasync failed (EIO)");
      return real_->Sync();
    }
    Status Close() override { return real_->Close(); }

   private:
    RecordingFileSystem* fs_;
    std::unique_ptr<WritableFile> real_;
  };
  FileSystem* const real_ = FileSystem::Default();
  std::mutex mu_;
  std::vector<std::string> calls_;
};

TEST(FileBlobStorePutAll, WritesAllThenSyncsAllThenRenamesAllThenSyncsEachShardOnce) {
  TempDir dir;
  RecordingFileSystem recording;
  auto opened = FileBlobStore::Open(dir.Sub("blobs"), /*sync=*/true, &recording);
  ASSERT_TRUE(opened) << opened.error().ToString();
  // Three blobs, two of them in the same shard.
  std::vector<std::string> bytes, digests;
  std::map<std::string, int> per_shard;
  for (uint32_t seed = 0; bytes.size() < 3; ++seed) {
    std::string b = RandomBytes(500, seed);
    std::string d = Sha256Hex(b);
    const std::string shard = d.substr(0, 2);
    // The first blob opens a shard; the second shares it; the third is elsewhere.
    if (bytes.size() == 1 && shard != digests[0].substr(0, 2)) continue;
    if (bytes.size() == 2 && shard == digests[0].substr(0, 2)) continue;
    bytes.push_back(b);
    digests.push_back(d);
    ++per_shard[shard];
  }
  std::vector<BlobToPut> blobs;
  for (size_t i = 0; i < 3; ++i) blobs.push_back({digests[i], bytes[i]});
  recording.clear();
  Status s = (*opened)->PutAll(blobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string a = digests[0].substr(0, 2), c = digests[2].substr(0, 2);
  std::vector<std::string> want = {
      "create",
      "append",
      "create",
      "append",
      "create",
      "append",  // every file written
      "sync",
      "sync",
      "sync",  // then each synced
      "rename",
      "rename",
      "rename",  // then named
      "sync directory " + a,
      "sync directory " + c,    // each shard once
      "sync directory sha256",  // the new shards' entries
  };
  EXPECT_EQ(recording.calls(), want);
}

// ---- Staged blobs: written while the caller hashes, named by PutAll --------

// The temp files left in tmp/.
size_t TempFiles(const std::string& root) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(root + "/tmp")) n += e.is_regular_file() ? 1 : 0;
  return n;
}

// Names a staged blob `sha` and, once its writer has taken the bytes, puts
// it (the staged writer's usual end).
Status NameAndPut(BlobStore& store, StagedBlob& staged, const std::string& sha,
                  std::string_view bytes) {
  staged.SetDigest(sha);
  staged.WaitWritten();
  const std::vector<BlobToPut> blobs = {{sha, bytes, &staged}};
  return store.PutAll(blobs);
}

TEST_P(FileBlobStoreTest, AStagedBlobGetsItsNameOnlyFromPutAll) {
  const std::string bytes = RandomBytes(300 * 1024, 7);
  std::unique_ptr<StagedBlob> staged = store_->Stage(bytes, bytes.size());
  ASSERT_NE(staged, nullptr);
  const std::string sha = Sha256Hex(bytes);
  staged->SetDigest(sha);
  staged->WaitWritten();
  // Written, maybe synced, but under no final name yet.
  EXPECT_TRUE(Files().empty());
  EXPECT_EQ(TempFiles(root()), 1u);
  const std::vector<BlobToPut> blobs = {{sha, bytes, staged.get()}};
  Status s = store_->PutAll(blobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  staged.reset();
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), bytes);
  EXPECT_EQ(Files().size(), 1u);
  EXPECT_EQ(TempFiles(root()), 0u);
}

TEST_P(FileBlobStoreTest, AStagedBlobDroppedBeforePutAllLeavesNoFile) {
  const std::string unnamed = RandomBytes(200 * 1024, 8);
  const std::string named = RandomBytes(200 * 1024, 9);
  // Dropped before it was named (a refused message), and after (a failed append).
  std::unique_ptr<StagedBlob> a = store_->Stage(unnamed, unnamed.size());
  std::unique_ptr<StagedBlob> b = store_->Stage(named, named.size());
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  b->SetDigest(Sha256Hex(named));
  a.reset();
  b.reset();
  EXPECT_TRUE(Files().empty());
  EXPECT_EQ(TempFiles(root()), 0u);
}

// The size of the one temp file in tmp/, once it reaches `want` (the writer
// is a thread of its own); its last size when 10 s pass first.
uintmax_t TempFileSizeOnceItReaches(const std::string& root, uintmax_t want) {
  uintmax_t size = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& e : fs::directory_iterator(root + "/tmp")) size = e.file_size();
    if (size >= want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return size;
}

TEST_P(FileBlobStoreTest, AStagedBlobIsWrittenPieceByPieceAsItsBytesAreReady) {
  // An image being decoded: the writer starts on the first half before the
  // second half exists, and writes the second half as it was when announced.
  const std::string want = RandomBytes(400 * 1024, 15);
  const size_t half = want.size() / 2;
  std::string bytes(want.size(), '\0');
  std::unique_ptr<StagedBlob> staged = store_->Stage(bytes, 0);
  ASSERT_NE(staged, nullptr);
  bytes.replace(0, half, want, 0, half);
  staged->Ready(half);
  EXPECT_EQ(TempFileSizeOnceItReaches(root(), half), half);
  bytes.replace(half, want.size() - half, want, half);
  staged->Ready(want.size());
  const std::string sha = Sha256Hex(want);
  Status s = NameAndPut(*store_, *staged, sha, bytes);
  ASSERT_TRUE(s.ok()) << s.ToString();
  staged.reset();
  EXPECT_EQ(*store_->Get(sha, /*verify=*/true), want);
  EXPECT_EQ(TempFiles(root()), 0u);
}

TEST_P(FileBlobStoreTest, AStagedBlobDroppedBeforeAllItsBytesWereReadyLeavesNoFile) {
  // A data URI whose base64 breaks halfway: its writer waits for bytes that
  // never come, and must still end, and take its temp file with it.
  std::string bytes = RandomBytes(300 * 1024, 16);
  std::unique_ptr<StagedBlob> staged = store_->Stage(bytes, 0);
  ASSERT_NE(staged, nullptr);
  staged->Ready(bytes.size() / 3);
  EXPECT_EQ(TempFileSizeOnceItReaches(root(), bytes.size() / 3), bytes.size() / 3);
  staged.reset();
  EXPECT_TRUE(Files().empty());
  EXPECT_EQ(TempFiles(root()), 0u);
}

TEST_P(FileBlobStoreTest, PuttingAStagedBlobBeforeNamingItIsRefused) {
  const std::string bytes = RandomBytes(150 * 1024, 10);
  std::unique_ptr<StagedBlob> staged = store_->Stage(bytes, bytes.size());
  ASSERT_NE(staged, nullptr);
  const std::string sha = Sha256Hex(bytes);
  const std::vector<BlobToPut> blobs = {{sha, bytes, staged.get()}};
  EXPECT_EQ(store_->PutAll(blobs).code(), StatusCode::kInternal);
  staged.reset();
  EXPECT_TRUE(Files().empty());
  EXPECT_EQ(TempFiles(root()), 0u);
}

TEST_P(FileBlobStoreTest, StagingDeclinesPastTheWritersInFlightCap) {
  const std::string bytes = RandomBytes(1024, 11);
  // Unnamed, each writer waits for its name: all of them stay in flight.
  std::vector<std::unique_ptr<StagedBlob>> in_flight;
  for (int i = 0; i < FileBlobStore::kMaxStagedInFlight; ++i) {
    in_flight.push_back(store_->Stage(bytes, bytes.size()));
    ASSERT_NE(in_flight.back(), nullptr) << i;
  }
  EXPECT_EQ(store_->Stage(bytes, bytes.size()), nullptr);
  in_flight.pop_back();  // its writer ends
  EXPECT_NE(store_->Stage(bytes, bytes.size()), nullptr);
  in_flight.clear();
  EXPECT_EQ(TempFiles(root()), 0u);
}

TEST(FileBlobStoreStage, AStagedBlobIsSyncedBeforeItIsNamed) {
  TempDir dir;
  RecordingFileSystem recording;
  auto opened = FileBlobStore::Open(dir.Sub("blobs"), /*sync=*/true, &recording);
  ASSERT_TRUE(opened) << opened.error().ToString();
  const std::string bytes = RandomBytes(256 * 1024, 12);
  const std::string sha = Sha256Hex(bytes);
  recording.clear();
  std::unique_ptr<StagedBlob> staged = (*opened)->Stage(bytes, bytes.size());
  ASSERT_NE(staged, nullptr);
  Status s = NameAndPut(**opened, *staged, sha, bytes);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<std::string> want = {"create",
                                         "append",
                                         "sync",
                                         "rename",
                                         "sync directory " + sha.substr(0, 2),
                                         "sync directory sha256"};
  EXPECT_EQ(recording.calls(), want);
}

TEST(FileBlobStoreStage, EachAnnouncedPieceIsOneWriteHoweverFarBehindTheWriterIs) {
  // Announced faster than the writer can follow, the pieces are still
  // written one by one: the same writes in every run, which the fault
  // tests count.
  TempDir dir;
  RecordingFileSystem recording;
  auto opened = FileBlobStore::Open(dir.Sub("blobs"), /*sync=*/true, &recording);
  ASSERT_TRUE(opened) << opened.error().ToString();
  const std::string bytes = RandomBytes(400 * 1024, 17);
  const std::string sha = Sha256Hex(bytes);
  recording.clear();
  std::unique_ptr<StagedBlob> staged = (*opened)->Stage(bytes, 100 * 1024);
  ASSERT_NE(staged, nullptr);
  for (size_t n : {200 * 1024, 150 * 1024, 300 * 1024, 400 * 1024}) staged->Ready(n);
  Status s = NameAndPut(**opened, *staged, sha, bytes);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // 100, 200, 300 and 400 KiB: the 150 came after 200 and says nothing new.
  const std::vector<std::string> want = {"create",
                                         "append",
                                         "append",
                                         "append",
                                         "append",
                                         "sync",
                                         "rename",
                                         "sync directory " + sha.substr(0, 2),
                                         "sync directory sha256"};
  EXPECT_EQ(recording.calls(), want);
  staged.reset();
  EXPECT_EQ(*(*opened)->Get(sha, /*verify=*/true), bytes);
}

TEST(FileBlobStoreStage, StagingBytesAlreadyStoredRenamesNothingAndKeepsOneCopy) {
  TempDir dir;
  RecordingFileSystem recording;
  const std::string root = dir.Sub("blobs");
  auto opened = FileBlobStore::Open(root, /*sync=*/true, &recording);
  ASSERT_TRUE(opened) << opened.error().ToString();
  const std::string bytes = RandomBytes(256 * 1024, 13);
  const std::string sha = Sha256Hex(bytes);
  ASSERT_TRUE((*opened)->Put(sha, bytes).ok());
  recording.clear();
  std::unique_ptr<StagedBlob> staged = (*opened)->Stage(bytes, bytes.size());
  ASSERT_NE(staged, nullptr);
  staged->SetDigest(sha);
  const std::vector<BlobToPut> blobs = {{sha, bytes, staged.get()}};
  Status s = (*opened)->PutAll(blobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  staged.reset();
  // Written and synced before its name was known (the sync overlaps the
  // hash), then dropped: one copy, no name.
  EXPECT_EQ(recording.calls(), (std::vector<std::string>{"create", "append", "sync"}));
  EXPECT_EQ(TempFiles(root), 0u);
  EXPECT_EQ(*(*opened)->Get(sha, /*verify=*/true), bytes);
}

TEST(FileBlobStoreStage, AFailedSyncOfAStagedBlobFailsPutAllAndNamesNothing) {
  TempDir dir;
  RecordingFileSystem recording;
  const std::string root = dir.Sub("blobs");
  auto opened = FileBlobStore::Open(root, /*sync=*/true, &recording);
  ASSERT_TRUE(opened) << opened.error().ToString();
  recording.fail_syncs = true;
  const std::string bytes = RandomBytes(256 * 1024, 14);
  const std::string sha = Sha256Hex(bytes);
  std::unique_ptr<StagedBlob> staged = (*opened)->Stage(bytes, bytes.size());
  ASSERT_NE(staged, nullptr);
  staged->SetDigest(sha);
  const std::vector<BlobToPut> blobs = {{sha, bytes, staged.get()}};
  Status s = (*opened)->PutAll(blobs);
  EXPECT_EQ(s.code(), StatusCode::kIo) << s.ToString();
  staged.reset();
  EXPECT_EQ((*opened)->Stat(sha).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(TempFiles(root), 0u);
  for (const std::string& call : recording.calls()) EXPECT_NE(call, "rename");
}

TEST(FileBlobStorePutAll, AFailedSyncAmongSeveralNamesNoneAndLeavesNoTempFile) {
  TempDir dir;
  RecordingFileSystem recording;
  const std::string root = dir.Sub("blobs");
  auto opened = FileBlobStore::Open(root, /*sync=*/true, &recording);
  ASSERT_TRUE(opened) << opened.error().ToString();
  recording.fail_syncs = true;
  std::vector<std::string> bytes, digests;
  for (uint32_t i = 0; i < 4; ++i) {
    bytes.push_back(RandomBytes(4096, 20 + i));
    digests.push_back(Sha256Hex(bytes.back()));
  }
  std::vector<BlobToPut> blobs;
  for (size_t i = 0; i < bytes.size(); ++i) blobs.push_back({digests[i], bytes[i]});
  Status s = (*opened)->PutAll(blobs);
  EXPECT_EQ(s.code(), StatusCode::kIo) << s.ToString();
  for (const std::string& d : digests) EXPECT_FALSE((*opened)->Stat(d)) << d;
  EXPECT_EQ(TempFiles(root), 0u);
}

}  // namespace
}  // namespace sessiondb::blob
