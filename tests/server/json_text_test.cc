// AppendJsonText writes a message's JSON form straight from the message: it
// must be byte for byte what ToJson(message).dump() writes, for every kind
// of part and field, or the faces that use it (the Node package's reads)
// would answer differently from the CLI and the HTTP API.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/json_forms.h"

namespace sessiondb::testing {
namespace {

Resource AResource(const std::string& mime, int64_t size) {
  Resource r;
  r.resource_id = "res_1";
  r.content_sha256 = std::string(64, 'a');
  r.mime = mime;
  r.size = size;
  r.width = 3;
  r.height = 4;
  r.name = "shot \"1\".png";
  return r;
}

std::vector<Message> Messages() {
  std::vector<Message> out;
  Message plain;
  plain.id = "m1";
  plain.session_id = "s1";
  plain.seq = 1;
  plain.ts_ms = 1764892800000;
  plain.role = Role::kUser;
  plain.parts = {Part::Text("hello\n\"world\"\t\x01 \xc3\xa9 \xf0\x9f\x98\x80")};
  out.push_back(plain);

  Message full = plain;
  full.seq = 2;
  full.role = Role::kAssistant;
  full.parts = {Part::Reasoning("thinking", "sig"),
                Part::ToolCall("c1", "read", R"({"path":"a.cc","n":[1,2]})"),
                Part::ToolResult("c1", "int main() {}", true),
                Part::Link("https://x.test/a", "a", "text/html", 9), Part::Text("")};
  Part image = Part::ImageFromBytes("x", "image/png");
  image.resource = AResource("image/png", 66);
  full.parts.push_back(image);
  Part missing = Part::FileFromBytes("y", "text/csv");
  missing.resource.reset();
  full.parts.push_back(missing);
  full.files = {"a.cc", "b/c.h"};
  full.files_modified = {"a.cc"};
  full.edit_results_json = R"([{"ok":true,"path":"a.cc"}])";
  full.model = "gpt-5";
  full.provider = "openai";
  full.usage = Usage{10, 5, 2, 1};
  // Keys out of order and spaces: ToJson writes them parsed, sorted, compact.
  full.metadata_json = R"({ "z": 1, "a": {"y": [true, null, 1.5], "b": "\u00e9"} })";
  full.pruned = true;
  out.push_back(full);

  Message odd = plain;
  odd.seq = 3;
  odd.metadata_json = "not json";  // a damaged row: ToJson shows the raw text
  odd.parts = {Part::ToolCall("c2", "x", "")};
  out.push_back(odd);
  return out;
}

TEST(JsonText, EveryMessageIsWrittenAsToJsonDumpsIt) {
  for (const Message& m : Messages()) {
    std::string text = "prefix,";
    ASSERT_TRUE(AppendJsonText(m, &text)) << m.seq;
    EXPECT_EQ(text, "prefix," + ToJson(m).dump()) << "message " << m.seq;
  }
}

TEST(JsonText, AStringThatIsNotUtf8LeavesTheOutputAsItWas) {
  Message m = Messages()[0];
  m.parts = {Part::Text(std::string("bad \xff byte"))};
  std::string text = "kept";
  EXPECT_FALSE(AppendJsonText(m, &text));
  EXPECT_EQ(text, "kept");
  m.parts = {Part::Text("fine")};
  m.metadata_json = std::string("{\"k\":\"\xff\"}");
  EXPECT_FALSE(AppendJsonText(m, &text));
  EXPECT_EQ(text, "kept");
}

}  // namespace
}  // namespace sessiondb::testing
