// Names of the enums and the Part constructors declared in sessiondb/types.h.
#include "sessiondb/types.h"

#include <array>
#include <utility>

#include "core/enum_names.h"

namespace sessiondb {
namespace {

constexpr std::array<std::pair<Role, std::string_view>, 4> kRoles{{
    {Role::kSystem, "system"},
    {Role::kUser, "user"},
    {Role::kAssistant, "assistant"},
    {Role::kTool, "tool"},
}};

constexpr std::array<std::pair<PartType, std::string_view>, 7> kPartTypes{{
    {PartType::kText, "text"},
    {PartType::kImage, "image"},
    {PartType::kFile, "file"},
    {PartType::kResourceLink, "resource_link"},
    {PartType::kToolCall, "tool_call"},
    {PartType::kToolResult, "tool_result"},
    {PartType::kReasoning, "reasoning"},
}};

constexpr std::array<std::pair<Origin, std::string_view>, 3> kOrigins{{
    {Origin::kInline, "inline"},
    {Origin::kLocalFile, "file"},
    {Origin::kRemoteLink, "link"},
}};

constexpr std::array<std::pair<EventType, std::string_view>, 4> kEventTypes{{
    {EventType::kMessage, "message"},
    {EventType::kResourceView, "resource_view"},
    {EventType::kCompaction, "compaction"},
    {EventType::kRewind, "rewind"},
}};

constexpr std::array<std::pair<UsageGroup, std::string_view>, 6> kUsageGroups{{
    {UsageGroup::kDay, "day"},
    {UsageGroup::kMonth, "month"},
    {UsageGroup::kProject, "project"},
    {UsageGroup::kModel, "model"},
    {UsageGroup::kProvider, "provider"},
    {UsageGroup::kSession, "session"},
}};

Part AttachmentPart(PartType type, AttachmentSource::Kind kind, std::string data,
                    std::string declared_mime, std::string name) {
  Part p;
  p.type = type;
  p.source = AttachmentSource{kind, std::move(data), std::move(declared_mime), std::move(name)};
  return p;
}

}  // namespace

std::string_view RoleName(Role role) { return NameOf(role, kRoles); }
std::string_view FileVersionPhaseName(FileVersionPhase phase) {
  return phase == FileVersionPhase::kBefore ? "before" : "after";
}
Result<Role> ParseRole(std::string_view name) { return ParseName(name, kRoles, "role"); }
std::string_view PartTypeName(PartType type) { return NameOf(type, kPartTypes); }
Result<PartType> ParsePartType(std::string_view name) {
  return ParseName(name, kPartTypes, "part type");
}
std::string_view OriginName(Origin origin) { return NameOf(origin, kOrigins); }
Result<Origin> ParseOrigin(std::string_view name) { return ParseName(name, kOrigins, "origin"); }
std::string_view EventTypeName(EventType type) { return NameOf(type, kEventTypes); }
Result<EventType> ParseEventType(std::string_view name) {
  return ParseName(name, kEventTypes, "event type");
}

std::string_view UsageGroupName(UsageGroup group) { return NameOf(group, kUsageGroups); }
Result<UsageGroup> ParseUsageGroup(std::string_view name) {
  return ParseName(name, kUsageGroups, "usage group");
}

Part Part::Text(std::string text) {
  Part p;
  p.type = PartType::kText;
  p.text = std::move(text);
  return p;
}

Part Part::Reasoning(std::string text, std::string signature) {
  Part p = Text(std::move(text));
  p.type = PartType::kReasoning;
  p.signature = std::move(signature);
  return p;
}

Part Part::ImageFromDataUri(std::string data_uri) {
  return AttachmentPart(PartType::kImage, AttachmentSource::Kind::kDataUri, std::move(data_uri), "",
                        "");
}
Part Part::ImageFromBytes(std::string bytes, std::string declared_mime, std::string name) {
  return AttachmentPart(PartType::kImage, AttachmentSource::Kind::kBytes, std::move(bytes),
                        std::move(declared_mime), std::move(name));
}
Part Part::ImageFromFile(std::string path) {
  return AttachmentPart(PartType::kImage, AttachmentSource::Kind::kLocalFile, std::move(path), "",
                        "");
}
Part Part::FileFromBytes(std::string bytes, std::string declared_mime, std::string name) {
  return AttachmentPart(PartType::kFile, AttachmentSource::Kind::kBytes, std::move(bytes),
                        std::move(declared_mime), std::move(name));
}
Part Part::FileFromFile(std::string path) {
  return AttachmentPart(PartType::kFile, AttachmentSource::Kind::kLocalFile, std::move(path), "",
                        "");
}
Part Part::FileFromDataUri(std::string data_uri) {
  return AttachmentPart(PartType::kFile, AttachmentSource::Kind::kDataUri, std::move(data_uri), "",
                        "");
}

Part Part::Link(std::string url, std::string name, std::string mime, int64_t size) {
  Part p;
  p.type = PartType::kResourceLink;
  Resource r;
  r.origin = Origin::kRemoteLink;
  r.uri = std::move(url);
  r.name = std::move(name);
  r.mime = std::move(mime);
  r.size = size;
  p.resource = std::move(r);
  return p;
}

Part Part::ToolCall(std::string id, std::string name, std::string arguments_json) {
  Part p;
  p.type = PartType::kToolCall;
  p.tool_call_id = std::move(id);
  p.tool_name = std::move(name);
  p.arguments_json = arguments_json.empty() ? "{}" : std::move(arguments_json);
  return p;
}

Part Part::ToolResult(std::string tool_call_id, std::string output, bool is_error) {
  Part p;
  p.type = PartType::kToolResult;
  p.tool_call_id = std::move(tool_call_id);
  p.text = std::move(output);
  p.is_error = is_error;
  return p;
}

std::string Message::Text() const {
  std::string out;
  bool first = true;
  for (const Part& p : parts) {
    if (p.type != PartType::kText) continue;
    if (!first) out += '\n';
    out += p.text;
    first = false;
  }
  return out;
}

}  // namespace sessiondb
