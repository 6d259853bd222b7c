// OutlineJsonFile: the top level of a JSON document read in blocks, each
// element of one array handed over with its place in the file.
#include "interop/json_outline.h"

#include <fstream>

#include "test_support.h"

namespace sessiondb::testing {
namespace {

using interop::OutlineJsonFile;

struct Seen {
  std::vector<int64_t> offsets;
  std::vector<std::string> texts;
};

Result<interop::JsonOutline> Outline(const std::string& path, Seen* seen) {
  return OutlineJsonFile(path, "sessions", [seen](int64_t offset, std::string_view text) {
    seen->offsets.push_back(offset);
    seen->texts.emplace_back(text);
    return Status::Ok();
  });
}

class JsonOutlineTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    const std::string path = dir_.Sub("doc" + std::to_string(n_++) + ".json");
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  TempDir dir_;
  int n_ = 0;
};

TEST_F(JsonOutlineTest, ElementsComeWithTheirPlaceAndScalarsWithTheirText) {
  // Brackets and quotes inside strings, nested containers, scalar elements,
  // an object member that is not the array, and the version after it all.
  const std::string doc =
      " {\"format\" : \"snap\\\"shot\",\"meta\":{\"a\":[1,{\"b\":\"]}\"}]},\n"
      "\"sessions\":[ {\"id\":\"a\",\"t\":\"x}]\\\\\"} ,[1,[2]],\"s,]\", 42 ,true,{}],"
      "\"version\": 1 }\n";
  const std::string path = Write(doc);
  Seen seen;
  auto outline = Outline(path, &seen);
  ASSERT_TRUE(outline) << outline.error().ToString();
  EXPECT_TRUE(outline->array_found);
  EXPECT_EQ(outline->elements, 6);
  EXPECT_EQ(seen.texts, (std::vector<std::string>{"{\"id\":\"a\",\"t\":\"x}]\\\\\"}", "[1,[2]]",
                                                  "\"s,]\"", "42", "true", "{}"}));
  for (size_t i = 0; i < seen.texts.size(); ++i) {
    EXPECT_EQ(doc.substr(static_cast<size_t>(seen.offsets[i]), seen.texts[i].size()),
              seen.texts[i]);
  }
  EXPECT_EQ(outline->scalars.at("format"), "\"snap\\\"shot\"");
  EXPECT_EQ(outline->scalars.at("version"), "1");
  EXPECT_EQ(outline->scalars.count("meta"), 0u);
}

TEST_F(JsonOutlineTest, AnElementLargerThanABlockArrivesWhole) {
  const std::string big =
      "{\"id\":\"big\",\"blob\":\"" + std::string(9 * 1024 * 1024, 'Q') + "}\"}";
  const std::string doc = "{\"sessions\":[{\"id\":\"small\"}," + big + "],\"version\":0}";
  Seen seen;
  auto outline = Outline(Write(doc), &seen);
  ASSERT_TRUE(outline) << outline.error().ToString();
  ASSERT_EQ(seen.texts.size(), 2u);
  EXPECT_EQ(seen.texts[1], big);
  EXPECT_EQ(seen.offsets[1], static_cast<int64_t>(doc.find(big)));
}

TEST_F(JsonOutlineTest, ADocumentThatIsNotWholeIsRefusedNamingWhere) {
  struct Case {
    std::string doc;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"sessions\":[{\"id\":\"a\"},{\"id\":", "ends before the document does"},
           {"{\"sessions\":[]} {}", "something follows the document"},
           {"[{\"sessions\":[]}]", "not a JSON object"},
           {"{\"sessions\" []}", "':' was expected"},
           {"{\"a\":1,}", "a member name was expected"},
           {"{\"a\":\"open string}", "ends before the document does"},
           {"", "ends before the document does"}}) {
    Seen seen;
    auto outline = Outline(Write(c.doc), &seen);
    ASSERT_FALSE(outline) << c.doc;
    EXPECT_EQ(outline.error().code(), StatusCode::kInvalidArgument) << c.doc;
    EXPECT_NE(outline.error().message().find(c.says), std::string::npos)
        << c.doc << ": " << outline.error().message();
    EXPECT_NE(outline.error().message().find("at byte "), std::string::npos);
  }
}

TEST_F(JsonOutlineTest, TheCallersErrorStopsTheOutline) {
  int calls = 0;
  auto outline =
      OutlineJsonFile(Write("{\"sessions\":[1,2,3]}"), "sessions", [&](int64_t, std::string_view) {
        return ++calls == 2 ? Status::InvalidArgument("no twos") : Status::Ok();
      });
  ASSERT_FALSE(outline);
  EXPECT_EQ(outline.error().message(), "no twos");
  EXPECT_EQ(calls, 2);
  auto missing = OutlineJsonFile(dir_.Sub("none.json"), "sessions",
                                 [](int64_t, std::string_view) { return Status::Ok(); });
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kIo);
}

TEST_F(JsonOutlineTest, AnArrayUnderAnotherNameOrNoneIsNotTheArray) {
  Seen seen;
  auto outline = Outline(Write("{\"other\":[{\"id\":1}],\"sessions\":{\"x\":[]}}"), &seen);
  ASSERT_TRUE(outline) << outline.error().ToString();
  EXPECT_FALSE(outline->array_found);
  EXPECT_TRUE(seen.texts.empty());
  auto empty = Outline(Write("{}"), &seen);
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->array_found);
}

}  // namespace
}  // namespace sessiondb::testing
