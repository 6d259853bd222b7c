// The OpenAI Chat Completions shape: {"messages": [...]}.
#include "projection/shapes.h"

namespace sessiondb::projection {
namespace {

using nlohmann::ordered_json;

bool TextOnly(const Turn& turn) {
  for (const Block& b : turn.blocks) {
    if (b.kind != Block::Kind::kText) return false;
  }
  return true;
}

// String content when the turn is text only, else an array of parts.
ordered_json UserContent(const Turn& turn) {
  if (TextOnly(turn)) return JoinedText(turn);
  ordered_json parts = ordered_json::array();
  for (const Block& b : turn.blocks) {
    if (b.kind == Block::Kind::kText) {
      parts.push_back({{"type", "text"}, {"text", b.text}});
    } else if (b.kind == Block::Kind::kImage) {
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", ImageDataUri(b)}}}});
    }
  }
  return parts;
}

ordered_json AssistantMessage(const Turn& turn) {
  std::string text = JoinedText(turn);
  ordered_json message = {{"role", "assistant"},
                          {"content", text.empty() ? ordered_json(nullptr) : ordered_json(text)}};
  ordered_json calls = ordered_json::array();
  for (const Block& b : turn.blocks) {
    if (b.kind != Block::Kind::kToolCall) continue;
    calls.push_back({{"id", b.tool_call_id},
                     {"type", "function"},
                     {"function", {{"name", b.tool_name}, {"arguments", b.arguments_json}}}});
  }
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  return message;
}

}  // namespace

nlohmann::ordered_json OpenAiChatBody(std::span<const Turn> turns) {
  ordered_json messages = ordered_json::array();
  for (const Turn& turn : turns) {
    switch (turn.role) {
      case Role::kSystem:
        messages.push_back({{"role", "system"}, {"content", JoinedText(turn)}});
        break;
      case Role::kUser:
        messages.push_back({{"role", "user"}, {"content", UserContent(turn)}});
        break;
      case Role::kAssistant:
        messages.push_back(AssistantMessage(turn));
        break;
      case Role::kTool:
        for (const Block& b : turn.blocks) {
          messages.push_back({{"role", "tool"},
                              {"tool_call_id", b.tool_call_id},
                              {"content", b.is_error ? "Error: " + b.text : b.text}});
        }
        break;
    }
  }
  return {{"messages", std::move(messages)}};
}

}  // namespace sessiondb::projection
