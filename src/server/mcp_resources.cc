// view_resource and resources/read: finding an attachment in a session's
// messages and handing over its bytes (an image as MCP image content, a text
// file as text, within the server's limits).
#include <string>
#include <vector>

#include "api/session_ref.h"
#include "blob/base64.h"
#include "core/iso_time.h"
#include "core/text_rules.h"
#include "server/mcp_text.h"
#include "server/mcp_tools.h"

namespace sessiondb::server {
namespace {

// An attachment is looked for this many messages at a time.
constexpr int64_t kScanPage = 500;

bool IsText(const std::string& bytes) {
  return bytes.find('\0') == std::string::npos && IsValidUtf8(bytes);
}

// MCP image content takes the image types the store accepts.
bool IsImage(const Resource& r) {
  return r.mime == "image/png" || r.mime == "image/jpeg" || r.mime == "image/gif" ||
         r.mime == "image/webp";
}

// Whether a file's bytes are worth reading to see if they are text: the
// sniffer calls text text/plain, and says application/octet-stream when unsure.
bool MaybeText(const Resource& r) {
  return r.mime.starts_with("text/") || r.mime.empty() || r.mime == "application/octet-stream" ||
         r.mime == "application/json";
}

}  // namespace

Result<McpTools::FoundResource> McpTools::FindResource(std::string_view session_id,
                                                       std::string_view resource_id) {
  RETURN_IF_ERROR(store_.GetSession(session_id));
  for (int64_t from = 1;;) {
    ASSIGN_OR_RETURN(std::vector<Message> page, store_.ReadMessages(session_id, from, kScanPage));
    for (const Message& m : page) {
      for (const Part& p : m.parts) {
        if (p.resource && p.resource->resource_id == resource_id) {
          return FoundResource{*p.resource, m.seq, m.role, m.ts_ms};
        }
      }
    }
    if (static_cast<int64_t>(page.size()) < kScanPage) break;
    from = page.back().seq + 1;
  }
  return Err(Status::NotFound("no message of session '" + std::string(session_id) +
                              "' attaches a resource '" + std::string(resource_id) +
                              "'; read_session shows each attachment's resource_id (res_...)"));
}

ToolResult McpTools::ViewResource(const ToolArgs& args) {
  const std::string session_id = args.String("session_id");
  auto found = FindResource(session_id, args.String("resource_id"));
  if (!found) return StoreError(found.error());
  const Resource& r = found->resource;
  std::string about = DescribeResource(r) + "; attached by message #" +
                      std::to_string(found->message_seq) + " (" +
                      std::string(RoleName(found->role)) + ", " +
                      FormatUtcTime(found->ts_ms, UtcTimeForm::kIsoSeconds) + ")";
  Json structured = {{"resource", ToJson(r)}, {"message_seq", found->message_seq}};
  if (r.origin == Origin::kRemoteLink) {
    return ToolResult::Text(about + ". Its bytes were never fetched; the link is " + r.uri + "\n",
                            std::move(structured));
  }
  const bool image = IsImage(r);
  // Where a client can fetch what is not shown here: the blob by its digest,
  // from the HTTP API of `sessiondb serve` on the same store.
  auto where = [&] {
    return "; its bytes are blob " + r.content_sha256 + " (GET /v1/blobs/" + r.content_sha256 +
           " from `sessiondb serve`)";
  };
  if (image && r.size > options_.max_image_bytes) {
    return ToolResult::Text(about + ". It is larger than the " +
                                FormatBytes(options_.max_image_bytes) + " this server returns" +
                                where() + "\n",
                            std::move(structured));
  }
  if (!image && !MaybeText(r)) {
    return ToolResult::Text(
        about + ". It is not an image or text, so it is not shown" + where() + "\n",
        std::move(structured));
  }
  auto bytes = store_.ReadBlob(r.content_sha256, /*verify=*/true);
  if (!bytes) {
    return ToolResult::Error(about + ". Its bytes cannot be read: " + bytes.error().message());
  }
  if (image) {
    ToolResult result = ToolResult::Text(about, std::move(structured));
    result.content.push_back(
        {{"type", "image"}, {"data", blob::Base64Encode(*bytes)}, {"mimeType", r.mime}});
    return result;
  }
  if (IsText(*bytes)) {
    size_t dropped = 0;
    std::string text = *bytes;
    if (static_cast<int64_t>(text.size()) > options_.max_text_bytes) {
      // Cut on a character boundary at most max_text_bytes in.
      size_t end = static_cast<size_t>(options_.max_text_bytes);
      while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
      dropped = text.size() - end;
      text.resize(end);
    }
    std::string out = about + ":\n" + text;
    if (dropped > 0) {
      out += "\n[cut: the first " + FormatBytes(static_cast<int64_t>(text.size())) + " of " +
             FormatBytes(static_cast<int64_t>(bytes->size())) + " are shown]";
    }
    return ToolResult::Text(std::move(out), std::move(structured));
  }
  return ToolResult::Text(
      about + ". It is not an image or text, so it is not shown" + where() + "\n",
      std::move(structured));
}

Result<Json> McpTools::ReadResource(std::string_view uri) {
  constexpr std::string_view kPrefix = "sessiondb://session/";
  if (!uri.starts_with(kPrefix)) {
    return Err(
        Status::InvalidArgument("resource URIs are sessiondb://session/{session_id} or "
                                "sessiondb://session/{session_id}/resource/{resource_id}"));
  }
  std::string_view rest = uri.substr(kPrefix.size());
  const size_t slash = rest.find('/');
  ASSIGN_OR_RETURN(const std::string session_id, ResolveSessionRef(store_, rest.substr(0, slash)));
  if (slash == std::string_view::npos) {
    ASSIGN_OR_RETURN(Session session, store_.GetSession(session_id));
    ASSIGN_OR_RETURN(std::vector<Message> messages, store_.ReadMessages(session_id, 1, kScanPage));
    SessionPageText page = RenderMessages(session, messages, 8000,
                                          static_cast<size_t>(options_.max_text_bytes), false);
    std::string text = "Session " + DescribeSession(session) + "\n" + page.text;
    if (page.shown < static_cast<size_t>(session.message_count)) {
      text += "\n[" + std::to_string(page.shown) + " of " + std::to_string(session.message_count) +
              " messages shown; the read_session tool " + "reads the rest from seq " +
              std::to_string(page.last_seq + 1) + "]\n";
    }
    return Json::array({{{"uri", uri}, {"mimeType", "text/plain"}, {"text", std::move(text)}}});
  }
  constexpr std::string_view kResource = "/resource/";
  if (rest.substr(slash, kResource.size()) != kResource) {
    return Err(
        Status::InvalidArgument("resource URIs are sessiondb://session/{session_id} or "
                                "sessiondb://session/{session_id}/resource/{resource_id}"));
  }
  const std::string resource_id(rest.substr(slash + kResource.size()));
  ASSIGN_OR_RETURN(FoundResource found, FindResource(session_id, resource_id));
  const Resource& r = found.resource;
  if (r.origin == Origin::kRemoteLink) {
    return Err(Status::InvalidArgument(resource_id + " is a link to " + r.uri + ", never fetched"));
  }
  if (r.size > options_.max_image_bytes) {
    return Err(Status::InvalidArgument(resource_id + " is " + FormatBytes(r.size) +
                                       "; this server returns resources up to " +
                                       FormatBytes(options_.max_image_bytes)));
  }
  ASSIGN_OR_RETURN(std::string bytes, store_.ReadBlob(r.content_sha256, /*verify=*/true));
  Json content = {{"uri", uri}, {"mimeType", r.mime.empty() ? "application/octet-stream" : r.mime}};
  if (!IsImage(r) && IsText(bytes)) {
    content["text"] = std::move(bytes);
  } else {
    content["blob"] = blob::Base64Encode(bytes);
  }
  return Json::array({std::move(content)});
}

}  // namespace sessiondb::server
