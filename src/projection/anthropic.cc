// The Anthropic Messages shape: {"system": "...", "messages": [...]}.
#include "core/json_parse.h"
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

ordered_json ContentBlock(const Block& b) {
  switch (b.kind) {
    case Block::Kind::kText:
      return {{"type", "text"}, {"text", b.text}};
    case Block::Kind::kImage:
      return {{"type", "image"},
              {"source", {{"type", "base64"}, {"media_type", b.mime}, {"data", b.base64}}}};
    case Block::Kind::kToolCall:
      return {{"type", "tool_use"},
              {"id", b.tool_call_id},
              {"name", b.tool_name},
              {"input", ToolInput(b.arguments_json)}};
    case Block::Kind::kToolResult: {
      ordered_json result = {
          {"type", "tool_result"}, {"tool_use_id", b.tool_call_id}, {"content", b.text}};
      if (b.is_error) result["is_error"] = true;
      return result;
    }
  }
  return {};
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
  ordered_json body = ordered_json::object();
  if (!system.empty()) body["system"] = system;
  body["messages"] = std::move(messages);
  return body;
}

}  // namespace sessiondb::projection
