// The state of `import --watch` (interop/watch_import.h): what it saves reads
// back, it is named by the store and the folder, and a state that is not
// the folder's, or not whole, is refused rather than believed.
#include <filesystem>
#include <fstream>

#include "interop/watch_import.h"
#include "test_support.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;

TEST(WatchState, SavedMarksReadBackAndNoFileIsNoMarks) {
  testing::TempDir dir;
  const std::string path = dir.Sub("state");
  auto none = LoadWatchMarks(path, "/w");
  ASSERT_TRUE(none) << none.error().ToString();
  EXPECT_TRUE(none->empty());
  const WatchMarks marks = {
      {"-home-dev-app/5a1e.jsonl", {.inode = 1844674407370955161u, .size = 7, .mtime_ns = 9}},
      {"2026/01/02/rollout-x.jsonl", {.inode = 2, .size = 0, .mtime_ns = -1}}};
  ASSERT_TRUE(SaveWatchMarks(path, "/w", marks).ok());
  auto read = LoadWatchMarks(path, "/w");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(*read, marks);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(WatchState, AnotherFoldersOrABrokenStateIsRefused) {
  testing::TempDir dir;
  const std::string path = dir.Sub("state");
  ASSERT_TRUE(SaveWatchMarks(path, "/w", {{"a.jsonl", {1, 2, 3}}}).ok());
  auto other = LoadWatchMarks(path, "/elsewhere");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code(), StatusCode::kCorruption);
  std::ofstream(path, std::ios::trunc) << R"({"version":1,"dir":"/w","files":{"a.jsonl":[1,2)";
  auto cut = LoadWatchMarks(path, "/w");
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code(), StatusCode::kCorruption);
}

TEST(WatchState, AStatePastItsCapIsRefusedBeforeItIsRead) {
  testing::TempDir dir;
  const std::string path = dir.Sub("state");
  ASSERT_TRUE(SaveWatchMarks(path, "/w", {{"a.jsonl", {1, 2, 3}}}).ok());
  // Sparse: 64 MiB and one byte on disk costs nothing, and is never read.
  fs::resize_file(path, (uintmax_t{64} << 20) + 1);
  auto big = LoadWatchMarks(path, "/w");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code(), StatusCode::kCorruption);
  EXPECT_NE(big.error().message().find("64 MiB"), std::string::npos);
  // The state is left for the person to remove, as the message says.
  EXPECT_EQ(fs::file_size(path), (uintmax_t{64} << 20) + 1);
}

TEST(WatchState, TheNameDependsOnTheStoreAndTheFolder) {
  const std::string a = WatchStatePath("/s", "/s", "/w");
  EXPECT_EQ(fs::path(a).parent_path(), "/s");
  EXPECT_TRUE(fs::path(a).filename().string().starts_with("sessiondb.db-watch-"));
  EXPECT_EQ(fs::path(a).filename().string().size(), std::string("sessiondb.db-watch-").size() + 16);
  EXPECT_EQ(a, WatchStatePath("/s", "/s", "/w"));
  EXPECT_NE(a, WatchStatePath("/s", "/s", "/w2"));
  EXPECT_NE(a, WatchStatePath("/s", "/t", "/w"));
}

}  // namespace
}  // namespace sessiondb::interop
