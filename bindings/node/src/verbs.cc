#include "verbs.h"

#include "api/json_fields.h"

namespace sessiondb::node {

const Verb* FindVerb(std::string_view name) {
  static const VerbTable table = [] {
    VerbTable t;
    AddSessionVerbs(t);
    AddHarnessVerbs(t);
    AddSearchVerbs(t);
    AddForgetAndInteropVerbs(t);
    return t;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

Result<Message> MessageArg(const Json& message, const Attachments& attachments) {
  return MessageFromJson(message, {.attachments = &attachments, .allow_paths = true});
}

Result<std::string> RequiredString(const Json& args, const char* key) {
  ASSIGN_OR_RETURN(std::string value, StringField(args, key));
  if (value.empty()) return Err(Status::InvalidArgument(std::string(key) + " is required"));
  return value;
}

Result<ArchiveFilter> ArchiveFilterArg(const Json& args, const char* key, ArchiveFilter fallback) {
  ASSIGN_OR_RETURN(std::string name, StringField(args, key));
  if (name.empty()) return fallback;
  if (name == "active") return ArchiveFilter::kActive;
  if (name == "archived") return ArchiveFilter::kArchived;
  if (name == "all") return ArchiveFilter::kAll;
  return Err(Status::InvalidArgument(std::string(key) + " is '" + name +
                                     "'; expected one of: active, archived, all"));
}

}  // namespace sessiondb::node
