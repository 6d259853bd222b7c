// The rules each validator checks, with where they come from. Where a
// provider's reference leaves a rule unstated, its API's error message is the
// source (quoted); where neither bounds a value, the rule is the stricter
// reading, and says so.
#include "projection/request_validators.h"

#include <map>
#include <set>

namespace sessiondb::testing {
namespace {

using nlohmann::json;

class Problems {
 public:
  void Add(const std::string& where, const std::string& what) {
    list_.push_back(where + ": " + what);
  }
  std::vector<std::string> Take() { return std::move(list_); }

 private:
  std::vector<std::string> list_;
};

bool IsString(const json& j, std::string_view key) {
  return j.is_object() && j.contains(key) && j.at(key).is_string();
}

std::string StringAt(const json& j, std::string_view key) {
  return IsString(j, key) ? j.at(key).get<std::string>() : std::string();
}

bool HasNonWhitespace(const std::string& s) {
  return s.find_first_not_of(" \t\n\r\f\v") != std::string::npos;
}

// ^[a-zA-Z0-9_-]+$ with a length limit.
bool IsPlainId(const std::string& s, size_t max_length) {
  if (s.empty() || s.size() > max_length) return false;
  for (unsigned char c : s) {
    if (!std::isalnum(c) && c != '_' && c != '-') return false;
  }
  return true;
}

// Tool names: both providers define tools by names matching
// ^[a-zA-Z0-9_-]{1,64}$ (Anthropic "Tool use" docs; OpenAI "Function
// calling" docs); a call in the history names one of them.
bool IsToolName(const std::string& s) { return IsPlainId(s, 64); }

// Keys that carry one provider's reasoning: none may appear in another's
// request (the projection drops them, never turns them into text).
void CheckNoForeignKeys(const json& j, const std::set<std::string>& foreign,
                        const std::string& where, Problems* p) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (foreign.contains(it.key())) p->Add(where, "holds a '" + it.key() + "' field");
      CheckNoForeignKeys(it.value(), foreign, where + "." + it.key(), p);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      CheckNoForeignKeys(j[i], foreign, where + "[" + std::to_string(i) + "]", p);
    }
  }
}

// ---- Anthropic Messages -----------------------------------------------------
//
// https://docs.anthropic.com/en/api/messages, "Tool use" and "Extended
// thinking" guides, "Vision" (image types), and the API's own 400 answers:
//  - "messages: first message must use the \"user\" role";
//  - user and assistant alternate (the API documents that the models are
//    trained on alternating turns and merges consecutive ones itself, which
//    would break the tool_result rules below: the stricter reading);
//  - "messages.N.content.M.tool_use.id: String should match pattern
//    '^[a-zA-Z0-9_-]+$'"; no length is documented: 64 here, the longest id
//    other providers take (the stricter reading);
//  - "`tool_use` ids must be unique";
//  - "`tool_use` ids were found without `tool_result` blocks immediately
//    after: ... Each `tool_use` block must have a corresponding `tool_result`
//    block in the next message.";
//  - "Did not find N tool_result block(s) at the beginning of this message.
//    Messages following tool_use blocks must begin with a matching number of
//    tool_result blocks." (tool results first, then any other content);
//  - "unexpected `tool_use_id` found in `tool_result` blocks: ... Each
//    `tool_result` block must have a corresponding `tool_use` block in the
//    previous message.";
//  - "text content blocks must contain non-whitespace text";
//  - "final assistant content cannot end with trailing whitespace";
//  - tool_result: "content cannot be empty if `is_error` is true";
//  - images: base64 of image/jpeg, image/png, image/gif or image/webp;
//  - thinking blocks go back with their "signature" (only Anthropic's own).

const std::set<std::string> kAnthropicImageTypes = {"image/jpeg", "image/png", "image/gif",
                                                    "image/webp"};

void CheckAnthropicText(const json& text, const std::string& where, Problems* p) {
  if (!text.is_string()) {
    p->Add(where, "text is not a string");
  } else if (!HasNonWhitespace(text.get<std::string>())) {
    p->Add(where, "text content blocks must contain non-whitespace text");
  }
}

void CheckAnthropicImage(const json& b, const std::string& where, Problems* p) {
  const json source = b.value("source", json());
  if (StringAt(source, "type") != "base64") {
    p->Add(where, "image source is not base64");
    return;
  }
  if (!kAnthropicImageTypes.contains(StringAt(source, "media_type"))) {
    p->Add(where, "image media_type '" + StringAt(source, "media_type") + "' is not accepted");
  }
  if (StringAt(source, "data").empty()) p->Add(where, "image data is empty");
}

void CheckAnthropicToolResult(const json& b, const std::string& where, Problems* p) {
  if (!IsPlainId(StringAt(b, "tool_use_id"), 64)) {
    p->Add(where, "tool_use_id '" + StringAt(b, "tool_use_id") +
                      "' does not match ^[a-zA-Z0-9_-]+$ (at most 64)");
  }
  const bool is_error = b.contains("is_error") && b["is_error"] == true;
  if (b.contains("is_error") && !b["is_error"].is_boolean()) p->Add(where, "is_error not a bool");
  if (!b.contains("content")) {
    if (is_error) p->Add(where, "content cannot be empty if is_error is true");
    return;
  }
  const json& c = b["content"];
  if (c.is_string()) {
    if (is_error && c.get<std::string>().empty()) {
      p->Add(where, "content cannot be empty if is_error is true");
    }
  } else if (c.is_array()) {
    if (is_error && c.empty()) p->Add(where, "content cannot be empty if is_error is true");
    for (size_t i = 0; i < c.size(); ++i) {
      const std::string at = where + ".content[" + std::to_string(i) + "]";
      const std::string type = StringAt(c[i], "type");
      if (type == "text") {
        CheckAnthropicText(c[i].value("text", json()), at, p);
      } else if (type == "image") {
        CheckAnthropicImage(c[i], at, p);
      } else {
        p->Add(at, "a tool_result holds only text and image blocks, not '" + type + "'");
      }
    }
  } else {
    p->Add(where, "tool_result content is neither a string nor an array");
  }
}

// One block of a message of `role`; notes tool_use ids in `ids`.
void CheckAnthropicBlock(const json& b, const std::string& role, const std::string& where,
                         std::set<std::string>* ids, Problems* p) {
  const std::string type = StringAt(b, "type");
  if (type == "text") {
    CheckAnthropicText(b.value("text", json()), where, p);
  } else if (type == "image") {
    if (role != "user") p->Add(where, "an image in an assistant message");
    CheckAnthropicImage(b, where, p);
  } else if (type == "tool_use") {
    if (role != "assistant") p->Add(where, "tool_use in a user message");
    const std::string id = StringAt(b, "id");
    if (!IsPlainId(id, 64)) {
      p->Add(where, "tool_use.id '" + id + "' does not match ^[a-zA-Z0-9_-]+$ (at most 64)");
    }
    if (!ids->insert(id).second) p->Add(where, "tool_use ids must be unique: " + id);
    if (!IsToolName(StringAt(b, "name"))) {
      p->Add(where, "tool_use.name '" + StringAt(b, "name") + "' is not a tool name");
    }
    if (!b.contains("input") || !b["input"].is_object()) p->Add(where, "input is not an object");
  } else if (type == "tool_result") {
    if (role != "user") p->Add(where, "tool_result in an assistant message");
    CheckAnthropicToolResult(b, where, p);
  } else if (type == "thinking") {
    if (role != "assistant") p->Add(where, "thinking in a user message");
    if (!b.contains("thinking") || !b["thinking"].is_string()) p->Add(where, "thinking text");
    if (StringAt(b, "signature").empty()) p->Add(where, "a thinking block without its signature");
  } else if (type == "redacted_thinking") {
    if (role != "assistant") p->Add(where, "redacted_thinking in a user message");
    if (StringAt(b, "data").empty()) p->Add(where, "redacted_thinking without data");
  } else {
    p->Add(where, "unknown content block type '" + type + "'");
  }
}

// The tool_use ids of an assistant message, in order.
std::vector<std::string> ToolUseIds(const json& message) {
  std::vector<std::string> ids;
  const json& content = message["content"];
  if (!content.is_array()) return ids;
  for (const json& b : content) {
    if (StringAt(b, "type") == "tool_use") ids.push_back(StringAt(b, "id"));
  }
  return ids;
}

// A user message after `calls` (the previous assistant message's tool_use
// ids): it begins with one tool_result per call and holds no other.
void CheckAnthropicResults(const json& message, const std::vector<std::string>& calls,
                           const std::string& where, Problems* p) {
  std::set<std::string> open(calls.begin(), calls.end());
  const json& content = message["content"];
  bool leading = true;
  for (size_t i = 0; content.is_array() && i < content.size(); ++i) {
    const std::string at = where + ".content[" + std::to_string(i) + "]";
    if (StringAt(content[i], "type") != "tool_result") {
      leading = false;
      continue;
    }
    const std::string id = StringAt(content[i], "tool_use_id");
    if (!leading) p->Add(at, "a tool_result after other content: tool results must come first");
    if (open.erase(id) == 0) {
      p->Add(at, "unexpected tool_use_id " + id + ": no tool_use in the previous message");
    }
  }
  if (!open.empty()) {
    p->Add(where, "tool_use ids were found without tool_result blocks immediately after: " +
                      *open.begin() + (open.size() > 1 ? " and more" : ""));
  }
}

}  // namespace

std::vector<std::string> AnthropicRequestProblems(const json& body) {
  Problems p;
  if (!body.is_object()) {
    p.Add("body", "not an object");
    return p.Take();
  }
  if (body.contains("system") && !body["system"].is_string() && !body["system"].is_array()) {
    p.Add("system", "neither a string nor an array of text blocks");
  }
  if (!body.contains("messages") || !body["messages"].is_array()) {
    p.Add("messages", "missing or not an array");
    return p.Take();
  }
  CheckNoForeignKeys(body, {"encrypted_content", "reasoning", "tool_calls", "tool_call_id"}, "body",
                     &p);
  const json& messages = body["messages"];
  if (messages.empty()) p.Add("messages", "at least one message is required");
  std::set<std::string> tool_use_ids;
  std::vector<std::string> previous_calls;
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string where = "messages[" + std::to_string(i) + "]";
    const json& m = messages[i];
    const std::string role = StringAt(m, "role");
    if (role != "user" && role != "assistant") {
      p.Add(where, "role '" + role + "' is neither user nor assistant");
      continue;
    }
    if (i == 0 && role != "user") p.Add(where, "first message must use the \"user\" role");
    if (i > 0 && StringAt(messages[i - 1], "role") == role) {
      p.Add(where, "two " + role + " messages in a row: roles must alternate");
    }
    const json content = m.value("content", json());
    if (content.is_string()) {
      if (!HasNonWhitespace(content.get<std::string>())) {
        p.Add(where, "text content must contain non-whitespace text");
      }
    } else if (content.is_array()) {
      if (content.empty()) p.Add(where, "content is an empty array");
      for (size_t k = 0; k < content.size(); ++k) {
        CheckAnthropicBlock(content[k], role, where + ".content[" + std::to_string(k) + "]",
                            &tool_use_ids, &p);
      }
    } else {
      p.Add(where, "content is neither a string nor an array");
    }
    if (role == "user") {
      CheckAnthropicResults(m, previous_calls, where, &p);
      previous_calls.clear();
    } else {
      previous_calls = ToolUseIds(m);
    }
  }
  if (!previous_calls.empty()) {
    p.Add("messages", "tool_use ids were found without tool_result blocks immediately after: " +
                          previous_calls.front());
  }
  if (!messages.empty() && StringAt(messages.back(), "role") == "assistant") {
    const json& content = messages.back()["content"];
    std::string last_text;
    if (content.is_string()) last_text = content.get<std::string>();
    if (content.is_array() && !content.empty() && StringAt(content.back(), "type") == "text") {
      last_text = StringAt(content.back(), "text");
    }
    if (!last_text.empty() && std::isspace(static_cast<unsigned char>(last_text.back()))) {
      p.Add("messages", "final assistant content cannot end with trailing whitespace");
    }
  }
  return p.Take();
}

// ---- OpenAI Chat Completions --------------------------------------------------
//
// https://platform.openai.com/docs/api-reference/chat/create and the
// "Function calling" guide, and the API's 400 answers:
//  - messages is a non-empty array of system/developer, user, assistant and
//    tool messages;
//  - assistant content "Required unless tool_calls or function_call is
//    specified";
//  - "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a
//    string with maximum length 40";
//  - "An assistant message with 'tool_calls' must be followed by tool messages
//    responding to each 'tool_call_id'. The following tool_call_ids did not
//    have response messages: ...";
//  - "Invalid parameter: messages with role 'tool' must be a response to a
//    preceeding message with 'tool_calls'.";
//  - no reasoning fields: Chat Completions takes none back.

namespace {

void CheckChatTextContent(const json& content, const std::string& where, bool allow_images,
                          Problems* p) {
  if (content.is_string()) return;
  if (!content.is_array() || content.empty()) {
    p->Add(where, "content is neither a string nor a non-empty array of parts");
    return;
  }
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string at = where + ".content[" + std::to_string(i) + "]";
    const std::string type = StringAt(content[i], "type");
    if (type == "text") {
      if (!IsString(content[i], "text")) p->Add(at, "text is not a string");
    } else if (type == "image_url" && allow_images) {
      const std::string url = StringAt(content[i].value("image_url", json()), "url");
      if (url.rfind("data:image/", 0) != 0 && url.rfind("https://", 0) != 0 &&
          url.rfind("http://", 0) != 0) {
        p->Add(at, "image_url.url is neither a data URI nor a URL");
      }
    } else {
      p->Add(at, "part type '" + type + "' is not accepted here");
    }
  }
}

}  // namespace

std::vector<std::string> OpenAiChatRequestProblems(const json& body) {
  Problems p;
  if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array()) {
    p.Add("body", "no messages array");
    return p.Take();
  }
  CheckNoForeignKeys(body, {"signature", "encrypted_content", "thinking", "reasoning_content"},
                     "body", &p);
  const json& messages = body["messages"];
  if (messages.empty()) p.Add("messages", "at least one message is required");
  std::set<std::string> all_ids;
  std::set<std::string> awaited;  // calls of the last assistant message not yet answered
  bool in_answers = false;        // right after an assistant message with tool_calls
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string where = "messages[" + std::to_string(i) + "]";
    const json& m = messages[i];
    const std::string role = StringAt(m, "role");
    if (role != "tool" && !awaited.empty()) {
      p.Add(where,
            "an assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'; not answered: " +
                *awaited.begin());
      awaited.clear();
    }
    if (role != "tool") in_answers = false;
    if (role == "system" || role == "developer") {
      CheckChatTextContent(m.value("content", json()), where, /*allow_images=*/false, &p);
    } else if (role == "user") {
      CheckChatTextContent(m.value("content", json()), where, /*allow_images=*/true, &p);
    } else if (role == "assistant") {
      const json content = m.value("content", json());
      const json calls = m.value("tool_calls", json());
      const bool has_calls = calls.is_array() && !calls.empty();
      if (content.is_null() && !has_calls) {
        p.Add(where, "content is required unless tool_calls is specified");
      } else if (!content.is_null()) {
        CheckChatTextContent(content, where, /*allow_images=*/false, &p);
      }
      if (m.contains("tool_calls") && !has_calls) p.Add(where, "tool_calls is empty");
      for (size_t k = 0; has_calls && k < calls.size(); ++k) {
        const std::string at = where + ".tool_calls[" + std::to_string(k) + "]";
        const std::string id = StringAt(calls[k], "id");
        if (id.empty() || id.size() > 40) {
          p.Add(at, "id '" + id + "' is empty or longer than 40");
        }
        if (!all_ids.insert(id).second) p.Add(at, "tool call id used twice: " + id);
        if (StringAt(calls[k], "type") != "function") p.Add(at, "type is not function");
        const json fn = calls[k].value("function", json());
        if (!IsToolName(StringAt(fn, "name"))) {
          p.Add(at, "function.name '" + StringAt(fn, "name") + "' is not a function name");
        }
        if (!IsString(fn, "arguments")) p.Add(at, "function.arguments is not a string");
        awaited.insert(id);
      }
      in_answers = has_calls;
    } else if (role == "tool") {
      const std::string id = StringAt(m, "tool_call_id");
      if (!in_answers) {
        p.Add(where,
              "messages with role 'tool' must be a response to a preceding message "
              "with 'tool_calls'");
      } else if (awaited.erase(id) == 0) {
        p.Add(where, "tool_call_id " + id + " answers no open call of the assistant before it");
      }
      CheckChatTextContent(m.value("content", json()), where, /*allow_images=*/false, &p);
    } else {
      p.Add(where, "unknown role '" + role + "'");
    }
  }
  if (!awaited.empty()) {
    p.Add("messages", "tool_call_ids did not have response messages: " + *awaited.begin());
  }
  return p.Take();
}

// ---- OpenAI Responses -------------------------------------------------------------
//
// https://platform.openai.com/docs/api-reference/responses/create (input
// items), the "Function calling" and "Reasoning" guides, and the API's 400
// answers:
//  - "Invalid 'input[95].call_id': string too long. Expected a string with
//    maximum length 64"; "... empty string. Expected a string with minimum
//    length 1";
//  - "No tool output found for function call call_..." (stateless requests);
//  - "No tool call found for function call output with call_id ...";
//  - "Item 'rs_...' of type 'reasoning' was provided without its required
//    following item." (an assistant message or a function call);
//  - a reasoning item goes back with its encrypted_content (store: false);
//    its id may be left out, as Codex does;
//  - message content: input_text / input_image for user, system and
//    developer; output_text / refusal for assistant.

std::vector<std::string> OpenAiResponsesRequestProblems(const json& body) {
  Problems p;
  if (!body.is_object() || !body.contains("input") || !body["input"].is_array()) {
    p.Add("body", "no input array");
    return p.Take();
  }
  CheckNoForeignKeys(body, {"signature", "thinking", "tool_use_id", "tool_calls"}, "body", &p);
  const json& input = body["input"];
  if (input.empty()) p.Add("input", "at least one item is required");
  std::set<std::string> calls;
  std::set<std::string> answered;
  for (size_t i = 0; i < input.size(); ++i) {
    const std::string where = "input[" + std::to_string(i) + "]";
    const json& item = input[i];
    const std::string type = StringAt(item, "type");
    if (type == "message") {
      const std::string role = StringAt(item, "role");
      const bool assistant = role == "assistant";
      if (!assistant && role != "user" && role != "system" && role != "developer") {
        p.Add(where, "unknown role '" + role + "'");
      }
      const json content = item.value("content", json());
      if (!content.is_array() || content.empty()) {
        p.Add(where, "content is not a non-empty array");
        continue;
      }
      for (size_t k = 0; k < content.size(); ++k) {
        const std::string at = where + ".content[" + std::to_string(k) + "]";
        const std::string part = StringAt(content[k], "type");
        if (assistant ? (part != "output_text" && part != "refusal")
                      : (part != "input_text" && part != "input_image")) {
          p.Add(at, "part type '" + part + "' in a " + role + " message");
        }
        if (part == "input_image" && StringAt(content[k], "image_url").empty()) {
          p.Add(at, "input_image without image_url");
        }
        if ((part == "input_text" || part == "output_text") && !IsString(content[k], "text")) {
          p.Add(at, "text is not a string");
        }
      }
    } else if (type == "function_call") {
      const std::string id = StringAt(item, "call_id");
      if (id.empty() || id.size() > 64) p.Add(where, "call_id '" + id + "' empty or over 64");
      if (!calls.insert(id).second) p.Add(where, "call_id used twice: " + id);
      if (!IsToolName(StringAt(item, "name"))) {
        p.Add(where, "name '" + StringAt(item, "name") + "' is not a function name");
      }
      if (!IsString(item, "arguments")) p.Add(where, "arguments is not a string");
    } else if (type == "function_call_output") {
      const std::string id = StringAt(item, "call_id");
      if (!calls.contains(id)) {
        p.Add(where, "no tool call found for function call output with call_id " + id);
      } else if (!answered.insert(id).second) {
        p.Add(where, "a second output for call_id " + id);
      }
      if (!IsString(item, "output")) p.Add(where, "output is not a string");
    } else if (type == "reasoning") {
      if (StringAt(item, "encrypted_content").empty()) {
        p.Add(where, "a reasoning item without its encrypted_content");
      }
      if (!item.contains("summary") || !item["summary"].is_array()) {
        p.Add(where, "a reasoning item without a summary array");
      }
      const json next = i + 1 < input.size() ? input[i + 1] : json();
      const std::string next_type = StringAt(next, "type");
      const bool followed = next_type == "function_call" || next_type == "reasoning" ||
                            (next_type == "message" && StringAt(next, "role") == "assistant");
      if (!followed) p.Add(where, "reasoning provided without its required following item");
    } else {
      p.Add(where, "unknown item type '" + type + "'");
    }
  }
  for (const std::string& id : calls) {
    if (!answered.contains(id)) p.Add("input", "no tool output found for function call " + id);
  }
  return p.Take();
}

std::vector<std::string> RequestProblems(ProviderFormat format, std::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return {"body: not JSON"};
  switch (format) {
    case ProviderFormat::kAnthropic:
      return AnthropicRequestProblems(parsed);
    case ProviderFormat::kOpenAiChat:
      return OpenAiChatRequestProblems(parsed);
    case ProviderFormat::kOpenAiResponses:
      return OpenAiResponsesRequestProblems(parsed);
  }
  return {"unknown format"};
}

bool IsEmptyConversation(ProviderFormat format, std::string_view body) {
  json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  const char* key = format == ProviderFormat::kOpenAiResponses ? "input" : "messages";
  return parsed.is_object() && parsed.contains(key) && parsed[key].is_array() &&
         parsed[key].empty();
}

}  // namespace sessiondb::testing
