#include "core/search_text.h"

#include <nlohmann/json.hpp>

#include "core/json_parse.h"

namespace sessiondb {

std::string SearchText(std::string_view text, std::string_view body) {
  std::string out(text);
  // Most bodies hold no tool parts: skip the parse for them.
  if (body.empty() || body.find("\"tool_") == std::string_view::npos) return out;
  nlohmann::json doc = ParseJson(body).value_or(nlohmann::json());
  if (!doc.is_object()) return out;
  auto parts = doc.find("parts");
  if (parts == doc.end() || !parts->is_array()) return out;
  auto str = [](const nlohmann::json& part, const char* key) {
    auto it = part.find(key);
    return it != part.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const nlohmann::json& part : *parts) {
    if (!part.is_object()) continue;
    const std::string type = str(part, "type");
    if (type == "tool_call") {
      out += '\n' + str(part, "name") + ' ' + str(part, "arguments");
    } else if (type == "tool_result") {
      out += '\n' + str(part, "output");
    }
  }
  return out;
}

std::string MessageSearchText(std::string_view text, const Message& message) {
  std::string out(text);
  for (const Part& part : message.parts) {
    if (part.type == PartType::kToolCall) {
      // The body keeps "{}" for empty arguments (message_codec.cc).
      out += '\n';
      out += part.tool_name;
      out += ' ';
      out += part.arguments_json.empty() ? std::string_view("{}") : part.arguments_json;
    } else if (part.type == PartType::kToolResult) {
      out += '\n';
      out += part.text;
    }
  }
  return out;
}

}  // namespace sessiondb
