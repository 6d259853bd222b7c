// The JSON scans importers use to pick a document apart without a DOM:
// members and elements handed over as their text, in order, and malformed
// text refused.
#include "interop/source_scan.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace sessiondb::testing {
namespace {

using interop::ForEachElement;
using interop::ForEachMember;
using interop::ScannedString;
using interop::ScannedValue;
using interop::ScanTopLevel;

std::vector<std::pair<std::string, std::string>> Members(std::string_view text, bool* ok) {
  std::vector<std::pair<std::string, std::string>> out;
  *ok = ForEachMember(
      text, [&out](std::string_view key, std::string_view value) { out.emplace_back(key, value); });
  return out;
}

std::vector<std::string> Elements(std::string_view text, bool* ok) {
  std::vector<std::string> out;
  *ok = ForEachElement(text, [&out](std::string_view value) { out.emplace_back(value); });
  return out;
}

TEST(SourceScan, MembersComeInOrderWithTheWholeTextOfTheirValues) {
  bool ok = false;
  auto m =
      Members(R"( {"a\"b": "x,\"}y", "n": -1.5e3 ,"o":{"k":[1,{"z":"]"}]},"t":true,"e":[]} )", &ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], std::make_pair(std::string(R"(a\"b)"), std::string(R"("x,\"}y")")));
  EXPECT_EQ(m[1].second, "-1.5e3");
  EXPECT_EQ(m[2].second, R"({"k":[1,{"z":"]"}]})");
  EXPECT_EQ(m[3].second, "true");
  EXPECT_EQ(m[4].second, "[]");
  EXPECT_TRUE(Members("{}", &ok).empty());
  EXPECT_TRUE(ok);
}

TEST(SourceScan, ElementsComeInOrderWithTheWholeTextOfEach) {
  bool ok = false;
  auto e = Elements(R"([ {"seq":1,"t":"a]"} , "s\\" ,[2,[3]],null ])", &ok);
  ASSERT_TRUE(ok);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0], R"({"seq":1,"t":"a]"})");
  EXPECT_EQ(e[1], R"("s\\")");
  EXPECT_EQ(e[2], "[2,[3]]");
  EXPECT_EQ(e[3], "null");
  EXPECT_TRUE(Elements(" [ ] ", &ok).empty());
  EXPECT_TRUE(ok);
}

TEST(SourceScan, MalformedTextIsRefused) {
  bool ok = true;
  for (const char* bad : {R"({"a":1)", R"({"a" 1})", R"({"a":"open})", R"({"a":1} x)",
                          R"({"a":1,})", R"([1,2)", "[1 2]", "\"not an object\""}) {
    Members(bad, &ok);
    EXPECT_FALSE(ok) << bad;
  }
  for (const char* bad : {"[1,2", "[1 2]", "[1,]", R"({"a":1})", "[\"open]"}) {
    Elements(bad, &ok);
    EXPECT_FALSE(ok) << bad;
  }
}

TEST(SourceScan, ScanTopLevelTakesTheFirstOfEachNamedMember) {
  ScannedValue v[3];
  ASSERT_TRUE(ScanTopLevel(R"({"id":"x\"y","n":null,"id":"second","obj":{"id":"inner"}})",
                           {"id", "n", "missing"}, v));
  EXPECT_TRUE(v[0].found && v[0].is_string);
  EXPECT_EQ(v[0].raw, R"(x\"y)");
  EXPECT_TRUE(v[1].is_null());
  EXPECT_FALSE(v[2].found);
  EXPECT_FALSE(ScanTopLevel(R"({"id":"x")", {"id"}, v));
}

// A value kept from a scan is decoded and checked: the scan hands over raw
// bytes, and raw bytes that are not UTF-8 once made a later dump() throw
// (found by fuzz_import_claude_code).
TEST(SourceScan, ScannedStringDecodesEscapesAndRefusesInvalidText) {
  ScannedValue v[4];
  const std::string text =
      "{\"a\":\"C:\\\\Users\\\\x \\u00e9\",\"b\":\"\x94\",\"c\":12,"
      "\"d\":\"\\ud800\"}";
  ASSERT_TRUE(ScanTopLevel(text, {"a", "b", "c", "d"}, v));
  EXPECT_EQ(ScannedString(v[0]), std::optional<std::string>("C:\\Users\\x \xc3\xa9"));
  EXPECT_EQ(ScannedString(v[1]), std::nullopt);  // a lone continuation byte
  EXPECT_EQ(ScannedString(v[2]), std::nullopt);  // a number, not a string
  EXPECT_EQ(ScannedString(v[3]), std::nullopt);  // a lone surrogate
  ScannedValue missing;
  EXPECT_EQ(ScannedString(missing), std::nullopt);
}

}  // namespace
}  // namespace sessiondb::testing
