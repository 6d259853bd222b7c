// The message body is written by JsonWriter, not by building an nlohmann
// tree: the bytes must stay exactly what nlohmann wrote (stores hold bodies
// written both ways, and snapshots promise byte-identical exports). The
// reference here is the tree-building encoder the body codec used before.
#include "core/json_writer.h"

#include <nlohmann/json.hpp>
#include <random>

#include "core/message_codec.h"
#include "gtest/gtest.h"

namespace sessiondb {
namespace {

using nlohmann::json;

json ReferenceResource(const Resource& r) {
  json j = json::object();
  if (!r.resource_id.empty()) j["resource_id"] = r.resource_id;
  if (!r.content_sha256.empty()) j["content_sha256"] = r.content_sha256;
  if (!r.mime.empty()) j["mime"] = r.mime;
  if (r.size != 0) j["size"] = r.size;
  if (r.width != 0) j["width"] = r.width;
  if (r.height != 0) j["height"] = r.height;
  j["origin"] = OriginName(r.origin);
  if (!r.name.empty()) j["name"] = r.name;
  if (!r.uri.empty()) j["uri"] = r.uri;
  return j;
}

std::string ReferenceBody(const Message& m) {
  json body = {{"v", kMessageBodyVersion}};
  json parts = json::array();
  for (const Part& p : m.parts) {
    json j = {{"type", PartTypeName(p.type)}};
    switch (p.type) {
      case PartType::kText:
        j["text"] = p.text;
        break;
      case PartType::kReasoning:
        j["text"] = p.text;
        if (!p.signature.empty()) j["signature"] = p.signature;
        break;
      case PartType::kImage:
      case PartType::kFile:
      case PartType::kResourceLink:
        j["resource"] = ReferenceResource(*p.resource);
        break;
      case PartType::kToolCall:
        j["id"] = p.tool_call_id;
        j["name"] = p.tool_name;
        j["arguments"] = p.arguments_json.empty() ? std::string("{}") : p.arguments_json;
        break;
      case PartType::kToolResult:
        j["tool_call_id"] = p.tool_call_id;
        j["output"] = p.text;
        if (p.is_error) j["is_error"] = true;
        break;
    }
    parts.push_back(std::move(j));
  }
  body["parts"] = std::move(parts);
  if (!m.files.empty()) body["files"] = m.files;
  if (!m.files_modified.empty()) body["files_modified"] = m.files_modified;
  if (!m.edit_results_json.empty()) body["edit_results"] = json::parse(m.edit_results_json);
  if (!m.model.empty()) body["model"] = m.model;
  if (!m.provider.empty()) body["provider"] = m.provider;
  if (m.pruned) body["pruned"] = true;
  if (m.usage) {
    body["usage"] = {{"input_tokens", m.usage->input_tokens},
                     {"output_tokens", m.usage->output_tokens},
                     {"cached_tokens", m.usage->cached_tokens},
                     {"reasoning_tokens", m.usage->reasoning_tokens}};
  }
  if (!m.metadata_json.empty()) body["metadata"] = json::parse(m.metadata_json);
  return body.dump();
}

// Text that exercises every escaping rule: quotes, backslashes, each control
// byte, DEL, and two-, three- and four-byte UTF-8.
std::string Tricky(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {
      "a",         "Z",         " ",     "\"", "\\", "/",
      "\b",        "\f",        "\n",    "\r", "\t", std::string(1, '\0'),
      "\x01",      "\x1f",      "\x7f",  "é",  "€",  "😀",
      "{\"k\":1}", "</script>", "\u2028"};
  std::string out;
  const int n = static_cast<int>(rng() % 12);
  for (int i = 0; i < n; ++i) out += kPieces[rng() % kPieces.size()];
  return out;
}

Message RandomMessage(std::mt19937& rng) {
  Message m;
  const int parts = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < parts; ++i) {
    switch (rng() % 6) {
      case 0:
        m.parts.push_back(Part::Text(Tricky(rng)));
        break;
      case 1:
        m.parts.push_back(Part::Reasoning(Tricky(rng), rng() % 2 ? Tricky(rng) : ""));
        break;
      case 2: {
        const char* args[] = {"", "{}", "{\"path\":\"a\\\"b.cc\",\"n\":[1,2]}", " {\"x\" : 1} "};
        m.parts.push_back(Part::ToolCall(Tricky(rng), Tricky(rng), args[rng() % 4]));
        break;
      }
      case 3:
        m.parts.push_back(Part::ToolResult(Tricky(rng), Tricky(rng), rng() % 2 == 0));
        break;
      default: {
        Part p;
        p.type = rng() % 2 ? PartType::kImage : PartType::kFile;
        Resource r;
        r.resource_id = rng() % 3 ? "res_" + std::to_string(rng()) : "";
        r.content_sha256 = rng() % 3 ? std::string(64, 'a') : "";
        r.mime = rng() % 3 ? "image/png" : "";
        r.size = rng() % 2 ? static_cast<int64_t>(rng()) * 1000 : 0;
        r.width = static_cast<int>(rng() % 3);
        r.height = static_cast<int>(rng() % 3);
        r.origin = rng() % 2 ? Origin::kInline : Origin::kRemoteLink;
        r.name = rng() % 2 ? Tricky(rng) : "";
        r.uri = rng() % 2 ? "https://x/" + Tricky(rng) : "";
        p.resource = r;
        m.parts.push_back(std::move(p));
      }
    }
  }
  if (rng() % 3 == 0) m.files = {Tricky(rng), "src/a.cc"};
  if (rng() % 3 == 0) m.files_modified = {Tricky(rng)};
  if (rng() % 4 == 0) m.edit_results_json = "[{\"file\":\"a\",\"ok\":true},{\"z\":1,\"a\":[]}]";
  if (rng() % 3 == 0) m.model = Tricky(rng);
  if (rng() % 3 == 0) m.provider = "anthropic";
  if (rng() % 5 == 0) m.pruned = true;
  if (rng() % 2 == 0) {
    m.usage = Usage{static_cast<int64_t>(rng()), -5, 0, int64_t{1} << 40};
  }
  if (rng() % 3 == 0) m.metadata_json = "{\"uuid\":\"u-1\",\"b\":{\"y\":2,\"x\":1}}";
  return m;
}

TEST(JsonWriter, MessageBodiesAreByteForByteWhatTheTreeEncoderWrote) {
  std::mt19937 rng(20261123);
  int compared = 0;
  for (int i = 0; i < 5000; ++i) {
    Message m = RandomMessage(rng);
    auto body = EncodeMessageBody(m);
    ASSERT_TRUE(body) << body.error().ToString();
    if (!body->has_value()) continue;  // a plain text message has no body
    ASSERT_EQ(**body, ReferenceBody(m)) << "message " << i;
    ++compared;
  }
  EXPECT_GT(compared, 4000);
}

TEST(JsonWriter, ResourceDescriptorsAreWhatTheTreeEncoderWrote) {
  Resource r;
  r.resource_id = "res_1";
  r.content_sha256 = std::string(64, 'f');
  r.mime = "image/png";
  r.size = 123;
  r.width = 4;
  r.height = 3;
  r.name = "a \"b\".png";
  EXPECT_EQ(ResourceToJson(r), ReferenceResource(r).dump());
  EXPECT_EQ(ResourceToJson(Resource{}), ReferenceResource(Resource{}).dump());
}

TEST(JsonWriter, TextThatIsNotUtf8IsRefusedNotWritten) {
  Message m;
  m.parts = {Part::Text("ok"), Part::Reasoning(std::string("bad \xff\xfe byte"))};
  auto body = EncodeMessageBody(m);
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(body.error().message().find("UTF-8"), std::string::npos) << body.error().message();
}

TEST(JsonWriter, WritesNestedContainersWithCommasInTheRightPlaces) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject().Key("a").BeginArray().Int(1).BeginObject().EndObject().BeginArray().EndArray();
  w.String("x").EndArray().Key("b").Bool(false).Key("c").Raw("{\"d\":null}").EndObject();
  EXPECT_EQ(out, "{\"a\":[1,{},[],\"x\"],\"b\":false,\"c\":{\"d\":null}}");
  EXPECT_TRUE(w.ok());
}

}  // namespace
}  // namespace sessiondb
