// The embedded store's writer lock (src/store/sqlite/writer_lock.h): writers
// wait for it, blocking, before SQLite's own lock, and get the busy timeout's
// kBusy when it is not released in time; readers never take it. Whatever is
// found at its name (a folder, a symbolic link, a FIFO), or a store opened
// read-only, leaves the store working without it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

Message TextMessage(const std::string& text) {
  Message m;
  m.parts.push_back(Part::Text(text));
  return m;
}

class WriterLock : public ::testing::Test {
 protected:
  std::string StoreDir() const { return dir_.Sub("store"); }
  std::string LockPath() const { return StoreDir() + "/sessiondb.db-writer"; }

  std::unique_ptr<Store> OpenStore(const StoreOptions& options = {}) {
    auto store = Store::Open(StoreDir(), options);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  // Holds the writer lock from a descriptor of the test's own, as another
  // process's writer would.
  void HoldLock() {
    held_fd_ = ::open(LockPath().c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(held_fd_, 0) << LockPath();
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    ASSERT_EQ(::fcntl(held_fd_, F_OFD_SETLK, &fl), 0);
  }
  void ReleaseLock() {
    ::close(held_fd_);
    held_fd_ = -1;
  }
  void TearDown() override {
    if (held_fd_ >= 0) ReleaseLock();
  }

  // A store with a session holding one message; the writer lock's file is
  // then replaced by `plant`, and the store must still write and read.
  void ExpectWritesWorkWith(const std::function<void()>& plant) {
    std::string session;
    {
      auto store = OpenStore();
      ASSERT_TRUE(store);
      session = store->CreateSession({})->id;
      ASSERT_TRUE(store->Append(session, TextMessage("before")));
    }
    fs::remove(LockPath());
    plant();
    auto store = OpenStore();
    ASSERT_TRUE(store);
    auto r = store->Append(session, TextMessage("after"));
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->seq, 2);
    auto messages = store->ReadMessages(session);
    ASSERT_TRUE(messages);
    EXPECT_EQ(messages->size(), 2u);
  }

  TempDir dir_;
  int held_fd_ = -1;
};

TEST_F(WriterLock, IsAPrivateFileBesideTheDatabase) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  struct stat st {};
  ASSERT_EQ(::stat(LockPath().c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(WriterLock, AnAppendWaitsForItAndIsBusyAfterTheTimeoutWhileReadersGoOn) {
  StoreOptions options;
  options.busy_timeout_ms = 300;
  auto store = OpenStore(options);
  ASSERT_TRUE(store);
  const std::string session = store->CreateSession({})->id;
  HoldLock();
  // SQLite's own lock is free: only the writer lock keeps this append out.
  auto r = store->Append(session, TextMessage("kept out"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kBusy) << r.error().ToString();
  EXPECT_NE(r.error().message().find("writer lock"), std::string::npos) << r.error().message();
  auto messages = store->ReadMessages(session);
  ASSERT_TRUE(messages) << "a reader waited for the writer lock";
  EXPECT_TRUE(messages->empty());
  ReleaseLock();
  auto again = store->Append(session, TextMessage("let in"));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->seq, 1);
}

TEST_F(WriterLock, AWaitingAppendCommitsOnceItIsReleased) {
  auto store = OpenStore();
  ASSERT_TRUE(store);
  const std::string session = store->CreateSession({})->id;
  HoldLock();
  Result<AppendResult> appended = Err(Status::Internal("not appended"));
  std::thread writer([&] { appended = store->Append(session, TextMessage("waited")); });
  // While the lock is held the append has not slipped past it: another
  // store (a reader) sees nothing yet.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  {
    auto reader = OpenStore();
    ASSERT_TRUE(reader);
    auto messages = reader->ReadMessages(session);
    ASSERT_TRUE(messages);
    EXPECT_TRUE(messages->empty()) << "an append committed while the writer lock was held";
  }
  ReleaseLock();
  writer.join();
  ASSERT_TRUE(appended) << appended.error().ToString();
  EXPECT_EQ(appended->seq, 1);
}

TEST_F(WriterLock, AFolderAtItsNameLeavesTheStoreWritingWithoutIt) {
  ExpectWritesWorkWith([&] { fs::create_directory(LockPath()); });
  EXPECT_TRUE(fs::is_directory(LockPath()));
}

TEST_F(WriterLock, ASymbolicLinkAtItsNameIsNotFollowed) {
  const std::string target = dir_.Sub("elsewhere");
  ExpectWritesWorkWith([&] { fs::create_symlink(target, LockPath()); });
  EXPECT_FALSE(fs::exists(target))
      << "the writer lock followed a symbolic link and created " << target;
  EXPECT_TRUE(fs::is_symlink(LockPath()));
}

TEST_F(WriterLock, AFifoAtItsNameDoesNotHangWriters) {
  ExpectWritesWorkWith([&] { ASSERT_EQ(::mkfifo(LockPath().c_str(), 0600), 0); });
}

TEST_F(WriterLock, ARemovedLockFileIsMadeAgainByTheNextWriter) {
  ExpectWritesWorkWith([] {});
  EXPECT_TRUE(fs::is_regular_file(LockPath()));
}

TEST_F(WriterLock, AStoreOpenedReadOnlyReadsAndMakesNoLockFile) {
  std::string session;
  {
    auto store = OpenStore();
    ASSERT_TRUE(store);
    session = store->CreateSession({})->id;
    ASSERT_TRUE(store->Append(session, TextMessage("kept")));
  }
  fs::remove(LockPath());
  StoreOptions read_only;
  read_only.read_only = true;
  auto store = OpenStore(read_only);
  ASSERT_TRUE(store);
  auto messages = store->ReadMessages(session);
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ((*messages)[0].Text(), "kept");
  auto refused = store->Append(session, TextMessage("no"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(LockPath())) << "a read-only store wrote its writer lock file";
}

}  // namespace
}  // namespace sessiondb::testing
