// The projection rules, each checked on its own: which images go in full,
// what becomes a descriptor, how tools, roles and formats are spelled, and
// which inputs are refused.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "projection/descriptor.h"
#include "projection_test_support.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

const std::string kMissing = "MISSING from the store";
const std::string kNotShownAgain = "not shown again";

class Projection : public ::testing::Test {
 protected:
  Projection() { blobs_.Add(TinyPng()); }

  // The projection of `events` in `format`, parsed; fails the test on error.
  json Project(const std::vector<Event>& events,
               ProviderFormat format = ProviderFormat::kOpenAiChat) {
    Result<std::string> body = BuildProjection(events, {.format = format}, blobs_.Fn());
    EXPECT_TRUE(body) << body.error().ToString();
    return body ? json::parse(*body) : json();
  }

  FakeBlobs blobs_;
};

// The chat messages of a projection.
json Messages(const json& body) { return body.at("messages"); }

TEST(ProviderFormat, NamesParseBackToTheirFormat) {
  for (ProviderFormat f : {ProviderFormat::kOpenAiChat, ProviderFormat::kOpenAiResponses,
                           ProviderFormat::kAnthropic}) {
    Result<ProviderFormat> parsed = ParseProviderFormat(ProviderFormatName(f));
    ASSERT_TRUE(parsed) << ProviderFormatName(f);
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(ProviderFormatName(ProviderFormat::kOpenAiResponses), "openai-responses");
}

TEST(ProviderFormat, AnUnknownNameIsRefusedWithTheAcceptedValues) {
  for (std::string_view name : {"openai", "", "Anthropic", "openai_chat"}) {
    Result<ProviderFormat> parsed = ParseProviderFormat(name);
    ASSERT_FALSE(parsed) << name;
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find("openai-chat, openai-responses, anthropic"),
              std::string::npos)
        << parsed.error().message();
    EXPECT_NE(parsed.error().message().find("'" + std::string(name) + "'"), std::string::npos);
  }
}

TEST_F(Projection, OnlyTheNewestUserTurnSendsItsImagesAndOnlyThoseAreRead) {
  std::string other = MakePng(1, 1, "other");
  blobs_.Add(other);
  json body = Project({MessageEvent(1, Role::kUser, {ImagePart(PngResource("res_old", "", other))}),
                       TextEvent(2, Role::kAssistant, "ok"),
                       MessageEvent(3, Role::kUser, {ImagePart(PngResource("res_new", ""))}),
                       TextEvent(4, Role::kAssistant, "seen")});
  json m = Messages(body);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(m[0]["content"].is_string());
  EXPECT_NE(m[0]["content"].get<std::string>().find("[image res_old"), std::string::npos);
  EXPECT_EQ(m[2]["content"][0]["image_url"]["url"],
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAA"
            "AgABSK+kcQAAAABJRU5ErkJggg==");
  // Whether an earlier image's blob exists is not checked: reading it would
  // cost a blob read per image per turn.
  EXPECT_EQ(blobs_.calls(), 1);
}

TEST_F(Projection, AnImageInAnAssistantMessageIsADescriptor) {
  json m =
      Messages(Project({TextEvent(1, Role::kUser, "draw a pixel"),
                        MessageEvent(2, Role::kAssistant,
                                     {Part::Text("Here."), ImagePart(PngResource("res_a", ""))})}));
  ASSERT_EQ(m.size(), 2u);
  std::string content = m[1]["content"];
  EXPECT_EQ(content.rfind("Here.\n[image res_a: image/png, 67 bytes, 1x1, sha256 ", 0), 0u)
      << content;
  EXPECT_EQ(blobs_.calls(), 0);
}

TEST_F(Projection, AMissingFlagWinsOverBytesThatCouldBeRead) {
  Resource r = PngResource("res_a", "");
  r.missing = true;
  json m = Messages(Project({MessageEvent(1, Role::kUser, {ImagePart(r)})}));
  std::string content = m[0]["content"];
  EXPECT_NE(content.find(kMissing), std::string::npos) << content;
  EXPECT_EQ(blobs_.calls(), 0);
}

TEST_F(Projection, AResourceWithoutADigestIsMissingAndNeverRead) {
  Resource r = PngResource("res_a", "");
  r.content_sha256.clear();
  json m = Messages(Project({MessageEvent(1, Role::kUser, {ImagePart(r)})}));
  EXPECT_NE(m[0]["content"].get<std::string>().find(kMissing), std::string::npos);
  EXPECT_EQ(blobs_.calls(), 0);
}

TEST_F(Projection, ABlobTheBytesFunctionCannotSupplyIsMissing) {
  Resource lost = PngResource("res_lost", "", MakePng(1, 1, "lost"));
  for (ProviderFormat f : {ProviderFormat::kOpenAiChat, ProviderFormat::kOpenAiResponses,
                           ProviderFormat::kAnthropic}) {
    std::string body = Project({MessageEvent(1, Role::kUser, {ImagePart(lost)})}, f).dump();
    EXPECT_NE(body.find(kMissing), std::string::npos) << body;
    EXPECT_EQ(body.find("base64"), std::string::npos) << body;
  }
}

TEST(ProjectionWithoutBlobs, AnEmptyBytesFunctionProjectsEveryImageAsMissing) {
  Result<std::string> body = BuildProjection(
      std::vector<Event>{MessageEvent(1, Role::kUser, {ImagePart(PngResource("res_a", ""))})}, {},
      ResourceBytesFn());
  ASSERT_TRUE(body) << body.error().ToString();
  EXPECT_NE(body->find(kMissing), std::string::npos) << *body;
}

TEST_F(Projection, AViewStaysInFullUntilAnAssistantReplies) {
  Resource r = PngResource("res_a", "a.png");
  std::vector<Event> events = {MessageEvent(1, Role::kUser, {ImagePart(r)}),
                               TextEvent(2, Role::kAssistant, "ok"), ViewEvent(3, r, "again", 1),
                               TextEvent(4, Role::kUser, "and now?")};
  json m = Messages(Project(events));
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[2]["content"][0]["text"], "[resource_view res_a: again]");
  EXPECT_EQ(m[2]["content"][1]["type"], "image_url");

  events.push_back(TextEvent(5, Role::kAssistant, "still black"));
  m = Messages(Project(events));
  std::string content = m[2]["content"];
  EXPECT_EQ(content.rfind("[resource_view res_a: again]\n[image res_a: \"a.png\"", 0), 0u);
  EXPECT_NE(content.find(kNotShownAgain), std::string::npos);
}

TEST_F(Projection, AViewOfAMissingBlobIsMissing) {
  Resource r = PngResource("res_lost", "", MakePng(1, 1, "lost"));
  json m = Messages(Project({MessageEvent(1, Role::kUser, {ImagePart(r)}),
                             TextEvent(2, Role::kAssistant, "ok"), ViewEvent(3, r, "", 1)}));
  std::string content = m[2]["content"];
  EXPECT_EQ(content.rfind("[resource_view res_lost]\n[image res_lost:", 0), 0u) << content;
  EXPECT_NE(content.find(kMissing), std::string::npos);
}

TEST_F(Projection, AViewOfAFileIsNeverSentInFull) {
  Resource file = PngResource("res_f", "notes.txt");
  file.mime = "text/plain";
  json m = Messages(Project({MessageEvent(1, Role::kUser, {StoredPart(PartType::kFile, file)}),
                             TextEvent(2, Role::kAssistant, "ok"), ViewEvent(3, file, "read", 1)}));
  std::string content = m[2]["content"];
  EXPECT_NE(content.find("[file res_f:"), std::string::npos) << content;
  EXPECT_EQ(blobs_.calls(), 0);
}

TEST_F(Projection, FilesAndLinksOfTheNewestTurnAreDescriptorsToo) {
  Resource file = PngResource("res_f", "pixel.png");
  json m = Messages(Project({MessageEvent(
      1, Role::kUser,
      {StoredPart(PartType::kFile, file), Part::Link("https://example.com/a.png", "A")})}));
  EXPECT_EQ(m[0]["content"],
            projection::FileDescriptor(file, /*missing=*/false) +
                "\n[link https://example.com/a.png \"A\": a remote link, never fetched.]");
  EXPECT_EQ(blobs_.calls(), 0);
}

TEST_F(Projection, ReasoningAndEmptyTextAreNotProjected) {
  json m = Messages(
      Project({TextEvent(1, Role::kUser, "hi"),
               MessageEvent(2, Role::kAssistant, {Part::Reasoning("thinking")}),
               MessageEvent(3, Role::kAssistant,
                            {Part::Text(""), Part::Reasoning("more"), Part::Text("hello")})}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1]["content"], "hello");
  EXPECT_EQ(m.dump().find("thinking"), std::string::npos);
}

TEST_F(Projection, PrunedMessagesContributeNothing) {
  Event pruned = TextEvent(2, Role::kAssistant, "pruned text");
  pruned.message.pruned = true;
  json m =
      Messages(Project({TextEvent(1, Role::kUser, "a"), pruned, TextEvent(3, Role::kUser, "b")}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1]["content"], "b");
}

TEST_F(Projection, AChatAssistantTurnWithOnlyToolCallsHasNullContent) {
  json m = Messages(Project({TextEvent(1, Role::kUser, "list files"),
                             MessageEvent(2, Role::kAssistant, {Part::ToolCall("c1", "ls", "")}),
                             MessageEvent(3, Role::kTool, {Part::ToolResult("c1", "a b")})}));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_TRUE(m[1]["content"].is_null());
  EXPECT_EQ(m[1]["tool_calls"][0]["function"]["arguments"], "{}");
  EXPECT_FALSE(m[0].contains("tool_calls"));
}

TEST_F(Projection, ToolResultsComeBeforeTheTextOfTheirMessage) {
  std::vector<Event> events = {
      TextEvent(1, Role::kUser, "go"),
      MessageEvent(2, Role::kAssistant, {Part::ToolCall("c1", "run", R"({"x":1})")}),
      MessageEvent(3, Role::kUser,
                   {Part::Text("here is the output"), Part::ToolResult("c1", "42")})};
  json chat = Messages(Project(events));
  ASSERT_EQ(chat.size(), 4u);
  EXPECT_EQ(chat[2], json({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "42"}}));
  EXPECT_EQ(chat[3], json({{"role", "user"}, {"content", "here is the output"}}));

  json anthropic = Messages(Project(events, ProviderFormat::kAnthropic));
  ASSERT_EQ(anthropic.size(), 3u);
  EXPECT_EQ(anthropic[2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(anthropic[2]["content"][1]["type"], "text");
}

TEST_F(Projection, AnthropicMergesConsecutiveRolesAndJoinsSystemTexts) {
  json body =
      Project({TextEvent(1, Role::kSystem, "Be brief."), TextEvent(2, Role::kUser, "a"),
               TextEvent(3, Role::kUser, "b"), TextEvent(4, Role::kSystem, "Use metric units."),
               TextEvent(5, Role::kAssistant, "c"), TextEvent(6, Role::kAssistant, "d"),
               MessageEvent(7, Role::kAssistant, {Part::ToolCall("t1", "f", "{}")}),
               MessageEvent(8, Role::kTool, {Part::ToolResult("t1", "boom", true)}),
               TextEvent(9, Role::kUser, "e")},
              ProviderFormat::kAnthropic);
  EXPECT_EQ(body["system"], "Be brief.\n\nUse metric units.");
  json m = body["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["role"], "user");
  EXPECT_EQ(m[0]["content"].size(), 2u);
  EXPECT_EQ(m[1]["role"], "assistant");
  EXPECT_EQ(m[1]["content"].size(), 3u);
  EXPECT_EQ(m[1]["content"][2]["type"], "tool_use");
  EXPECT_EQ(m[2]["role"], "user");
  ASSERT_EQ(m[2]["content"].size(), 2u);
  EXPECT_EQ(m[2]["content"][0], json({{"type", "tool_result"},
                                      {"tool_use_id", "t1"},
                                      {"content", "boom"},
                                      {"is_error", true}}));
  EXPECT_EQ(m[2]["content"][1]["text"], "e");
}

TEST_F(Projection, AnthropicOmitsSystemWhenThereIsNone) {
  json body = Project({TextEvent(1, Role::kUser, "hi")}, ProviderFormat::kAnthropic);
  EXPECT_FALSE(body.contains("system"));
  EXPECT_EQ(body["messages"][0]["content"][0]["text"], "hi");
}

TEST_F(Projection, AnthropicToolUseInputIsTheArgumentsParsedAsAnObject) {
  auto input_of = [this](const std::string& arguments) {
    Event e = MessageEvent(1, Role::kAssistant, {});
    Part call = Part::ToolCall("t", "f", "");
    call.arguments_json = arguments;
    e.message.parts.push_back(call);
    // A call goes out only with its result.
    json body = Project({e, MessageEvent(2, Role::kTool, {Part::ToolResult("t", "done")})},
                        ProviderFormat::kAnthropic);
    return body["messages"][1]["content"][0]["input"];
  };
  json parsed = input_of(R"({"path":"/tmp","depth":2,"flags":["a"]})");
  ASSERT_TRUE(parsed.is_object());
  EXPECT_EQ(parsed["depth"], 2);
  EXPECT_EQ(parsed["flags"][0], "a");
  EXPECT_EQ(input_of("not json"), json::object());
  EXPECT_EQ(input_of("[1,2]"), json::object());
  EXPECT_EQ(input_of(""), json::object());
}

TEST_F(Projection, ResponsesKeepsTheOrderOfAssistantTextAndCalls) {
  json input = Project(
      {MessageEvent(1, Role::kAssistant,
                    {Part::Text("first"), Part::ToolCall("c1", "f", "{}"), Part::Text("second")}),
       MessageEvent(2, Role::kTool, {Part::ToolResult("c1", "out")})},
      ProviderFormat::kOpenAiResponses)["input"];
  ASSERT_EQ(input.size(), 4u);
  EXPECT_EQ(input[0]["content"][0], json({{"type", "output_text"}, {"text", "first"}}));
  EXPECT_EQ(input[1]["type"], "function_call");
  EXPECT_EQ(input[2]["content"][0]["text"], "second");
  EXPECT_EQ(input[3]["type"], "function_call_output");
}

TEST_F(Projection, AToolRoleMessageWithTextIsAUserMessage) {
  json m = Messages(Project({TextEvent(1, Role::kTool, "a note from a tool")}));
  EXPECT_EQ(m[0], json({{"role", "user"}, {"content", "a note from a tool"}}));
}

TEST_F(Projection, ACompactionIsAUserTurnInPlaceOfItsRange) {
  std::vector<Event> events = {TextEvent(1, Role::kUser, "a"), TextEvent(2, Role::kAssistant, "b"),
                               TextEvent(3, Role::kUser, "c"), CompactionEvent(4, 2, 3, "b and c"),
                               TextEvent(5, Role::kAssistant, "d")};
  json m = Messages(Project(events));
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["content"], "a");
  EXPECT_EQ(m[1],
            json({{"role", "user"},
                  {"content", "[Summary of earlier conversation: events 2\u20133]\nb and c"}}));
  EXPECT_EQ(m[2]["content"], "d");
}

TEST_F(Projection, AnImageInsideACompactedRangeIsNeitherSentNorRead) {
  Resource r = PngResource("res_a", "");
  json m = Messages(Project({MessageEvent(1, Role::kUser, {ImagePart(r)}),
                             CompactionEvent(2, 1, 1, "an image", "it was res_a", {r})}));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]["content"],
            "[Summary of earlier conversation: events 1\u20131]\nan image\n\n"
            "Limitations: it was res_a");
  EXPECT_EQ(blobs_.calls(), 0);
}

TEST_F(Projection, AnAttachmentPartWithoutAStoredResourceIsRefused) {
  Event e =
      MessageEvent(7, Role::kUser, {Part::Text("x"), Part::ImageFromBytes(TinyPng(), "image/png")});
  Result<std::string> body = BuildProjection(std::vector<Event>{e}, {}, blobs_.Fn());
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(body.error().message().find("part 2 of the message at seq 7"), std::string::npos)
      << body.error().message();
}

TEST_F(Projection, TextThatIsNotUtf8IsRefusedNotThrown) {
  Result<std::string> body = BuildProjection(
      std::vector<Event>{TextEvent(1, Role::kUser, "bad \xff byte")}, {}, blobs_.Fn());
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(Projection, AnEmptyLogProjectsToAnEmptyConversation) {
  EXPECT_EQ(*BuildProjection({}, {.format = ProviderFormat::kOpenAiChat}, blobs_.Fn()),
            R"({"messages":[]})");
  EXPECT_EQ(*BuildProjection({}, {.format = ProviderFormat::kOpenAiResponses}, blobs_.Fn()),
            R"({"input":[]})");
  EXPECT_EQ(*BuildProjection({}, {.format = ProviderFormat::kAnthropic}, blobs_.Fn()),
            R"({"messages":[]})");
}

}  // namespace
}  // namespace sessiondb::testing
