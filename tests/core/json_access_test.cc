// MemberOf / MemberOr read foreign JSON without throwing: each case below
// made nlohmann's value() throw (a non-object, or a member of another type).
#include "core/json_access.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace sessiondb::testing {
namespace {

using nlohmann::json;

TEST(JsonAccess, ANonObjectGivesTheFallback) {
  for (const json& j : {json::array({1, 2}), json("text"), json(3), json(nullptr)}) {
    EXPECT_EQ(MemberOr(j, "children", json::array()), json::array());
    EXPECT_EQ(MemberOr(j, "title", "none"), "none");
    EXPECT_TRUE(MemberOf(j, "title").is_null());
  }
}

TEST(JsonAccess, AMemberOfAnotherTypeGivesTheFallback) {
  const json j = {{"is_archived", "yes"}, {"count", "12"}, {"title", 7}, {"t", true}};
  EXPECT_EQ(MemberOr(j, "is_archived", false), false);
  EXPECT_EQ(MemberOr(j, "count", int64_t{-1}), -1);
  EXPECT_EQ(MemberOr(j, "title", ""), "");
  EXPECT_EQ(MemberOr(j, "t", double{0.5}), 0.5);
}

TEST(JsonAccess, MembersOfTheRightTypeAreRead) {
  const json j = {{"b", true}, {"s", "x"},        {"i", -42},
                  {"d", 1.5},  {"o", {{"k", 1}}}, {"big", UINT64_MAX}};
  EXPECT_EQ(MemberOr(j, "b", false), true);
  EXPECT_EQ(MemberOr(j, "s", ""), "x");
  EXPECT_EQ(MemberOr(j, "i", int64_t{0}), -42);
  EXPECT_EQ(MemberOr(j, "i", 0), -42);
  EXPECT_EQ(MemberOr(j, "i", double{0}), -42.0);
  EXPECT_EQ(MemberOr(j, "d", double{0}), 1.5);
  EXPECT_EQ(MemberOr(j, "o", json::object()), (json{{"k", 1}}));
  EXPECT_EQ(MemberOf(j, "o").at("k"), 1);
  // Integers that do not fit are not wrapped.
  EXPECT_EQ(MemberOr(j, "big", int64_t{7}), 7);
  EXPECT_EQ(MemberOr(json{{"n", int64_t{1} << 40}}, "n", 3), 3);
  EXPECT_EQ(MemberOr(j, "d", int64_t{9}), 9);  // 1.5 is not an integer
}

}  // namespace
}  // namespace sessiondb::testing
