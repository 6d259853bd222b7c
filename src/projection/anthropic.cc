// The Anthropic Messages shape: {"system": "...", "messages": [...]}.
#include <cctype>

#include "core/json_parse.h"
#include "projection/descriptor.h"
#include "projection/shapes.h"

namespace sessiondb::projection {
namespace {

using nlohmann::ordered_json;

// The tool_use input: the arguments as a JSON object. Arguments that do not
// parse, or parse to something other than an object, become {}: the API
// accepts only an object there.
ordered_json ToolInput(const std::string& arguments_json) {
  ordered_json input = ParseOrderedJson(arguments_json).value_or(ordered_json());
  if (!input.is_object()) return ordered_json::object();
  return input;
}

// A tool_result: the output as its content; none for an empty output (the
// field is optional), and words for an empty error ("content cannot be
// empty if is_error is true").
ordered_json ToolResult(const Block& b) {
  ordered_json result = {{"type", "tool_result"}, {"tool_use_id", b.tool_call_id}};
  if (!b.text.empty()) {
    result["content"] = b.text;
  } else if (b.is_error) {
    result["content"] = EmptyToolError();
  }
  if (b.is_error) result["is_error"] = true;
  return result;
}

ordered_json ContentBlock(const Block& b) {
  switch (b.kind) {
    case Block::Kind::kText:
      return {{"type", "text"}, {"text", b.text}};
    case Block::Kind::kImage:
      return {{"type", "image"},
              {"source", {{"type", "base64"}, {"media_type", b.mime}, {"data", b.base64}}}};
    case Block::Kind::kReasoning:
      // Sent back as it came, with its signature (turns.cc keeps only
      // Anthropic's own).
      return {{"type", "thinking"}, {"thinking", b.text}, {"signature", b.signature}};
    case Block::Kind::kToolCall:
      return {{"type", "tool_use"},
              {"id", b.tool_call_id},
              {"name", b.tool_name},
              {"input", ToolInput(b.arguments_json)}};
    case Block::Kind::kToolResult:
      return ToolResult(b);
  }
  return {};
}

// "final assistant content cannot end with trailing whitespace": a request
// that ends with the assistant's turn (a prefill) has its last text trimmed;
// a text left empty goes, and a turn left empty too.
void TrimFinalAssistant(ordered_json* messages) {
  while (!messages->empty() && messages->back()["role"] == "assistant") {
    ordered_json& content = messages->back()["content"];
    if (!content.empty() && content.back()["type"] == "text") {
      std::string text = content.back()["text"].get<std::string>();
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.pop_back();
      }
      if (text.empty()) {
        content.erase(content.size() - 1);
      } else {
        content.back()["text"] = text;
      }
    }
    if (!content.empty()) return;
    messages->erase(messages->size() - 1);
  }
}

}  // namespace

nlohmann::ordered_json AnthropicBody(std::span<const Turn> turns) {
  std::string system;
  ordered_json messages = ordered_json::array();
  for (const Turn& turn : turns) {
    if (turn.role == Role::kSystem) {
      if (!system.empty()) system += "\n\n";
      system += JoinedText(turn);
      continue;
    }
    std::string_view role = turn.role == Role::kAssistant ? "assistant" : "user";
    if (messages.empty() || messages.back()["role"] != role) {
      messages.push_back({{"role", role}, {"content", ordered_json::array()}});
    }
    ordered_json& content = messages.back()["content"];
    for (const Block& b : turn.blocks) content.push_back(ContentBlock(b));
  }
  TrimFinalAssistant(&messages);
  if (!messages.empty() && messages.front()["role"] == "assistant") {
    // "messages: first message must use the \"user\" role".
    ordered_json opening = {{"role", "user"}, {"content", ordered_json::array()}};
    opening["content"].push_back({{"type", "text"}, {"text", EarlierTurnsLeftOut()}});
    messages.insert(messages.begin(), std::move(opening));
  }
  ordered_json body = ordered_json::object();
  if (!system.empty()) body["system"] = system;
  body["messages"] = std::move(messages);
  return body;
}

}  // namespace sessiondb::projection
