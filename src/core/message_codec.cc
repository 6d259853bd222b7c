#include "core/message_codec.h"

#include <nlohmann/json.hpp>

#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/json_writer.h"

namespace sessiondb {
namespace {

using nlohmann::json;

bool IsSimpleText(const Message& m) {
  return m.parts.size() == 1 && m.parts[0].type == PartType::kText && m.files.empty() &&
         m.files_modified.empty() && m.edit_results_json.empty() && m.model.empty() &&
         m.provider.empty() && !m.usage.has_value() && m.metadata_json.empty() && !m.pruned;
}

// Members in nlohmann's order (sorted by name), so stored bytes never
// depend on which encoder wrote them.
void WriteResource(JsonWriter& w, const Resource& r) {
  w.BeginObject();
  if (!r.content_sha256.empty()) w.Key("content_sha256").String(r.content_sha256);
  if (r.height != 0) w.Key("height").Int(r.height);
  if (!r.mime.empty()) w.Key("mime").String(r.mime);
  if (!r.name.empty()) w.Key("name").String(r.name);
  if (!r.not_stored.empty()) w.Key("not_stored").String(r.not_stored);
  w.Key("origin").String(OriginName(r.origin));
  if (!r.resource_id.empty()) w.Key("resource_id").String(r.resource_id);
  if (r.size != 0) w.Key("size").Int(r.size);
  if (!r.uri.empty()) w.Key("uri").String(r.uri);
  if (r.width != 0) w.Key("width").Int(r.width);
  w.EndObject();
}

Result<Resource> DecodeResource(const json& j) {
  Resource r;
  r.resource_id = MemberOr(j, "resource_id", "");
  r.content_sha256 = MemberOr(j, "content_sha256", "");
  r.mime = MemberOr(j, "mime", "");
  r.size = MemberOr(j, "size", int64_t{0});
  r.width = MemberOr(j, "width", 0);
  r.height = MemberOr(j, "height", 0);
  auto origin = ParseOrigin(MemberOr(j, "origin", "inline"));
  if (!origin) return Err(Status::Corruption("resource: " + origin.error().message()));
  r.origin = *origin;
  r.name = MemberOr(j, "name", "");
  r.uri = MemberOr(j, "uri", "");
  r.not_stored = MemberOr(j, "not_stored", "");
  return r;
}

Result<json> ParseJsonField(std::string_view text, std::string_view what, json::value_t expected) {
  Result<json> parsed = ParseJson(text, kMaxJsonValueDepth);
  if (!parsed) {
    return Err(Status::InvalidArgument(
        std::string(what) + (IsJsonNestingError(parsed.error()) ? ": " : " is not valid JSON: ") +
        parsed.error().message()));
  }
  json& j = *parsed;
  if (expected == json::value_t::object && !j.is_object()) {
    return Err(Status::InvalidArgument(std::string(what) + " must be a JSON object"));
  }
  if (expected == json::value_t::array && !j.is_array()) {
    return Err(Status::InvalidArgument(std::string(what) + " must be a JSON array"));
  }
  return j;
}

Status WritePart(JsonWriter& w, const Part& p, size_t index) {
  w.BeginObject();
  switch (p.type) {
    case PartType::kText:
      w.Key("text").String(p.text);
      break;
    case PartType::kReasoning:
      if (!p.signature.empty()) w.Key("signature").String(p.signature);
      w.Key("text").String(p.text);
      break;
    case PartType::kImage:
    case PartType::kFile:
    case PartType::kResourceLink:
      if (!p.resource) {
        return Status::Internal("part " + std::to_string(index + 1) +
                                " has no stored resource to encode");
      }
      w.Key("resource");
      WriteResource(w, *p.resource);
      break;
    case PartType::kToolCall: {
      // Kept as the exact text the model produced: providers cache prompts by
      // bytes, so a re-serialised copy could cost a cache miss on every turn.
      const std::string_view args =
          p.arguments_json.empty() ? std::string_view("{}") : std::string_view(p.arguments_json);
      RETURN_IF_ERROR(ParseJsonField(args,
                                     "tool_call arguments of part " + std::to_string(index + 1),
                                     json::value_t::discarded));
      w.Key("arguments").String(args).Key("id").String(p.tool_call_id);
      w.Key("name").String(p.tool_name);
      break;
    }
    case PartType::kToolResult:
      if (p.is_error) w.Key("is_error").Bool(true);
      w.Key("output").String(p.text).Key("tool_call_id").String(p.tool_call_id);
      break;
  }
  w.Key("type").String(PartTypeName(p.type));
  w.EndObject();
  return Status::Ok();
}

Result<Part> DecodePart(const json& j) {
  Part p;
  ASSIGN_OR_RETURN(p.type, ParsePartType(MemberOr(j, "type", "")));
  switch (p.type) {
    case PartType::kText:
      p.text = MemberOr(j, "text", "");
      break;
    case PartType::kReasoning:
      p.text = MemberOr(j, "text", "");
      p.signature = MemberOr(j, "signature", "");
      break;
    case PartType::kImage:
    case PartType::kFile:
    case PartType::kResourceLink: {
      auto it = j.find("resource");
      if (it == j.end() || !it->is_object()) {
        return Err(Status::Corruption("a stored " + std::string(PartTypeName(p.type)) +
                                      " part has no resource descriptor"));
      }
      ASSIGN_OR_RETURN(Resource r, DecodeResource(*it));
      p.resource = std::move(r);
      break;
    }
    case PartType::kToolCall:
      p.tool_call_id = MemberOr(j, "id", "");
      p.tool_name = MemberOr(j, "name", "");
      if (auto it = j.find("arguments"); it == j.end()) {
        p.arguments_json = "{}";
      } else {
        p.arguments_json = it->is_string() ? it->get<std::string>() : it->dump();
      }
      break;
    case PartType::kToolResult:
      p.tool_call_id = MemberOr(j, "tool_call_id", "");
      p.text = MemberOr(j, "output", "");
      p.is_error = MemberOr(j, "is_error", false);
      break;
  }
  return p;
}

std::vector<std::string> StringList(const json& body, const char* key) {
  std::vector<std::string> out;
  auto it = body.find(key);
  if (it == body.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

void WriteStrings(JsonWriter& w, const std::vector<std::string>& list) {
  w.BeginArray();
  for (const std::string& item : list) w.String(item);
  w.EndArray();
}

// Members sorted by name, as nlohmann (which wrote bodies first) orders them.
Result<std::optional<std::string>> EncodeBody(const Message& m) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  if (!m.edit_results_json.empty()) {
    ASSIGN_OR_RETURN(json edits,
                     ParseJsonField(m.edit_results_json, "edit_results", json::value_t::array));
    w.Key("edit_results").Raw(edits.dump());
  }
  if (!m.files.empty()) WriteStrings(w.Key("files"), m.files);
  if (!m.files_modified.empty()) WriteStrings(w.Key("files_modified"), m.files_modified);
  if (!m.metadata_json.empty()) {
    ASSIGN_OR_RETURN(json metadata,
                     ParseJsonField(m.metadata_json, "message metadata", json::value_t::object));
    w.Key("metadata").Raw(metadata.dump());
  }
  if (!m.model.empty()) w.Key("model").String(m.model);
  w.Key("parts").BeginArray();
  for (size_t i = 0; i < m.parts.size(); ++i) RETURN_IF_ERROR(WritePart(w, m.parts[i], i));
  w.EndArray();
  if (!m.provider.empty()) w.Key("provider").String(m.provider);
  if (m.pruned) w.Key("pruned").Bool(true);
  if (m.usage) {
    w.Key("usage").BeginObject();
    // Written only when set: bodies stored before it existed stay byte-equal.
    if (m.usage->cache_write_tokens != 0)
      w.Key("cache_write_tokens").Int(m.usage->cache_write_tokens);
    w.Key("cached_tokens").Int(m.usage->cached_tokens);
    w.Key("input_tokens").Int(m.usage->input_tokens);
    w.Key("output_tokens").Int(m.usage->output_tokens);
    w.Key("reasoning_tokens").Int(m.usage->reasoning_tokens);
    w.EndObject();
  }
  w.Key("v").Int(kMessageBodyVersion);
  w.EndObject();
  if (!w.ok()) return Err(Status::InvalidArgument("message cannot be encoded: text is not UTF-8"));
  return std::optional<std::string>(std::move(out));
}

Status DecodeBody(std::string_view text, Message* m) {
  json body = ParseJson(text).value_or(json());
  if (!body.is_object()) {
    return Status::Corruption("message " + m->id + " has a body that is not a JSON object");
  }
  int version = MemberOr(body, "v", 0);
  if (version > kMessageBodyVersion) {
    return Status::FailedPrecondition("message " + m->id + " uses body format version " +
                                      std::to_string(version) + "; this build reads up to " +
                                      std::to_string(kMessageBodyVersion) + ". Upgrade sessiondb.");
  }
  m->parts.clear();
  auto parts = body.find("parts");
  if (parts != body.end() && parts->is_array()) {
    for (const json& pj : *parts) {
      auto part = DecodePart(pj);
      if (!part) return Status::Corruption("message " + m->id + ": " + part.error().message());
      m->parts.push_back(std::move(*part));
    }
  }
  m->files = StringList(body, "files");
  m->files_modified = StringList(body, "files_modified");
  if (auto it = body.find("edit_results"); it != body.end()) m->edit_results_json = it->dump();
  m->model = MemberOr(body, "model", "");
  m->provider = MemberOr(body, "provider", "");
  m->pruned = MemberOr(body, "pruned", false);
  if (auto it = body.find("usage"); it != body.end() && it->is_object()) {
    Usage u;
    u.input_tokens = MemberOr(*it, "input_tokens", int64_t{0});
    u.output_tokens = MemberOr(*it, "output_tokens", int64_t{0});
    u.cached_tokens = MemberOr(*it, "cached_tokens", int64_t{0});
    u.reasoning_tokens = MemberOr(*it, "reasoning_tokens", int64_t{0});
    u.cache_write_tokens = MemberOr(*it, "cache_write_tokens", int64_t{0});
    m->usage = u;
  }
  if (auto it = body.find("metadata"); it != body.end()) m->metadata_json = it->dump();
  return Status::Ok();
}

}  // namespace

Result<std::optional<std::string>> EncodeMessageBody(const Message& message) {
  if (IsSimpleText(message)) return std::optional<std::string>();
  // nlohmann throws on invalid UTF-8 while dumping; callers validate text
  // first, but a library that throws is still fenced here.
  try {
    return EncodeBody(message);
  } catch (const json::exception& e) {
    return Err(Status::InvalidArgument(std::string("message cannot be encoded: ") + e.what()));
  }
}

Status DecodeMessageBody(const std::optional<std::string_view>& body, std::string_view text,
                         Message* message) {
  if (!body) {
    message->parts.clear();
    message->parts.emplace_back().text.assign(text);
    return Status::Ok();
  }
  try {
    return DecodeBody(*body, message);
  } catch (const json::exception& e) {
    return Status::Corruption("message " + message->id + " has a malformed body: " + e.what());
  }
}

Result<std::string> CanonicalJsonObject(std::string_view text, std::string_view what) {
  if (text.empty()) return std::string("{}");
  ASSIGN_OR_RETURN(json object, ParseJsonField(text, what, json::value_t::object));
  try {
    return object.dump();
  } catch (const json::exception& e) {
    return Err(Status::InvalidArgument(std::string(what) + " cannot be encoded: " + e.what()));
  }
}

std::string ResourceToJson(const Resource& resource) {
  std::string out;
  JsonWriter w(&out);
  WriteResource(w, resource);
  return out;
}

Result<Resource> ResourceFromJson(std::string_view text) {
  json j = ParseJson(text).value_or(json());
  if (!j.is_object()) return Err(Status::Corruption("a resource descriptor is not a JSON object"));
  return DecodeResource(j);
}

}  // namespace sessiondb
