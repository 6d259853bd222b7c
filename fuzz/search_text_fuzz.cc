// Fuzz target: a stored message body as the full-text index reads it
// (SearchText, src/core/search_text.cc, which walks the body in one pass
// with no JSON tree). Property: it adds exactly what the body says as
// nlohmann (ParseJson, the reader of bodies everywhere else) reads it, so
// a damaged or hostile body is read the same by the index and the rest of
// sessiondb. The same reference is in tests/core/search_text_test.cc.

#include "core/json_parse.h"
#include "core/search_text.h"
#include "fuzz_support.h"

namespace {

std::string ReferenceSearchText(std::string_view text, std::string_view body) {
  using Json = nlohmann::json;
  std::string out(text);
  if (body.empty() || body.find("\"tool_") == std::string_view::npos) return out;
  Json doc = sessiondb::ParseJson(body).value_or(Json());
  if (!doc.is_object()) return out;
  auto parts = doc.find("parts");
  if (parts == doc.end() || !parts->is_array()) return out;
  auto str = [](const Json& part, const char* key) {
    auto it = part.find(key);
    return it != part.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const Json& part : *parts) {
    if (!part.is_object()) continue;
    const std::string type = str(part, "type");
    if (type == "tool_call") out += '\n' + str(part, "name") + ' ' + str(part, "arguments");
    if (type == "tool_result") out += '\n' + str(part, "output");
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = sessiondb::fuzz::AsView(data, size);
  FUZZ_CHECK(sessiondb::SearchText("t", body) == ReferenceSearchText("t", body));
  return 0;
}
