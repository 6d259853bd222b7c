// ParseJson: the one door for JSON text, and its nesting cap.
#include "core/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace sessiondb {
namespace {

std::string Nested(int depth, std::string_view open = "[", std::string_view close = "]") {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

// {"a":{"a":...{"a":1}...}}, `depth` objects.
std::string NestedObjects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += "1";
  for (int i = 0; i < depth; ++i) s += "}";
  return s;
}

TEST(ParseJson, ParsesAValueUpToTheCap) {
  auto v = ParseJson(Nested(kMaxJsonDepth));
  ASSERT_TRUE(v.has_value()) << v.error().message();
  EXPECT_TRUE(v->is_array());
  auto o = ParseJson(NestedObjects(kMaxJsonDepth));
  ASSERT_TRUE(o.has_value()) << o.error().message();
  EXPECT_EQ(o->dump().size(), NestedObjects(kMaxJsonDepth).size());
}

TEST(ParseJson, RefusesOneLevelPastTheCapNamingTheLimitAndTheByte) {
  auto v = ParseJson(Nested(kMaxJsonDepth + 1));
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v.error().message(),
            "JSON is nested deeper than 128 levels (at byte 128); the limit "
            "is 128");
  EXPECT_TRUE(IsJsonNestingError(v.error()));
}

TEST(ParseJson, RefusesSixtyThousandLevelsWithoutCrashing) {
  // A 120 KB body that overflowed the stack of every face before the cap.
  for (const std::string& text :
       {Nested(60000), Nested(60000, "{\"k\":", "}"), Nested(60000, "[", "")}) {
    auto v = ParseJson(text);
    ASSERT_FALSE(v.has_value());
    EXPECT_TRUE(IsJsonNestingError(v.error())) << v.error().message();
    auto o = ParseOrderedJson(text);
    ASSERT_FALSE(o.has_value());
    EXPECT_TRUE(IsJsonNestingError(o.error()));
    EXPECT_FALSE(IsJson(text));
  }
}

TEST(ParseJson, CountsBracketsInsideStringsAsText) {
  const std::string text = "{\"s\":\"" + std::string(500, '[') + "\"}";
  auto v = ParseJson(text);
  ASSERT_TRUE(v.has_value()) << v.error().message();
  EXPECT_EQ((*v)["s"].get<std::string>().size(), 500u);
}

TEST(ParseJson, TakesALowerCapForValuesKeptInsideStoredDocuments) {
  EXPECT_TRUE(ParseJson(Nested(kMaxJsonValueDepth), kMaxJsonValueDepth).has_value());
  auto v = ParseJson(Nested(kMaxJsonValueDepth + 1), kMaxJsonValueDepth);
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message().find("the limit is 64"), std::string::npos);
  EXPECT_LT(kMaxJsonValueDepth, kMaxJsonDepth);
}

TEST(ParseJson, MalformedTextGetsTheSyntaxErrorWithoutTheLibraryTag) {
  auto v = ParseJson("{\"a\": ");
  ASSERT_FALSE(v.has_value());
  EXPECT_FALSE(IsJsonNestingError(v.error()));
  EXPECT_EQ(v.error().message().find("[json.exception"), std::string::npos) << v.error().message();
  EXPECT_NE(v.error().message().find("parse error"), std::string::npos) << v.error().message();
  EXPECT_FALSE(ParseJson("").has_value());
  EXPECT_FALSE(ParseJson("1 2").has_value());
}

TEST(ParseJson, OrderedVariantKeepsTheTextsMemberOrder) {
  auto v = ParseOrderedJson(R"({"b":1,"a":2})");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->dump(), R"({"b":1,"a":2})");
}

TEST(CheckJson, AgreesWithParseJsonWithoutBuildingATree) {
  EXPECT_TRUE(CheckJson(Nested(kMaxJsonDepth)).ok());
  Status deep = CheckJson(Nested(kMaxJsonDepth + 1));
  EXPECT_TRUE(IsJsonNestingError(deep));
  EXPECT_EQ(deep.message(), ParseJson(Nested(kMaxJsonDepth + 1)).error().message());
  EXPECT_FALSE(CheckJson("[1,").ok());
  EXPECT_FALSE(IsJsonNestingError(CheckJson("[1,")));
}

}  // namespace
}  // namespace sessiondb
