// Tool calls, their results and reasoning in the three shapes: parallel
// calls written a record at a time, calls without results, results without
// calls, ids and names no provider accepts, and reasoning that goes back
// only to the provider that wrote it. Each case is also checked by the
// provider validators.
#include <nlohmann/json.hpp>

#include "projection/request_validators.h"
#include "projection_test_support.h"

namespace sessiondb::testing {
namespace {

using nlohmann::json;

class ToolPairing : public ::testing::Test {
 protected:
  ToolPairing() { blobs_.Add(TinyPng()); }

  // The projection of `events` in `format`, parsed, after the validator of
  // that format found nothing to refuse.
  json Project(const std::vector<Event>& events, ProviderFormat format) {
    Result<std::string> body = BuildProjection(events, {.format = format}, blobs_.Fn());
    EXPECT_TRUE(body) << body.error().ToString();
    if (!body) return json();
    const std::vector<std::string> problems = RequestProblems(format, *body);
    EXPECT_TRUE(problems.empty()) << ProviderFormatName(format) << ": " << problems.front() << "\n"
                                  << *body;
    return json::parse(*body);
  }

  json Anthropic(const std::vector<Event>& e) { return Project(e, ProviderFormat::kAnthropic); }
  json Chat(const std::vector<Event>& e) { return Project(e, ProviderFormat::kOpenAiChat); }
  json Responses(const std::vector<Event>& e) {
    return Project(e, ProviderFormat::kOpenAiResponses);
  }

  FakeBlobs blobs_;
};

Event Call(int64_t seq, const std::string& id, const std::string& name = "Read") {
  return MessageEvent(seq, Role::kAssistant, {Part::ToolCall(id, name, R"({"path":"a"})")});
}

Event Result(int64_t seq, const std::string& id, const std::string& output, bool error = false) {
  return MessageEvent(seq, Role::kTool, {Part::ToolResult(id, output, error)});
}

// Claude Code writes one response as a record per block and each result of
// parallel calls as a record of its own; a result may carry an image. The
// Anthropic request holds both results first in the one user message after
// the calls, the image after them.
TEST_F(ToolPairing, ParallelResultsWrittenOneByOneAreOneUserMessage) {
  Resource shot = PngResource("res_shot", "shot.png");
  std::vector<Event> events = {
      TextEvent(1, Role::kUser, "read both"),
      MessageEvent(2, Role::kAssistant,
                   {Part::Text("Reading."), Part::ToolCall("toolu_1", "Read", "{}"),
                    Part::ToolCall("toolu_2", "Read", "{}")}),
      MessageEvent(3, Role::kTool, {Part::ToolResult("toolu_1", "one"), ImagePart(shot)}),
      Result(4, "toolu_2", "two"), TextEvent(5, Role::kAssistant, "Both read.")};
  json m = Anthropic(events)["messages"];
  ASSERT_EQ(m.size(), 4u);
  ASSERT_EQ(m[2]["content"].size(), 3u);
  EXPECT_EQ(m[2]["content"][0]["tool_use_id"], "toolu_1");
  EXPECT_EQ(m[2]["content"][1]["tool_use_id"], "toolu_2");
  EXPECT_EQ(m[2]["content"][2]["type"], "text");  // the image, as a descriptor

  json chat = Chat(events)["messages"];
  ASSERT_EQ(chat.size(), 6u);
  EXPECT_EQ(chat[2]["role"], "tool");
  EXPECT_EQ(chat[3]["role"], "tool");
  EXPECT_EQ(chat[4]["role"], "user");
  Responses(events);
}

// Codex writes each call of a parallel batch as an item, then the outputs.
// Chat Completions wants them in one assistant message.
TEST_F(ToolPairing, ParallelCallsWrittenOneByOneAreOneAssistantMessage) {
  std::vector<Event> events = {TextEvent(1, Role::kUser, "go"), Call(2, "call_a"),
                               Call(3, "call_b"), Result(4, "call_a", "A"),
                               Result(5, "call_b", "B")};
  json chat = Chat(events)["messages"];
  ASSERT_EQ(chat.size(), 4u);
  EXPECT_EQ(chat[1]["tool_calls"].size(), 2u);
  EXPECT_EQ(chat[2]["tool_call_id"], "call_a");
  EXPECT_EQ(chat[3]["tool_call_id"], "call_b");
  json input = Responses(events)["input"];
  ASSERT_EQ(input.size(), 5u);
  EXPECT_EQ(input[1]["type"], "function_call");
  EXPECT_EQ(input[2]["type"], "function_call");
  EXPECT_EQ(input[3]["call_id"], "call_a");
  Anthropic(events);
}

TEST_F(ToolPairing, ACallWithoutAResultIsLeftOut) {
  std::vector<Event> events = {
      TextEvent(1, Role::kUser, "search"),
      MessageEvent(2, Role::kAssistant,
                   {Part::Text("Searching."), Part::ToolCall("srvtoolu_1", "web_search", "{}")}),
      TextEvent(3, Role::kUser, "never mind"), Call(4, "call_late")};
  json m = Anthropic(events)["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1]["content"], json::parse(R"([{"type":"text","text":"Searching."}])"));
  EXPECT_EQ(json(Chat(events)).dump().find("srvtoolu_1"), std::string::npos);
  EXPECT_EQ(json(Responses(events)).dump().find("call_late"), std::string::npos);
}

TEST_F(ToolPairing, AResultWithoutItsCallIsAUserNoteWithItsOutput) {
  std::vector<Event> events = {Result(1, "call_gone", "the file's text"),
                               TextEvent(2, Role::kUser, "what did it say?"),
                               Call(3, "call_x"),
                               Result(4, "call_x", "first"),
                               TextEvent(5, Role::kUser, "and?"),
                               Result(6, "call_x", "answered after the user spoke", true)};
  json m = Anthropic(events)["messages"];
  ASSERT_GE(m.size(), 3u);
  EXPECT_EQ(m[0]["content"][0]["text"],
            "[Result of tool call \"call_gone\", whose call is not part of this conversation:]\n"
            "the file's text");
  // One user message: the first result, the user's words, then the note.
  json last = m.back()["content"];
  ASSERT_EQ(last.size(), 3u) << last.dump();
  EXPECT_EQ(last[0]["type"], "tool_result");
  EXPECT_EQ(last[1]["text"], "and?");
  EXPECT_EQ(last[2]["text"],
            "[Error from tool call \"call_x\", whose call is not part of this conversation:]\n"
            "answered after the user spoke");
  Chat(events);
  Responses(events);
}

// ChatGPT writes two tool messages for one web.run call, the call just
// before them: the second was a note "whose call is not part of this
// conversation". It now goes out with the first, as one result of the call.
TEST_F(ToolPairing, ASecondResultOfTheCallJustAnsweredJoinsTheFirst) {
  std::vector<Event> events = {TextEvent(1, Role::kUser, "search"), Call(2, "call_x", "web.run"),
                               Result(3, "call_x", "3 results"), Result(4, "call_x", "TAP 09:40"),
                               TextEvent(5, Role::kAssistant, "TAP at 09:40.")};
  json m = Anthropic(events)["messages"];
  ASSERT_EQ(m.size(), 4u);
  ASSERT_EQ(m[2]["content"].size(), 1u);
  EXPECT_EQ(m[2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(m[2]["content"][0]["content"], "3 results\n\nTAP 09:40");
  EXPECT_EQ(json(m).dump().find("not part of this conversation"), std::string::npos);
  json chat = Chat(events)["messages"];
  ASSERT_EQ(chat.size(), 4u);
  EXPECT_EQ(chat[2]["role"], "tool");
  EXPECT_EQ(chat[2]["content"], "3 results\n\nTAP 09:40");
  EXPECT_EQ(json(Responses(events)).dump().find("not part of this conversation"),
            std::string::npos);
}

TEST_F(ToolPairing, IdsNoProviderTakesAreReplacedTheSameInCallAndResult) {
  const std::string long_id(64, 'x');
  std::vector<Event> events = {TextEvent(1, Role::kUser, "go"),
                               Call(2, "functions.Bash:0", "edit.file"),
                               Result(3, "functions.Bash:0", "done"),
                               Call(4, long_id),
                               Result(5, long_id, "ok"),
                               Call(6, "call_1"),
                               Result(7, "call_1", "first use"),
                               Call(8, "call_1"),
                               Result(9, "call_1", "second use")};
  json chat = Chat(events)["messages"];
  const std::string first = chat[1]["tool_calls"][0]["id"];
  EXPECT_EQ(first.rfind("call_", 0), 0u);
  EXPECT_EQ(first.size(), 29u);
  EXPECT_EQ(chat[2]["tool_call_id"], first);
  EXPECT_EQ(chat[1]["tool_calls"][0]["function"]["name"], "edit_file");
  EXPECT_NE(chat[3]["tool_calls"][0]["id"], long_id);
  // A reused id is replaced in both calls, differently.
  EXPECT_NE(chat[5]["tool_calls"][0]["id"], "call_1");
  EXPECT_NE(chat[5]["tool_calls"][0]["id"], chat[7]["tool_calls"][0]["id"]);
  EXPECT_EQ(chat[8]["tool_call_id"], chat[7]["tool_calls"][0]["id"]);
  // The same window gives the same ids.
  EXPECT_EQ(Chat(events)["messages"], chat);
  Anthropic(events);
  Responses(events);
}

// Claude.ai runs tools itself: calls and results sit in the assistant's own
// message, in order.
TEST_F(ToolPairing, ResultsInsideTheAssistantMessageFollowTheirCalls) {
  std::vector<Event> events = {
      TextEvent(1, Role::kUser, "news?"),
      MessageEvent(2, Role::kAssistant,
                   {Part::Text("Searching."), Part::ToolCall("t1", "web_search", "{}"),
                    Part::ToolResult("t1", "headlines"), Part::Text("Here they are.")})};
  json m = Anthropic(events)["messages"];
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1]["content"][1]["type"], "tool_use");
  EXPECT_EQ(m[2]["content"][0]["type"], "tool_result");
  EXPECT_EQ(m[3]["content"][0]["text"], "Here they are.");
  Chat(events);
  Responses(events);
}

Event Thinking(int64_t seq, const std::string& provider) {
  Event e =
      MessageEvent(seq, Role::kAssistant,
                   {Part::Reasoning("secret plan", "sig-" + provider), Part::Text("Answer.")});
  e.message.provider = provider;
  return e;
}

TEST_F(ToolPairing, ReasoningGoesBackOnlyToTheProviderThatSignedIt) {
  std::vector<Event> anthropic_turn = {TextEvent(1, Role::kUser, "q"), Thinking(2, "anthropic")};
  std::vector<Event> openai_turn = {TextEvent(1, Role::kUser, "q"), Thinking(2, "openai")};

  json thinking = Anthropic(anthropic_turn)["messages"][1]["content"][0];
  EXPECT_EQ(
      thinking,
      json::parse(R"({"type":"thinking","thinking":"secret plan","signature":"sig-anthropic"})"));
  json reasoning = Responses(openai_turn)["input"][1];
  EXPECT_EQ(reasoning["type"], "reasoning");
  EXPECT_EQ(reasoning["encrypted_content"], "sig-openai");
  EXPECT_EQ(reasoning["summary"][0]["text"], "secret plan");

  // Anyone else's, or Chat Completions: neither the reasoning nor its text.
  for (const json& body : {Anthropic(openai_turn), Responses(anthropic_turn), Chat(openai_turn),
                           Chat(anthropic_turn)}) {
    EXPECT_EQ(body.dump().find("secret plan"), std::string::npos) << body;
    EXPECT_EQ(body.dump().find("sig-"), std::string::npos) << body;
  }
  // Reasoning without a signature is never sent.
  Event unsigned_turn = Thinking(2, "anthropic");
  unsigned_turn.message.parts[0].signature.clear();
  EXPECT_EQ(Anthropic({TextEvent(1, Role::kUser, "q"), unsigned_turn}).dump().find("secret"),
            std::string::npos);
}

TEST_F(ToolPairing, ResponsesLeavesOutReasoningNothingFollows) {
  Event last = Thinking(2, "openai");
  last.message.parts.pop_back();  // reasoning only: the window ends on it
  json input = Responses({TextEvent(1, Role::kUser, "q"), last})["input"];
  ASSERT_EQ(input.size(), 1u);
}

TEST_F(ToolPairing, AnthropicRequestsOpenWithTheUserAndEndWithoutWhitespace) {
  json m = Anthropic({TextEvent(1, Role::kAssistant, "Earlier answer."),
                      TextEvent(2, Role::kUser, "  \n"), TextEvent(3, Role::kUser, "go on"),
                      TextEvent(4, Role::kAssistant, "Sure.\n\n")})["messages"];
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0]["content"][0]["text"], "[Earlier turns of this conversation are not included.]");
  EXPECT_EQ(m[2]["content"].size(), 1u);  // the whitespace-only text is left out
  EXPECT_EQ(m[3]["content"][0]["text"], "Sure.");
}

TEST_F(ToolPairing, AnthropicEmptyResultsHaveNoContentAndEmptyErrorsSaySo) {
  json m = Anthropic({TextEvent(1, Role::kUser, "go"), Call(2, "a"), Call(3, "b"),
                      Result(4, "a", ""), Result(5, "b", "", true)})["messages"];
  ASSERT_EQ(m.size(), 3u);
  EXPECT_FALSE(m[2]["content"][0].contains("content"));
  EXPECT_EQ(m[2]["content"][1]["content"], "[The tool reported an error and gave no output.]");
}

}  // namespace
}  // namespace sessiondb::testing
