// The JSON scans importers use to pick a document apart without a DOM:
// members and elements handed over as their text, in order, and malformed
// text refused.
#include "interop/source_scan.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json_parse.h"
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

// A long record is parsed without its long strings, which are decoded
// straight from the text: the same values as a whole parse gives, escapes,
// surrogate pairs and all.
TEST(SourceScan, ALeanParseGivesTheSameTreeAsAWholeOne) {
  const std::string long_text =
      "line one\\n\\u00e9t\\u00e9 \\ud83d\\ude00 \\\"quoted\\\" " + std::string(300, 'x');
  const std::string text =
      "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\","
      "\"text\":\"" +
      long_text + "\"},{\"type\":\"tool_use\",\"input\":{\"c\":\"" + long_text +
      "\"}}]},\"short\":\"s\"}";
  auto lean = interop::ParseLean(text, 100, 1 << 20);
  ASSERT_TRUE(lean.has_value()) << lean.error().ToString();
  EXPECT_EQ(lean->long_strings.size(), 2u);
  std::vector<interop::CutString> cut;
  ASSERT_TRUE(interop::InflateLongStrings(&*lean, 1 << 20, "[cut]", &cut).ok());
  EXPECT_TRUE(cut.empty());
  auto whole = ParseJson(text);
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(lean->tree, *whole);
}

// Past the budget a string is cut at a character boundary and says so;
// strings after it keep nothing.
TEST(SourceScan, LongStringsPastTheBudgetAreCutAtACharacter) {
  const std::string first = std::string(150, 'a') + "\xC3\xA9\xC3\xA9";  // 154 bytes
  const std::string text =
      "{\"a\":\"" + first + "\",\"b\":\"" + std::string(200, 'b') + "\",\"c\":\"short\"}";
  auto lean = interop::ParseLean(text, 100, 1 << 20);
  ASSERT_TRUE(lean.has_value());
  std::vector<interop::CutString> cut;
  ASSERT_TRUE(interop::InflateLongStrings(&*lean, 151, "[cut]", &cut).ok());
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[0].node, &lean->tree["a"]);
  EXPECT_EQ(lean->tree["a"], std::string(150, 'a') + "[cut]");  // not half an é
  EXPECT_EQ(lean->tree["b"], "[cut]");
  EXPECT_EQ(lean->tree["c"], "short");
  // Each cut string is measured whole, decoded, without being kept.
  EXPECT_EQ(cut[0].bytes, first.size());
  EXPECT_EQ(cut[0].head, first);
  EXPECT_EQ(cut[0].tail, "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(cut[1].bytes, 200u);
  EXPECT_EQ(cut[1].tail, "bbbb");
}

// What an importer reads of cut base64 (an image's size from its length
// and padding, its type from its head) is of the decoded string: escapes
// count as the one character they stand for.
TEST(SourceScan, ACutStringIsMeasuredDecoded) {
  // The JSON text holds escapes (a backslash before each slash, and the
  // last '=' as a \u escape), not the characters they stand for.
  std::string raw = "data:image\\/png;base64,";
  for (int i = 0; i < 100; ++i) raw += "AAAA\\/\\/\\/A";
  raw += "AA\\u003d=";
  const std::string text = "{\"url\":\"" + raw + "\"}";
  auto lean = interop::ParseLean(text, 100, 1 << 20);
  ASSERT_TRUE(lean.has_value());
  std::vector<interop::CutString> cut;
  ASSERT_TRUE(interop::InflateLongStrings(&*lean, 10, "[cut]", &cut).ok());
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].bytes, 22 + 100 * 8 + 4u);
  EXPECT_TRUE(cut[0].head.starts_with("data:image/png;base64,AAAA///A"));
  EXPECT_EQ(cut[0].tail, "AA==");
}

TEST(SourceScan, ALeanParseRefusesWhatAWholeOneWould) {
  std::vector<interop::CutString> cut;
  for (const std::string& bad :
       {std::string("\\q"), std::string("\\ud800 alone"), std::string("\\udc00"),
        std::string("tab\there"), std::string("\\u12")}) {
    const std::string text = "{\"a\":\"" + std::string(200, 'x') + bad + "\"}";
    auto lean = interop::ParseLean(text, 100, 1 << 20);
    ASSERT_TRUE(lean.has_value());
    EXPECT_FALSE(interop::InflateLongStrings(&*lean, 1 << 20, "", &cut).ok()) << bad;
    EXPECT_FALSE(ParseJson(text).has_value()) << bad;
  }
  // Many small values: their tree would be ten times their text.
  std::string many = "{\"a\":[";
  for (int i = 0; i < 1000; ++i) many += "\"v\",";
  many += "\"v\"]}";
  auto refused = interop::ParseLean(many, 100, 1000);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message().find("the limit is 1000"), std::string::npos);
  EXPECT_FALSE(interop::ParseLean("{\"a\":\"\xFF\"}", 100, 1000).has_value());
}

}  // namespace
}  // namespace sessiondb::testing
