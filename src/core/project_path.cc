#include "core/project_path.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/json_parse.h"

namespace sessiondb {

std::string NormalProjectPath(std::string_view path) {
  if (path.empty()) return "";
  std::string normal = std::filesystem::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

Result<std::string> WithNormalProject(std::string_view metadata) {
  using json = nlohmann::json;
  Result<json> parsed = ParseJson(metadata);
  if (!parsed || !parsed->is_object()) {
    return Err(Status::InvalidArgument("session metadata is not a JSON object"));
  }
  json& object = *parsed;
  auto string_member = [&](const char* key) -> const std::string* {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  std::string project;
  if (const std::string* given = string_member("project")) {
    project = NormalProjectPath(*given);
    if (project == *given) return std::string(metadata);
  } else if (const std::string* cwd = string_member("cwd"); cwd != nullptr && !cwd->empty()) {
    project = NormalProjectPath(*cwd);
  } else {
    return std::string(metadata);
  }
  object["project"] = project;
  return object.dump();
}

}  // namespace sessiondb
