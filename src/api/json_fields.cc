#include "api/json_fields.h"

namespace sessiondb {

Status WrongType(std::string_view key, std::string_view want) {
  return Status::InvalidArgument("\"" + std::string(key) + "\" must be " + std::string(want));
}

Result<std::string> StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return Err(WrongType(key, "a string"));
  return it->get<std::string>();
}

Result<int64_t> IntField(const Json& object, const char* key, int64_t fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) return Err(WrongType(key, "an integer"));
  return it->get<int64_t>();
}

Result<bool> BoolField(const Json& object, const char* key, bool fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return Err(WrongType(key, "true or false"));
  return it->get<bool>();
}

Result<std::vector<std::string>> StringListField(const Json& object, const char* key) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return out;
  if (!it->is_array()) return Err(WrongType(key, "a list of strings"));
  out.reserve(it->size());
  for (const Json& v : *it) {
    if (!v.is_string()) return Err(WrongType(key, "a list of strings"));
    out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace sessiondb
