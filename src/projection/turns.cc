// BuildTurns: compactions replayed, then each event turned into provider turns
// under the projection's rules (what goes in full, what becomes a descriptor).
#include "projection/turns.h"

#include <optional>
#include <string_view>
#include <utility>

#include "blob/base64.h"
#include "blob/media_type.h"
#include "projection/descriptor.h"
#include "projection/tool_pairing.h"

namespace sessiondb::projection {
namespace {

Block TextBlock(std::string text) {
  Block b;
  b.kind = Block::Kind::kText;
  b.text = std::move(text);
  return b;
}

// True when the log already says the blob cannot be read. Whether a blob
// that looks present really is gets checked only for images sent in full:
// reading every earlier image on each projection to word its descriptor
// would cost a full blob read per image per turn.
bool KnownMissing(const Resource& r) { return r.missing || r.content_sha256.empty(); }

// The resource as a full image block, or nullopt when its bytes cannot be had.
std::optional<Block> FullImage(const Resource& r, const ResourceBytesFn& bytes) {
  if (KnownMissing(r) || !bytes) return std::nullopt;
  Result<std::string> data = bytes(r);
  if (!data) return std::nullopt;
  Block b;
  b.kind = Block::Kind::kImage;
  b.mime = r.mime;
  b.base64 = blob::Base64Encode(*data);
  return b;
}

// An image in full when `full` and its bytes can be read; else its descriptor
// (the MISSING form when they cannot).
Block ImageBlock(const Resource& r, bool full, const ResourceBytesFn& bytes) {
  if (full) {
    if (std::optional<Block> image = FullImage(r, bytes)) return *std::move(image);
    return TextBlock(ImageDescriptor(r, /*missing=*/true));
  }
  return TextBlock(ImageDescriptor(r, KnownMissing(r)));
}

Status NoResource(const Event& event, size_t part_index, std::string_view what) {
  return Status::InvalidArgument("part " + std::to_string(part_index + 1) +
                                 " of the message at seq " + std::to_string(event.seq) + " is " +
                                 std::string(what) +
                                 " with no stored resource; a projection needs stored events");
}

bool HasNonWhitespace(const std::string& text) {
  return text.find_first_not_of(" \t\n\r\f\v") != std::string::npos;
}

// Whether reasoning of a message served by `provider` goes back in a request
// of `format`: only with the proof its own provider gave it, and only to that
// provider. Reasoning is never turned into text for anyone else.
bool SendsReasoning(const Part& p, const std::string& provider, ProviderFormat format) {
  if (p.signature.empty()) return false;
  switch (format) {
    case ProviderFormat::kAnthropic:
      return provider == "anthropic";
    case ProviderFormat::kOpenAiResponses:
      return provider == "openai";
    case ProviderFormat::kOpenAiChat:  // Chat Completions takes no reasoning back
      return false;
  }
  return false;
}

// The turns of one message, in the order of its parts (see turns.h).
// `newest_user` is true for the newest user message, whose images go in full.
Status AddMessage(const Event& event, bool newest_user, ProviderFormat format,
                  const ResourceBytesFn& bytes, std::vector<Turn>* turns) {
  const Message& m = event.message;
  if (m.pruned) return Status::Ok();
  const Role content_role = m.role == Role::kTool ? Role::kUser : m.role;
  std::vector<Turn> out;
  auto add = [&out](Role role, Block b) {
    if (out.empty() || out.back().role != role) out.push_back(Turn{.role = role});
    out.back().blocks.push_back(std::move(b));
  };
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const Part& p = m.parts[i];
    switch (p.type) {
      case PartType::kText:
        if (HasNonWhitespace(p.text)) add(content_role, TextBlock(p.text));
        break;
      case PartType::kReasoning:
        if (m.role == Role::kAssistant && SendsReasoning(p, m.provider, format)) {
          Block b;
          b.kind = Block::Kind::kReasoning;
          b.text = p.text;
          b.signature = p.signature;
          add(Role::kAssistant, std::move(b));
        }
        break;
      case PartType::kImage:
        if (!p.resource) return NoResource(event, i, "an image");
        add(content_role, ImageBlock(*p.resource, newest_user, bytes));
        break;
      case PartType::kFile:
        if (!p.resource) return NoResource(event, i, "a file");
        add(content_role, TextBlock(FileDescriptor(*p.resource, KnownMissing(*p.resource))));
        break;
      case PartType::kResourceLink:
        if (!p.resource) return NoResource(event, i, "a link");
        add(content_role, TextBlock(LinkDescriptor(*p.resource)));
        break;
      case PartType::kToolCall: {
        Block call;
        call.kind = Block::Kind::kToolCall;
        call.tool_call_id = p.tool_call_id;
        call.tool_name = p.tool_name;
        call.arguments_json = p.arguments_json.empty() ? "{}" : p.arguments_json;
        call.call_key = event.id + "/" + std::to_string(i);
        add(Role::kAssistant, std::move(call));
        break;
      }
      case PartType::kToolResult: {
        Block result;
        result.kind = Block::Kind::kToolResult;
        result.tool_call_id = p.tool_call_id;
        result.text = p.text;
        result.is_error = p.is_error;
        add(Role::kTool, std::move(result));
        break;
      }
    }
  }
  for (Turn& t : out) turns->push_back(std::move(t));
  return Status::Ok();
}

// A resource view: a user turn with its heading, then the resource in full if
// no assistant message has followed the view yet (`seen` is false), else its
// descriptor. Only supported images are ever sent in full.
Turn ViewTurn(const ResourceView& view, bool seen, const ResourceBytesFn& bytes) {
  Turn turn{.role = Role::kUser};
  turn.blocks.push_back(TextBlock(ResourceViewHeading(view)));
  const Resource& r = view.resource;
  if (blob::IsSupportedImageMime(r.mime)) {
    turn.blocks.push_back(ImageBlock(r, /*full=*/!seen, bytes));
  } else {
    turn.blocks.push_back(TextBlock(FileDescriptor(r, KnownMissing(r))));
  }
  return turn;
}

}  // namespace

Result<std::vector<Turn>> BuildTurns(std::span<const Event> events, ProviderFormat format,
                                     const ResourceBytesFn& bytes) {
  std::vector<Event> replayed = ReplayCompactions(std::vector<Event>(events.begin(), events.end()));
  auto is_message_from = [](const Event& e, Role role) {
    return e.type == EventType::kMessage && e.message.role == role;
  };
  std::optional<size_t> newest_user;
  std::optional<size_t> last_assistant;
  for (size_t i = 0; i < replayed.size(); ++i) {
    if (is_message_from(replayed[i], Role::kUser)) newest_user = i;
    if (is_message_from(replayed[i], Role::kAssistant)) last_assistant = i;
  }

  std::vector<Turn> turns;
  for (size_t i = 0; i < replayed.size(); ++i) {
    const Event& e = replayed[i];
    switch (e.type) {
      case EventType::kMessage:
        RETURN_IF_ERROR(AddMessage(e, newest_user == i, format, bytes, &turns));
        break;
      case EventType::kResourceView: {
        bool seen = last_assistant && *last_assistant > i;
        turns.push_back(ViewTurn(e.resource_view, seen, bytes));
        break;
      }
      case EventType::kCompaction:
        turns.push_back(
            Turn{.role = Role::kUser, .blocks = {TextBlock(CompactionText(e.compaction))}});
        break;
      case EventType::kRewind:
        break;  // ReadForProjection has applied it: it is never in the view
    }
  }
  PairToolCalls(&turns);
  return turns;
}

}  // namespace sessiondb::projection
