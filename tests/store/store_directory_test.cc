// The folder of an embedded store holds private conversations: a new store's
// folder and every file in it are its owner's alone, whatever the umask and
// whoever made the folder; an existing store keeps the modes its owner gave
// it, and what it gains is private.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Every path under `dir` (and `dir` itself) whose mode lets group or others
// in, with its mode; and how many paths there were.
std::vector<std::string> OpenToOthers(const std::string& dir, int* count) {
  std::vector<std::string> open;
  *count = 0;
  auto check = [&](const std::string& path) {
    ++*count;
    const mode_t mode = ModeOf(path);
    if ((mode & 077) != 0) open.push_back(path + " " + std::to_string(mode));
  };
  check(dir);
  for (const auto& e : fs::recursive_directory_iterator(dir)) check(e.path().string());
  return open;
}

// In a child process with umask 0 (every bit a creator asks for is kept):
// creates the store at `dir`, appends a message with an image, searches it
// and saves the vector index, so each kind of file a store writes exists.
// The child's exit status says what failed (0: nothing).
int FillStoreUnderUmaskZero(const std::string& dir) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(60);
    ::umask(0);
    auto store = Store::Open(dir);
    if (!store) _exit(2);
    if (!(*store)->CreateSession({.id = "s1"})) _exit(2);
    Message m;
    m.parts = {Part::Text("a private wombat"), Part::ImageFromBytes(MakePng(4, 3), "image/png")};
    if (!(*store)->Append("s1", m)) _exit(3);
    SearchOptions options;
    options.embedder.from_environment = false;
    auto index = SearchIndex::Open(**store, options);
    if (!index) _exit(4);
    auto hits = (*index)->Search({.query = "wombat", .mode = SearchMode::kKeyword});
    if (!hits || hits->hits.size() != 1) _exit(5);
    if (!(*index)->Embed()) _exit(6);
    if (!(*index)->BuildVectorIndex().ok()) _exit(7);
    index->reset();
    store->reset();
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
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

// Found from outside (issue 33): a store made in an existing folder left it
// 0755, with a 0644 database and 0444 blobs, and another local user read a
// conversation.
TEST(StoreDirectory, EveryFileOfAStoreIsItsOwnersAloneEvenUnderUmaskZero) {
  TempDir tmp;
  for (const bool folder_exists : {false, true}) {
    const std::string dir = tmp.Sub(folder_exists ? "made-by-the-user" : "made-by-the-store");
    if (folder_exists) {
      ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
      ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
    }
    ASSERT_EQ(FillStoreUnderUmaskZero(dir), 0) << dir;
    int paths = 0;
    EXPECT_EQ(OpenToOthers(dir, &paths), std::vector<std::string>()) << dir;
    // The kinds of files checked: database, writer lock, a blob, the vector index.
    EXPECT_TRUE(fs::exists(dir + "/sessiondb.db-writer"));
    EXPECT_TRUE(fs::exists(dir + "/index"));
    EXPECT_GE(paths, 10) << dir;
    EXPECT_EQ(ModeOf(dir), 0700u);
    EXPECT_EQ(ModeOf(dir + "/sessiondb.db"), 0600u);
    // And the store still reads: nothing of it was made unreadable to its owner.
    auto store = Store::Open(dir);
    ASSERT_TRUE(store) << store.error().ToString();
    auto events = (*store)->ReadEvents("s1", 1, 10);
    ASSERT_TRUE(events) << events.error().ToString();
    ASSERT_EQ(events->size(), 1u);
  }
}

// A store that exists keeps the modes its owner gave it (opened to others on
// purpose, to be read: tests/cli/read_only_store_test.cc); what is created in
// it from now on is private all the same.
TEST(StoreDirectory, AnExistingStoreKeepsItsModesAndWhatItGainsIsPrivate) {
  TempDir tmp;
  const std::string dir = tmp.Sub("shared-to-read");
  {
    auto store = Store::Open(dir);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s1"}));
  }
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((dir + "/sessiondb.db").c_str(), 0644), 0);
  auto store = Store::Open(dir);
  ASSERT_TRUE(store) << store.error().ToString();
  const std::string png = MakePng(5, 5, "gained");
  Message m;
  m.parts = {Part::Text("an image gained later"), Part::ImageFromBytes(png, "image/png")};
  auto appended = (*store)->Append("s1", m);
  ASSERT_TRUE(appended) << appended.error().ToString();
  EXPECT_EQ(ModeOf(dir), 0755u);
  EXPECT_EQ(ModeOf(dir + "/sessiondb.db"), 0644u);
  int blobs = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/blobs")) {
    if (!e.is_regular_file()) continue;
    ++blobs;
    EXPECT_EQ(ModeOf(e.path().string()), 0400u) << e.path();
    EXPECT_EQ(ModeOf(e.path().parent_path().string()), 0700u) << e.path();
  }
  EXPECT_EQ(blobs, 1);
}

}  // namespace
}  // namespace sessiondb::testing
