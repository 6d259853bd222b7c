// The OpenAI Responses shape: {"input": [...]}.
#include "projection/shapes.h"

namespace sessiondb::projection {
namespace {

using nlohmann::ordered_json;

ordered_json MessageItem(std::string_view role, ordered_json content) {
  return {{"type", "message"}, {"role", role}, {"content", std::move(content)}};
}

// System and user turns: one message item of input_text / input_image parts.
ordered_json InputMessage(const Turn& turn) {
  ordered_json content = ordered_json::array();
  for (const Block& b : turn.blocks) {
    if (b.kind == Block::Kind::kText) {
      content.push_back({{"type", "input_text"}, {"text", b.text}});
    } else if (b.kind == Block::Kind::kImage) {
      content.push_back({{"type", "input_image"}, {"image_url", ImageDataUri(b)}});
    }
  }
  return MessageItem(RoleName(turn.role), std::move(content));
}

// An assistant turn: its text runs as message items of output_text parts and
// its tool calls as function_call items, in the order of the parts.
void AddAssistant(const Turn& turn, ordered_json* input) {
  ordered_json content = ordered_json::array();
  auto flush = [&] {
    if (content.empty()) return;
    input->push_back(MessageItem("assistant", std::move(content)));
    content = ordered_json::array();
  };
  for (const Block& b : turn.blocks) {
    if (b.kind == Block::Kind::kText) {
      content.push_back({{"type", "output_text"}, {"text", b.text}});
    } else if (b.kind == Block::Kind::kReasoning) {
      // Sent back as it came: its encrypted_content (turns.cc keeps only
      // OpenAI's own), the readable text as its summary. No id: a stateless
      // request may leave it out, as Codex does.
      flush();
      ordered_json summary = ordered_json::array();
      if (!b.text.empty()) summary.push_back({{"type", "summary_text"}, {"text", b.text}});
      input->push_back({{"type", "reasoning"},
                        {"summary", std::move(summary)},
                        {"encrypted_content", b.signature}});
    } else if (b.kind == Block::Kind::kToolCall) {
      flush();
      input->push_back({{"type", "function_call"},
                        {"call_id", b.tool_call_id},
                        {"name", b.tool_name},
                        {"arguments", b.arguments_json}});
    }
  }
  flush();
}

// "Item of type 'reasoning' was provided without its required following
// item": reasoning goes back only ahead of what it led to (a call, an
// answer, or more reasoning that does), so reasoning a window ends on goes.
void DropUnfollowedReasoning(ordered_json* input) {
  bool followed = false;  // by an item reasoning may precede
  for (size_t i = input->size(); i-- > 0;) {
    const ordered_json& item = (*input)[i];
    const bool reasoning = item["type"] == "reasoning";
    if (reasoning && !followed) {
      input->erase(i);
      continue;
    }
    followed = reasoning || item["type"] == "function_call" ||
               (item["type"] == "message" && item["role"] == "assistant");
  }
}

}  // namespace

nlohmann::ordered_json OpenAiResponsesBody(std::span<const Turn> turns) {
  ordered_json input = ordered_json::array();
  for (const Turn& turn : turns) {
    switch (turn.role) {
      case Role::kSystem:
      case Role::kUser:
        input.push_back(InputMessage(turn));
        break;
      case Role::kAssistant:
        AddAssistant(turn, &input);
        break;
      case Role::kTool:
        for (const Block& b : turn.blocks) {
          input.push_back({{"type", "function_call_output"},
                           {"call_id", b.tool_call_id},
                           {"output", b.is_error ? "Error: " + b.text : b.text}});
        }
        break;
    }
  }
  DropUnfollowedReasoning(&input);
  return {{"input", std::move(input)}};
}

}  // namespace sessiondb::projection
