#include "api/message_json.h"

#include <string>

#include "api/json_fields.h"

namespace sessiondb {

namespace {

Status PartError(size_t index, const std::string& what) {
  return Status::InvalidArgument("parts[" + std::to_string(index) + "]: " + what);
}

// The image or file of part `index`: its data URI, the attachment it names,
// or (where allowed) its path.
Result<Part> AttachmentPart(const Json& p, size_t index, PartType type,
                            const MessageJsonOptions& options) {
  ASSIGN_OR_RETURN(std::string data_uri, StringField(p, "data_uri"));
  ASSIGN_OR_RETURN(std::string upload, StringField(p, "upload"));
  ASSIGN_OR_RETURN(std::string path, StringField(p, "path"));
  ASSIGN_OR_RETURN(std::string name, StringField(p, "name"));
  ASSIGN_OR_RETURN(std::string mime, StringField(p, "mime"));
  if (int(!data_uri.empty()) + int(!upload.empty()) + int(!path.empty()) > 1) {
    return Err(PartError(index, "give one of \"data_uri\", \"upload\" and \"path\""));
  }
  if (!path.empty()) {
    if (!options.allow_paths) {
      return Err(PartError(index,
                           "\"path\" is not accepted here (it would name a file of the server); "
                           "send the bytes as \"data_uri\" or \"upload\""));
    }
    Part part = type == PartType::kImage ? Part::ImageFromFile(std::move(path))
                                         : Part::FileFromFile(std::move(path));
    if (!name.empty()) part.source->name = name;
    return part;
  }
  if (!data_uri.empty()) {
    Part part = type == PartType::kImage ? Part::ImageFromDataUri(std::move(data_uri))
                                         : Part::FileFromDataUri(std::move(data_uri));
    part.source->name = name;
    return part;
  }
  if (upload.empty()) {
    return Err(PartError(index,
                         "an image or file part needs \"data_uri\" (data:<mime>;base64,...) "
                         "or, in a multipart request, \"upload\" naming a form field"));
  }
  if (!options.attachments) {
    return Err(PartError(
        index, "\"upload\" needs a multipart/form-data request holding field '" + upload + "'"));
  }
  auto it = options.attachments->find(upload);
  if (it == options.attachments->end()) {
    return Err(PartError(index, "no uploaded form field named '" + upload + "'"));
  }
  const Attachment& file = it->second;
  if (name.empty()) name = file.filename;
  if (mime.empty()) mime = file.content_type;
  return type == PartType::kImage ? Part::ImageFromBytes(file.content, mime, name)
                                  : Part::FileFromBytes(file.content, mime, name);
}

Result<Part> PartFromJson(const Json& p, size_t index, const MessageJsonOptions& options) {
  if (!p.is_object()) return Err(PartError(index, "a part must be an object"));
  ASSIGN_OR_RETURN(std::string type_name, StringField(p, "type"));
  auto type = ParsePartType(type_name);
  if (!type) return Err(PartError(index, type.error().message()));
  ASSIGN_OR_RETURN(std::string text, StringField(p, "text"));
  switch (*type) {
    case PartType::kText:
      return Part::Text(std::move(text));
    case PartType::kReasoning: {
      ASSIGN_OR_RETURN(std::string signature, StringField(p, "signature"));
      return Part::Reasoning(std::move(text), std::move(signature));
    }
    case PartType::kImage:
    case PartType::kFile:
      return AttachmentPart(p, index, *type, options);
    case PartType::kResourceLink: {
      ASSIGN_OR_RETURN(std::string uri, StringField(p, "uri"));
      ASSIGN_OR_RETURN(std::string name, StringField(p, "name"));
      ASSIGN_OR_RETURN(std::string mime, StringField(p, "mime"));
      ASSIGN_OR_RETURN(int64_t size, IntField(p, "size", 0));
      if (uri.empty()) return Err(PartError(index, "a resource_link needs \"uri\""));
      return Part::Link(std::move(uri), std::move(name), std::move(mime), size);
    }
    case PartType::kToolCall: {
      ASSIGN_OR_RETURN(std::string id, StringField(p, "tool_call_id"));
      ASSIGN_OR_RETURN(std::string name, StringField(p, "tool_name"));
      std::string arguments = "{}";
      if (auto a = p.find("arguments"); a != p.end() && !a->is_null()) arguments = a->dump();
      return Part::ToolCall(std::move(id), std::move(name), std::move(arguments));
    }
    case PartType::kToolResult: {
      ASSIGN_OR_RETURN(std::string id, StringField(p, "tool_call_id"));
      bool is_error = false;
      if (auto e = p.find("is_error"); e != p.end() && !e->is_null()) {
        if (!e->is_boolean()) return Err(PartError(index, "\"is_error\" must be true or false"));
        is_error = e->get<bool>();
      }
      return Part::ToolResult(std::move(id), std::move(text), is_error);
    }
  }
  return Err(PartError(index, "unsupported part type"));
}

}  // namespace

Result<Message> MessageFromJson(const Json& j, const MessageJsonOptions& options) {
  if (!j.is_object()) return Err(Status::InvalidArgument("a message must be a JSON object"));
  Message m;
  ASSIGN_OR_RETURN(std::string role, StringField(j, "role"));
  if (role.empty())
    return Err(
        Status::InvalidArgument("a message needs \"role\" (user, assistant, system or tool)"));
  ASSIGN_OR_RETURN(m.role, ParseRole(role));
  auto parts = j.find("parts");
  if (parts == j.end() || !parts->is_array()) {
    return Err(
        Status::InvalidArgument("a message needs \"parts\", a list such as "
                                "[{\"type\":\"text\",\"text\":\"hello\"}]"));
  }
  for (size_t i = 0; i < parts->size(); ++i) {
    ASSIGN_OR_RETURN(Part part, PartFromJson((*parts)[i], i, options));
    m.parts.push_back(std::move(part));
  }
  ASSIGN_OR_RETURN(m.id, StringField(j, "id"));
  ASSIGN_OR_RETURN(m.model, StringField(j, "model"));
  ASSIGN_OR_RETURN(m.provider, StringField(j, "provider"));
  ASSIGN_OR_RETURN(m.files, StringListField(j, "files"));
  ASSIGN_OR_RETURN(m.files_modified, StringListField(j, "files_modified"));
  if (auto e = j.find("edit_results"); e != j.end() && !e->is_null()) {
    if (!e->is_array()) return Err(Status::InvalidArgument("\"edit_results\" must be a list"));
    m.edit_results_json = e->dump();
  }
  if (auto md = j.find("metadata"); md != j.end() && !md->is_null()) {
    if (!md->is_object()) return Err(Status::InvalidArgument("\"metadata\" must be an object"));
    m.metadata_json = md->dump();
  }
  if (auto u = j.find("usage"); u != j.end() && !u->is_null()) {
    if (!u->is_object()) return Err(Status::InvalidArgument("\"usage\" must be an object"));
    Usage usage;
    ASSIGN_OR_RETURN(usage.input_tokens, IntField(*u, "input_tokens", 0));
    ASSIGN_OR_RETURN(usage.output_tokens, IntField(*u, "output_tokens", 0));
    ASSIGN_OR_RETURN(usage.cached_tokens, IntField(*u, "cached_tokens", 0));
    ASSIGN_OR_RETURN(usage.reasoning_tokens, IntField(*u, "reasoning_tokens", 0));
    ASSIGN_OR_RETURN(usage.cache_write_tokens, IntField(*u, "cache_write_tokens", 0));
    m.usage = usage;
  }
  return m;
}

Result<NewSession> NewSessionFromJson(const Json& body) {
  NewSession s;
  ASSIGN_OR_RETURN(s.id, StringField(body, "id"));
  ASSIGN_OR_RETURN(s.title, StringField(body, "title"));
  if (auto md = body.find("metadata"); md != body.end() && !md->is_null()) {
    if (!md->is_object()) return Err(Status::InvalidArgument("\"metadata\" must be an object"));
    s.metadata_json = md->dump();
  }
  return s;
}

}  // namespace sessiondb
