#include "cli/cli_context.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "core/message_codec.h"

namespace sessiondb::cli {

using nlohmann::json;

int ExitCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      return kExitInvalidArgument;
    case StatusCode::kNotFound:
      return kExitNotFound;
    case StatusCode::kAlreadyExists:
      return kExitAlreadyExists;
    case StatusCode::kBusy:
      return kExitBusy;
    case StatusCode::kFailedPrecondition:
      return kExitFailedPrecondition;
    case StatusCode::kCorruption:
    case StatusCode::kIo:
    case StatusCode::kInternal:
      return kExitStorageError;
  }
  return kExitStorageError;
}

std::string CliContext::StorePath() const {
  if (!options.store.empty()) return options.store;
  if (const char* env = std::getenv("SESSIONDB_STORE"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/sessiondb";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/sessiondb";
}

Store* CliContext::OpenStore(bool create_if_missing) {
  if (store_) return store_.get();
  StoreOptions o;
  o.durability = options.fast ? Durability::kProcessCrashSafe : Durability::kDurable;
  o.create_if_missing = create_if_missing;
  if (options.max_image_bytes > 0) o.max_image_bytes = options.max_image_bytes;
  if (options.max_images >= 0) o.max_images_per_message = options.max_images;
  auto opened = Store::Open(StorePath(), o);
  if (!opened) {
    Fail(opened.error());
    return nullptr;
  }
  store_ = std::move(*opened);
  return store_.get();
}

void CliContext::Fail(const Status& status) {
  exit_code = ExitCodeFor(status.code());
  if (options.json) {
    PrintJson(
        {{"error",
          {{"code", std::string(StatusCodeName(status.code()))}, {"message", status.message()}}}});
  } else {
    std::cerr << "sessiondb: error: " << status.message() << "\n";
  }
}

void CliContext::PrintJson(const json& value) const { std::cout << value.dump(2) << "\n"; }

json ToJson(const Session& s) {
  json meta = json::parse(s.metadata_json.empty() ? "{}" : s.metadata_json, nullptr, false);
  return {{"id", s.id},
          {"title", s.title},
          {"preview", s.preview},
          {"created_ms", s.created_ms},
          {"updated_ms", s.updated_ms},
          {"message_count", s.message_count},
          {"last_seq", s.last_seq},
          {"archived", s.archived},
          {"metadata", meta.is_discarded() ? json::object() : meta}};
}

json ToJson(const Resource& r) {
  // The stored descriptor, as the log keeps it, plus what reading found out.
  json j = json::parse(ResourceToJson(r));
  if (r.missing) j["missing"] = true;
  return j;
}

json ToJson(const Part& p) {
  json j = {{"type", std::string(PartTypeName(p.type))}};
  switch (p.type) {
    case PartType::kText:
    case PartType::kReasoning:
      j["text"] = p.text;
      break;
    case PartType::kImage:
    case PartType::kFile:
    case PartType::kResourceLink:
      if (p.resource) j["resource"] = ToJson(*p.resource);
      break;
    case PartType::kToolCall:
      j["tool_call_id"] = p.tool_call_id;
      j["tool_name"] = p.tool_name;
      j["arguments_json"] = p.arguments_json;
      break;
    case PartType::kToolResult:
      j["tool_call_id"] = p.tool_call_id;
      j["text"] = p.text;
      j["is_error"] = p.is_error;
      break;
  }
  return j;
}

json ToJson(const Message& m) {
  json parts = json::array();
  for (const Part& p : m.parts) parts.push_back(ToJson(p));
  json j = {{"id", m.id},
            {"session_id", m.session_id},
            {"seq", m.seq},
            {"ts_ms", m.ts_ms},
            {"role", std::string(RoleName(m.role))},
            {"parts", parts}};
  if (!m.files.empty()) j["files"] = m.files;
  if (!m.files_modified.empty()) j["files_modified"] = m.files_modified;
  if (!m.edit_results_json.empty())
    j["edit_results"] = json::parse(m.edit_results_json, nullptr, false);
  if (!m.model.empty()) j["model"] = m.model;
  if (m.usage) {
    j["usage"] = {{"input_tokens", m.usage->input_tokens},
                  {"output_tokens", m.usage->output_tokens},
                  {"cached_tokens", m.usage->cached_tokens},
                  {"reasoning_tokens", m.usage->reasoning_tokens}};
  }
  if (!m.metadata_json.empty()) j["metadata"] = json::parse(m.metadata_json, nullptr, false);
  return j;
}

json ToJson(const AppendResult& r) {
  json resources = json::array();
  for (const Resource& res : r.resources) resources.push_back(ToJson(res));
  return {
      {"message_id", r.message_id}, {"seq", r.seq}, {"ts_ms", r.ts_ms}, {"resources", resources}};
}

std::string FormatTime(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm);
  return buf;
}

}  // namespace sessiondb::cli
