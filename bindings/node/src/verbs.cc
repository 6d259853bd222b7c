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

Reply MessagesReply(const std::vector<Message>& messages) {
  Reply reply;
  reply.text.reserve(messages.size() * 700);
  reply.text += '[';
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) reply.text += ',';
    if (!AppendJsonText(messages[i], &reply.text)) {
      // Not UTF-8 somewhere (a damaged row): the tree, with U+FFFD for the bad bytes.
      reply.text += ToJson(messages[i]).dump(-1, ' ', false, Json::error_handler_t::replace);
    }
  }
  reply.text += ']';
  return reply;
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
