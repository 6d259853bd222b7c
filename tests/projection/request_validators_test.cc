// The validators themselves: a valid request of each provider passes, and
// each rule refuses the request that breaks it (so a green property test
// means something).
#include "projection/request_validators.h"

#include <gtest/gtest.h>

namespace sessiondb::testing {
namespace {

using nlohmann::json;

bool Mentions(const std::vector<std::string>& problems, const std::string& words) {
  for (const std::string& p : problems) {
    if (p.find(words) != std::string::npos) return true;
  }
  return false;
}

json AnthropicValid() {
  return json::parse(R"({
    "system": "Be brief.",
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "two cities", "signature": "sig"},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Rome"}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "20 C"},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "", "is_error": false},
        {"type": "text", "text": "and tomorrow?"}]},
      {"role": "assistant", "content": "Sunny in both."}]})");
}

TEST(AnthropicRequestProblems, AValidRequestHasNone) {
  EXPECT_EQ(AnthropicRequestProblems(AnthropicValid()), std::vector<std::string>{});
}

TEST(AnthropicRequestProblems, EachBrokenRuleIsNamed) {
  struct Case {
    const char* what;
    std::function<void(json&)> breaks;
  };
  const std::vector<Case> cases = {
      {"first message must use the \"user\" role", [](json& b) { b["messages"].erase(0); }},
      {"roles must alternate", [](json& b) { b["messages"][3]["role"] = "user"; }},
      {"does not match ^[a-zA-Z0-9_-]+$",
       [](json& b) {
         b["messages"][1]["content"][1]["id"] = "functions.Bash:0";
         b["messages"][2]["content"][1]["tool_use_id"] = "functions.Bash:0";
       }},
      {"tool_use ids must be unique",
       [](json& b) { b["messages"][1]["content"][2]["id"] = "toolu_1"; }},
      {"without tool_result blocks immediately after",
       [](json& b) { b["messages"][2]["content"].erase(0); }},
      {"tool results must come first",
       [](json& b) {
         json text = b["messages"][2]["content"][2];
         b["messages"][2]["content"].erase(2);
         b["messages"][2]["content"].insert(b["messages"][2]["content"].begin(), text);
       }},
      {"unexpected tool_use_id",
       [](json& b) { b["messages"][2]["content"][0]["tool_use_id"] = "toolu_9"; }},
      {"non-whitespace text", [](json& b) { b["messages"][0]["content"][0]["text"] = " \n"; }},
      {"trailing whitespace", [](json& b) { b["messages"][3]["content"] = "Sunny in both.\n"; }},
      {"content cannot be empty if is_error is true",
       [](json& b) { b["messages"][2]["content"][1]["is_error"] = true; }},
      {"without its signature", [](json& b) { b["messages"][1]["content"][0].erase("signature"); }},
      {"holds a 'encrypted_content' field",
       [](json& b) { b["messages"][1]["content"][0]["encrypted_content"] = "gAAA"; }},
      {"is not a tool name",
       [](json& b) { b["messages"][1]["content"][1]["name"] = "browser.search"; }},
      {"at least one message is required", [](json& b) { b["messages"] = json::array(); }},
  };
  for (const Case& c : cases) {
    json body = AnthropicValid();
    c.breaks(body);
    std::vector<std::string> problems = AnthropicRequestProblems(body);
    EXPECT_TRUE(Mentions(problems, c.what))
        << c.what << "; found: " << (problems.empty() ? "nothing" : problems.front());
  }
}

json ChatValid() {
  return json::parse(R"({"messages": [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "weather?"},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
      {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_2", "content": "20 C"},
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
    {"role": "user", "content": "thanks"},
    {"role": "assistant", "content": "Sunny."}]})");
}

TEST(OpenAiChatRequestProblems, AValidRequestHasNone) {
  EXPECT_EQ(OpenAiChatRequestProblems(ChatValid()), std::vector<std::string>{});
}

TEST(OpenAiChatRequestProblems, EachBrokenRuleIsNamed) {
  struct Case {
    const char* what;
    std::function<void(json&)> breaks;
  };
  const std::vector<Case> cases = {
      {"longer than 40",
       [](json& b) {
         const std::string id(41, 'a');
         b["messages"][2]["tool_calls"][0]["id"] = id;
         b["messages"][4]["tool_call_id"] = id;
       }},
      {"must be followed by tool messages", [](json& b) { b["messages"].erase(4); }},
      {"must be a response to a preceding message",
       [](json& b) { b["messages"].insert(b["messages"].begin() + 1, b["messages"][3]); }},
      {"answers no open call", [](json& b) { b["messages"][4]["tool_call_id"] = "call_2"; }},
      {"content is required unless tool_calls",
       [](json& b) { b["messages"][2].erase("tool_calls"); }},
      {"holds a 'signature' field", [](json& b) { b["messages"][6]["signature"] = "sig"; }},
      {"is not a function name",
       [](json& b) { b["messages"][2]["tool_calls"][0]["function"]["name"] = "a b"; }},
      {"did not have response messages",
       [](json& b) {
         b["messages"].erase(6);
         b["messages"].erase(5);
         b["messages"].erase(4);
       }},
  };
  for (const Case& c : cases) {
    json body = ChatValid();
    c.breaks(body);
    std::vector<std::string> problems = OpenAiChatRequestProblems(body);
    EXPECT_TRUE(Mentions(problems, c.what))
        << c.what << "; found: " << (problems.empty() ? "nothing" : problems.front());
  }
}

json ResponsesValid() {
  return json::parse(R"({"input": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
    {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_1", "output": "18 C"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]}]})");
}

TEST(OpenAiResponsesRequestProblems, AValidRequestHasNone) {
  EXPECT_EQ(OpenAiResponsesRequestProblems(ResponsesValid()), std::vector<std::string>{});
}

TEST(OpenAiResponsesRequestProblems, EachBrokenRuleIsNamed) {
  struct Case {
    const char* what;
    std::function<void(json&)> breaks;
  };
  const std::vector<Case> cases = {
      {"empty or over 64",
       [](json& b) {
         const std::string id(65, 'a');
         b["input"][2]["call_id"] = id;
         b["input"][3]["call_id"] = id;
       }},
      {"no tool output found", [](json& b) { b["input"].erase(3); }},
      {"no tool call found", [](json& b) { b["input"][3]["call_id"] = "call_9"; }},
      {"without its required following item", [](json& b) { b["input"].erase(2); }},
      {"without its encrypted_content", [](json& b) { b["input"][1].erase("encrypted_content"); }},
      {"holds a 'signature' field", [](json& b) { b["input"][1]["signature"] = "sig"; }},
      {"part type 'output_text' in a user message",
       [](json& b) { b["input"][0]["content"][0]["type"] = "output_text"; }},
  };
  for (const Case& c : cases) {
    json body = ResponsesValid();
    c.breaks(body);
    std::vector<std::string> problems = OpenAiResponsesRequestProblems(body);
    EXPECT_TRUE(Mentions(problems, c.what))
        << c.what << "; found: " << (problems.empty() ? "nothing" : problems.front());
  }
}

}  // namespace
}  // namespace sessiondb::testing
