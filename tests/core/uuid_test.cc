#include "core/uuid.h"

#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace sessiondb {
namespace {

TEST(UuidV7, HasTheCanonicalShapeVersionAndVariant) {
  std::string id = NewUuidV7(1'700'000'000'000);
  ASSERT_EQ(id.size(), 36u);
  EXPECT_EQ(id[8], '-');
  EXPECT_EQ(id[13], '-');
  EXPECT_EQ(id[14], '7');
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos);
  // The first 48 bits are the timestamp: 1700000000000 = 0x018bcfe56800.
  EXPECT_EQ(id.substr(0, 13), "018bcfe5-6800");
}

TEST(UuidV7, IdsAreUniqueAndSortByTime) {
  std::set<std::string> ids;
  for (int i = 0; i < 10000; ++i) ids.insert(NewUuidV7(1'700'000'000'000));
  EXPECT_EQ(ids.size(), 10000u);
  EXPECT_LT(NewUuidV7(1'700'000'000'000), NewUuidV7(1'700'000'000'001));
}

// Within a millisecond one thread's ids ascend (RFC 9562, method 2), so a
// batch's ids reach the log's id index at its right edge; the version and
// variant bits stay.
TEST(UuidV7, IdsOneThreadMakesWithinAMillisecondAscend) {
  std::string previous = NewUuidV7(1'700'000'000'000);
  for (int i = 0; i < 10000; ++i) {
    const std::string id = NewUuidV7(1'700'000'000'000);
    ASSERT_LT(previous, id) << "id " << i;
    ASSERT_EQ(id[14], '7');
    ASSERT_NE(std::string("89ab").find(id[19]), std::string::npos);
    previous = id;
  }
  EXPECT_LT(previous, NewUuidV7(1'700'000'000'001));
}

}  // namespace
}  // namespace sessiondb

namespace sessiondb {
namespace {

// A child forked after the parent made ids must not repeat the parent's next
// ids (it inherits the per-thread generator's state).
TEST(UuidV7, AForkedChildMakesOtherIdsThanItsParent) {
  (void)NewUuidV7(1);  // the generator exists before the fork
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string id = NewUuidV7(42);
    (void)!write(pipe_fds[1], id.data(), id.size());
    _exit(0);
  }
  const std::string parent = NewUuidV7(42);
  char buffer[64] = {};
  ASSERT_EQ(read(pipe_fds[0], buffer, 36), 36);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_NE(std::string(buffer, 36), parent);
}

}  // namespace
}  // namespace sessiondb
