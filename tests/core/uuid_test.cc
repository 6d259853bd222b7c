#include "core/uuid.h"

#include <set>

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

}  // namespace
}  // namespace sessiondb
