// The folder of an embedded store holds private conversations: one the store
// creates is its owner's alone, whatever the umask; one the user made keeps
// the mode they gave it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(StoreDirectory, ANewStoreIsReadableByItsOwnerOnlyWhateverTheUmask) {
  TempDir tmp;
  const std::string dir = tmp.Sub("chats");
  const mode_t old_umask = ::umask(022);  // the usual one, which leaves folders world-readable
  auto store = Store::Open(dir);
  ::umask(old_umask);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  EXPECT_EQ(ModeOf(dir), 0700u);
}

TEST(StoreDirectory, AFolderTheUserMadeKeepsItsMode) {
  TempDir tmp;
  const std::string dir = tmp.Sub("shared");
  ASSERT_EQ(::mkdir(dir.c_str(), 0750), 0);
  ::chmod(dir.c_str(), 0750);
  auto store = Store::Open(dir);
  ASSERT_TRUE(store.has_value()) << store.error().ToString();
  EXPECT_EQ(ModeOf(dir), 0750u);
}

}  // namespace
}  // namespace sessiondb::testing
