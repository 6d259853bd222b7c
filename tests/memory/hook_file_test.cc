// The hook reads only regular files of bounded size: before, a file_path of
// /dev/zero read forever (1.8 GB in 3 s) and a FIFO blocked the agent
// forever.
#include "memory/hook_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace sessiondb::memory {
namespace {

using sessiondb::testing::TempDir;

TEST(HookFile, ReadsARegularFile) {
  TempDir dir;
  std::ofstream(dir.Sub("a.py")) << "def f():\n    return 1\n";
  HookFile f = ReadFileForHook(dir.Sub("a.py"));
  EXPECT_EQ(f.kind, HookFile::Kind::kRead);
  EXPECT_EQ(f.text, "def f():\n    return 1\n");
}

TEST(HookFile, AMissingFileIsANewFileNotARefusal) {
  TempDir dir;
  EXPECT_EQ(ReadFileForHook(dir.Sub("new.py")).kind, HookFile::Kind::kMissing);
}

TEST(HookFile, DevZeroIsRefusedWithoutReadingIt) {
  HookFile f = ReadFileForHook("/dev/zero");
  EXPECT_EQ(f.kind, HookFile::Kind::kRefused);
  EXPECT_NE(f.why.find("character device"), std::string::npos) << f.why;
  EXPECT_TRUE(f.text.empty());
}

TEST(HookFile, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.Sub("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // No writer: a blocking open would wait forever (the test would hang).
  HookFile f = ReadFileForHook(fifo);
  EXPECT_EQ(f.kind, HookFile::Kind::kRefused);
  EXPECT_NE(f.why.find("FIFO"), std::string::npos) << f.why;
}

TEST(HookFile, ADirectoryIsRefused) {
  TempDir dir;
  HookFile f = ReadFileForHook(dir.path().string());
  EXPECT_EQ(f.kind, HookFile::Kind::kRefused);
  EXPECT_NE(f.why.find("directory"), std::string::npos) << f.why;
}

TEST(HookFile, AHugeSparseFileIsRefusedBySizeWithoutReadingIt) {
  TempDir dir;
  const std::string big = dir.Sub("big.bin");
  { std::ofstream(big) << "x"; }
  std::filesystem::resize_file(big, uintmax_t{64} << 30);  // 64 GiB of holes
  HookFile f = ReadFileForHook(big);
  EXPECT_EQ(f.kind, HookFile::Kind::kRefused);
  EXPECT_NE(f.why.find(std::to_string(kMaxHookFileBytes)), std::string::npos) << f.why;
  EXPECT_TRUE(f.text.empty());
}

TEST(HookFile, ASymbolicLinkIsNotFollowed) {
  TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.Sub("link.py"));
  HookFile f = ReadFileForHook(dir.Sub("link.py"));
  EXPECT_EQ(f.kind, HookFile::Kind::kRefused);
  EXPECT_NE(f.why.find("symbolic link"), std::string::npos) << f.why;
}

}  // namespace
}  // namespace sessiondb::memory
