#include "store/sqlite/search_text.h"

#include <nlohmann/json.hpp>

#include "core/json_parse.h"

namespace sessiondb::sqlite {
namespace {

void SearchTextFunction(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto column = [&](int i) -> std::string_view {
    if (i >= argc || sqlite3_value_type(argv[i]) == SQLITE_NULL) return {};
    const auto* p = reinterpret_cast<const char*>(sqlite3_value_text(argv[i]));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_value_bytes(argv[i])))
             : std::string_view();
  };
  const std::string out = SearchText(column(0), column(1));
  sqlite3_result_text64(ctx, out.data(), out.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void EventIndexDeferredFunction(sqlite3_context* ctx, int, sqlite3_value**) {
  const bool* deferred = static_cast<const bool*>(sqlite3_user_data(ctx));
  sqlite3_result_int(ctx, *deferred ? 1 : 0);
}

}  // namespace

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

int RegisterSearchTextFunction(sqlite3* db) {
  return sqlite3_create_function_v2(db, "sessiondb_search_text", 2,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                                    SearchTextFunction, nullptr, nullptr, nullptr);
}

int RegisterEventIndexDeferredFunction(sqlite3* db, const bool* deferred) {
  // Not deterministic: the same call answers differently as the flag moves.
  return sqlite3_create_function_v2(db, "sessiondb_event_index_deferred", 0, SQLITE_UTF8,
                                    const_cast<bool*>(deferred), EventIndexDeferredFunction,
                                    nullptr, nullptr, nullptr);
}

}  // namespace sessiondb::sqlite
