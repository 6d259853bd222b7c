// Fault injection through the file-system seam (StoreOptions::file_system):
// a workload of appends with three images each, a prune and a garbage
// collection runs with a FileSystem that, at its n-th write boundary (every
// create, append, sync, close, rename, remove, mkdir and directory sync),
// either fails the call (ENOSPC, EIO, a failing fsync) or crashes the process
// after dropping what was never synced, as a power loss would. For every n:
// the error reaches the caller, the store opens again and verifies clean, and
// everything acknowledged before is there, images intact.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "blob/data_uri.h"
#include "blob/sha256.h"
#include "durability/faulty_file_system.h"
#include "sessiondb/file_system.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

Message WithImages(const std::string& text, const std::vector<std::string>& salts) {
  Message m;
  m.parts.push_back(Part::Text(text));
  for (const std::string& salt : salts) {
    m.parts.push_back(Part::ImageFromBytes(MakePng(8, 8, salt), "image/png"));
  }
  return m;
}

// The workload; calls `ack` with a name after each step the store
// acknowledged, and stops at the first error (returned).
Status RunWorkload(Store& store, const std::function<void(const std::string&)>& ack) {
  RETURN_IF_ERROR(store.CreateSession({.id = "keep"}));
  RETURN_IF_ERROR(store.Append("keep", WithImages("first", {"a", "b", "c"})));
  ack("keep1");
  RETURN_IF_ERROR(store.Append("keep", WithImages("second", {"c", "d", "e"})));
  ack("keep2");
  RETURN_IF_ERROR(store.CreateSession({.id = "old"}));
  RETURN_IF_ERROR(store.Append("old", WithImages("to prune", {"f", "g", "h"})));
  ack("old1");
  ASSIGN_OR_RETURN(Event compaction,
                   store.Compact("old", {.from_seq = 1, .to_seq = 1, .summary = "pictures"}));
  RETURN_IF_ERROR(store.PruneCompaction("old", compaction.seq));
  ack("pruned");
  RETURN_IF_ERROR(store.CreateSession({.id = "gone"}));
  RETURN_IF_ERROR(store.Append("gone", WithImages("to delete", {"i", "j", "k"})));
  ack("gone1");
  RETURN_IF_ERROR(store.DeleteSession("gone"));
  RETURN_IF_ERROR(store.CollectGarbage({.grace_ms = 0}));
  ack("collected");
  return Status::Ok();
}

// Reopens the store with the real file system and checks it: it verifies
// clean, and every acknowledged step is there (images readable and intact).
void CheckStore(const std::string& dir, const std::set<std::string>& acked,
                const std::string& where) {
  SCOPED_TRACE(where);
  auto opened = Store::Open(dir);
  ASSERT_TRUE(opened) << opened.error().ToString();
  Store& store = **opened;
  auto verified = store.Verify();
  ASSERT_TRUE(verified) << verified.error().ToString();
  EXPECT_TRUE(verified->missing.empty()) << verified->missing.front();
  EXPECT_TRUE(verified->corrupt.empty());
  EXPECT_TRUE(verified->database_problems.empty());
  // The first `count` messages of `session` are there with their three
  // images intact; with `may_be_pruned`, a message may instead be a pruned
  // stub (a prune that committed but crashed before it said so).
  auto expect_messages = [&](const std::string& session, size_t count, bool may_be_pruned) {
    auto messages = store.ReadMessages(session);
    ASSERT_TRUE(messages) << session << ": " << messages.error().ToString();
    ASSERT_GE(messages->size(), count) << session;
    for (size_t i = 0; i < count; ++i) {
      size_t images = 0;
      for (const Part& p : (*messages)[i].parts) {
        if (!p.resource || p.resource->content_sha256.empty()) continue;
        ++images;
        auto bytes = store.ReadBlob(p.resource->content_sha256, /*verify=*/true);
        EXPECT_TRUE(bytes) << session << " #" << i << ": " << bytes.error().ToString();
      }
      if (may_be_pruned && (*messages)[i].pruned) continue;
      EXPECT_EQ(images, 3u) << session << " #" << i;
    }
  };
  if (acked.count("keep2")) {
    expect_messages("keep", 2, false);
  } else if (acked.count("keep1")) {
    expect_messages("keep", 1, false);
  }
  if (acked.count("old1") && !acked.count("pruned")) expect_messages("old", 1, true);
  if (acked.count("pruned")) {
    auto events = store.ReadEvents("old");
    ASSERT_TRUE(events) << events.error().ToString();
    ASSERT_GE(events->size(), 2u);
  }
  if (acked.count("collected")) {
    EXPECT_FALSE(store.GetSession("gone"));
  }
}

// Boundaries the whole workload crosses (open included).
int64_t CountBoundaries() {
  TempDir dir;
  FaultyFileSystem counter(0, Fault::kCrash);
  StoreOptions options;
  options.file_system = &counter;
  auto store = Store::Open(dir.Sub("store"), options);
  EXPECT_TRUE(store) << store.error().ToString();
  if (!store) return 0;
  Status s = RunWorkload(**store, [](const std::string&) {});
  EXPECT_TRUE(s.ok()) << s.ToString();
  return counter.boundaries();
}

class FaultSweep : public ::testing::TestWithParam<Fault> {};

TEST_P(FaultSweep, EveryWriteBoundaryFailsCleanly) {
  const int64_t total = CountBoundaries();
  ASSERT_GT(total, 50) << "three images per append should cross many boundaries";
  for (int64_t at = 1; at <= total; ++at) {
    TempDir dir;
    const std::string store_dir = dir.Sub("store");
    std::set<std::string> acked;
    FaultyFileSystem faulty(at, GetParam());
    StoreOptions options;
    options.file_system = &faulty;
    {
      auto store = Store::Open(store_dir, options);
      if (!store) {
        // The fault hit the open: it says so, and nothing was written.
        EXPECT_TRUE(faulty.injected());
        EXPECT_NE(store.error().message().find("(injected)"), std::string::npos)
            << store.error().ToString();
        continue;
      }
      Status s = RunWorkload(**store, [&](const std::string& step) { acked.insert(step); });
      ASSERT_TRUE(faulty.injected()) << "boundary " << at;
      if (s.ok()) {
        // Only a best-effort write may swallow its error: the sync of the
        // folder that holds a new store (it is the caller's folder).
        EXPECT_EQ(faulty.injected_at(), "sync directory " + store_dir)
            << "boundary " << at << ": the error did not reach the caller";
      } else {
        EXPECT_NE(s.message().find("(injected)"), std::string::npos) << s.ToString();
      }
      // The store still serves once the disk has room again.
      if ((*store)->GetSession("keep")) {
        auto more = (*store)->Append("keep", WithImages("after the fault", {"x", "y", "z"}));
        EXPECT_TRUE(more) << more.error().ToString();
      }
    }
    CheckStore(store_dir, acked, "fault at boundary " + std::to_string(at));
    if (HasFatalFailure()) return;
  }
}

TEST(FaultCrash, ACrashAtEveryWriteBoundaryLosesNothingAcknowledged) {
  const int64_t total = CountBoundaries();
  ASSERT_GT(total, 50);
  for (int64_t at = 1; at <= total; ++at) {
    TempDir dir;
    const std::string store_dir = dir.Sub("store");
    int acks[2];
    ASSERT_EQ(pipe(acks), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(acks[0]);
      FaultyFileSystem faulty(at, Fault::kCrash);
      StoreOptions options;
      options.file_system = &faulty;
      auto store = Store::Open(store_dir, options);
      if (!store) _exit(2);
      Status s = RunWorkload(**store, [&](const std::string& step) {
        const std::string line = step + "\n";
        if (write(acks[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
          _exit(4);
        }
      });
      _exit(s.ok() ? 5 : 3);  // the crash should have come first
    }
    close(acks[1]);
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = read(acks[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(acks[0]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "boundary " << at << ": no crash happened";
    std::set<std::string> acked;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) acked.insert(line);
    if (!std::filesystem::exists(std::filesystem::path(store_dir) / "sessiondb.db")) continue;
    CheckStore(store_dir, acked, "crash at boundary " + std::to_string(at));
    if (HasFatalFailure()) return;
  }
}

// The images of one message are written together (FileBlobStore::PutAll:
// every temp file, then every sync, then the renames, then the directory
// syncs). A fault at any boundary of that append, the syncs in the middle
// included, fails the append: no message, no temp file left, and no image of
// it stored unless every one of them was synced first; the same append then
// succeeds. Small images are written by PutAll; large ones (data URIs of
// 200 KiB and more) are staged, written and synced on threads of their own
// while the message is prepared, and only renamed by PutAll; a message of
// one large image (the common case: a screenshot) takes the same path alone.
enum class Images { kThreeSmall, kThreeStaged, kOneStaged };

class FaultInImageAppend : public ::testing::TestWithParam<Images> {};

TEST_P(FaultInImageAppend, EveryBoundaryOfTheAppendFailsItWholly) {
  const bool large = GetParam() != Images::kThreeSmall;
  const size_t count = GetParam() == Images::kOneStaged ? 1 : 3;
  Message message;
  std::vector<std::string> digests;
  if (large) {
    message.parts.push_back(Part::Text("large images at once"));
    for (size_t k = 0; k < count; ++k) {
      const std::string salt(1, static_cast<char>('P' + k));  // P, Q, R
      const std::string png = MakePng(8, 8, salt, 200 * 1024);
      message.parts.push_back(Part::ImageFromDataUri(blob::MakeDataUri("image/png", png)));
      digests.push_back(blob::Sha256Hex(png));
    }
  } else {
    message = WithImages("three at once", {"p", "q", "r"});
    for (const Part& p : message.parts) {
      if (p.source) digests.push_back(blob::Sha256Hex(p.source->data));
    }
  }
  ASSERT_EQ(digests.size(), count);
  // How many boundaries the append crosses.
  int64_t boundaries = 0;
  {
    TempDir dir;
    FaultyFileSystem counter(0, Fault::kIoError);
    StoreOptions options;
    options.file_system = &counter;
    auto store = Store::Open(dir.Sub("store"), options);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s"}));
    const int64_t before = counter.boundaries();
    ASSERT_TRUE((*store)->Append("s", message));
    boundaries = counter.boundaries() - before;
  }
  // Per image: mkdir, create, append, sync, close, rename; then directory syncs.
  ASSERT_GE(boundaries, static_cast<int64_t>(count) * 6 + 1);
  int syncs_in_the_middle = 0;
  for (int64_t at = 1; at <= boundaries; ++at) {
    SCOPED_TRACE("fault at boundary " + std::to_string(at) + " of the append");
    TempDir dir;
    const std::string store_dir = dir.Sub("store");
    FaultyFileSystem faulty(0, Fault::kIoError);
    StoreOptions options;
    options.file_system = &faulty;
    auto store = Store::Open(store_dir, options);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s"}));
    faulty.FailAfter(at);
    auto appended = (*store)->Append("s", message);
    ASSERT_FALSE(appended) << "the fault at " << faulty.injected_at() << " was swallowed";
    EXPECT_NE(appended.error().message().find("(injected)"), std::string::npos)
        << appended.error().ToString();
    const std::string where = faulty.injected_at();
    auto messages = (*store)->ReadMessages("s");
    ASSERT_TRUE(messages);
    EXPECT_TRUE(messages->empty()) << where;
    EXPECT_TRUE(std::filesystem::is_empty(std::filesystem::path(store_dir) / "blobs" / "tmp"))
        << "a temp file was left after a fault at " << where;
    // Nothing is renamed into place before every image is synced.
    if (where.rfind("rename ", 0) != 0 && where.rfind("sync directory ", 0) != 0) {
      for (const std::string& d : digests) {
        EXPECT_FALSE((*store)->ReadBlob(d, /*verify=*/false)) << d << " stored after " << where;
      }
    }
    if (where.rfind("sync ", 0) == 0 && where.rfind("sync directory ", 0) != 0 &&
        where.find("/blobs/tmp/") != std::string::npos) {
      ++syncs_in_the_middle;
    }
    auto again = (*store)->Append("s", message);
    ASSERT_TRUE(again) << where << ": " << again.error().ToString();
    for (const std::string& d : digests) {
      auto bytes = (*store)->ReadBlob(d, /*verify=*/true);
      EXPECT_TRUE(bytes) << d << " after " << where;
    }
  }
  if (large && count > 1) {
    // The staged writers run side by side, so boundary n is not the same
    // call from one run to the next: some sync is hit, not each in turn.
    EXPECT_GE(syncs_in_the_middle, 1) << "a staged image's sync is a boundary of the sweep";
  } else {
    EXPECT_EQ(syncs_in_the_middle, static_cast<int>(count))
        << "each image's sync is a boundary of the sweep";
  }
}

// A power loss at every boundary of two appends of large (staged) images,
// three each or one each: what the child acknowledged is there with its
// images intact, and no file under a final blob name lost bytes that were
// never synced (the crash empties every file not synced since its last
// write).
class FaultCrashStaged : public ::testing::TestWithParam<int> {};

TEST_P(FaultCrashStaged, ACrashAtEveryBoundaryOfStagedImagesLosesNoAcknowledgedImage) {
  const int per_message = GetParam();
  std::vector<Message> messages;
  std::vector<std::vector<std::string>> digests;
  for (const std::string text : {"first", "second"}) {
    Message m;
    m.parts.push_back(Part::Text(text));
    digests.emplace_back();
    for (int k = 0; k < per_message; ++k) {
      const std::string png = MakePng(8, 8, text + std::to_string(k), 160 * 1024);
      m.parts.push_back(Part::ImageFromDataUri(blob::MakeDataUri("image/png", png)));
      digests.back().push_back(blob::Sha256Hex(png));
    }
    messages.push_back(std::move(m));
  }
  auto run = [&](Store& store, int ack_fd) -> Status {
    for (size_t i = 0; i < messages.size(); ++i) {
      auto appended = store.Append("s", messages[i]);
      if (!appended) return appended.error();
      const char line = static_cast<char>('0' + i);
      if (ack_fd >= 0 && write(ack_fd, &line, 1) != 1) _exit(4);
    }
    return Status::Ok();
  };
  int64_t boundaries = 0;
  {
    TempDir dir;
    FaultyFileSystem counter(0, Fault::kCrash);
    StoreOptions options;
    options.file_system = &counter;
    auto store = Store::Open(dir.Sub("store"), options);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s"}));
    const int64_t before = counter.boundaries();
    ASSERT_TRUE(run(**store, -1).ok());
    boundaries = counter.boundaries() - before;
  }
  ASSERT_GE(boundaries, 2 * per_message * 5);
  for (int64_t at = 1; at <= boundaries; ++at) {
    SCOPED_TRACE("crash at boundary " + std::to_string(at));
    TempDir dir;
    const std::string store_dir = dir.Sub("store");
    {
      auto store = Store::Open(store_dir);
      ASSERT_TRUE(store) << store.error().ToString();
      ASSERT_TRUE((*store)->CreateSession({.id = "s"}));
    }
    int acks[2];
    ASSERT_EQ(pipe(acks), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(acks[0]);
      FaultyFileSystem faulty(0, Fault::kCrash);
      StoreOptions options;
      options.file_system = &faulty;
      auto store = Store::Open(store_dir, options);
      if (!store) _exit(2);
      faulty.FailAfter(at);
      Status s = run(**store, acks[1]);
      _exit(s.ok() ? 5 : 3);  // the crash should have come first
    }
    close(acks[1]);
    std::string acked;
    char buf[16];
    ssize_t n;
    while ((n = read(acks[0], buf, sizeof buf)) > 0) acked.append(buf, static_cast<size_t>(n));
    close(acks[0]);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "no crash happened";

    for (auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(store_dir) /
                                                                 "blobs" / "sha256")) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      EXPECT_EQ(blob::Sha256Hex(bytes.str()), e.path().filename().string())
          << "a final blob name holds bytes that were never synced";
    }
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store) << store.error().ToString();
    auto stored = (*store)->ReadMessages("s");
    ASSERT_TRUE(stored) << stored.error().ToString();
    ASSERT_GE(stored->size(), acked.size());
    for (size_t i = 0; i < stored->size(); ++i) {
      for (const std::string& d : digests[i]) {
        auto bytes = (*store)->ReadBlob(d, /*verify=*/true);
        EXPECT_TRUE(bytes) << "message " << i + 1 << " (of " << acked.size()
                           << " acknowledged): " << bytes.error().ToString();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ImagesPerMessage, FaultCrashStaged, ::testing::Values(3, 1),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 1 ? "OneEach" : "ThreeEach";
                         });

INSTANTIATE_TEST_SUITE_P(SmallAndStaged, FaultInImageAppend,
                         ::testing::Values(Images::kThreeSmall, Images::kThreeStaged,
                                           Images::kOneStaged),
                         [](const ::testing::TestParamInfo<Images>& info) {
                           switch (info.param) {
                             case Images::kThreeSmall:
                               return "ThreeSmallImages";
                             case Images::kThreeStaged:
                               return "ThreeStagedLargeImages";
                             case Images::kOneStaged:
                               return "OneStagedLargeImage";
                           }
                           return "";
                         });

INSTANTIATE_TEST_SUITE_P(Faults, FaultSweep, ::testing::Values(Fault::kNoSpace, Fault::kIoError),
                         [](const ::testing::TestParamInfo<Fault>& info) {
                           return std::string(info.param == Fault::kNoSpace ? "NoSpace"
                                                                            : "IoError");
                         });

}  // namespace
}  // namespace sessiondb::testing
