// The wording of descriptors, resource view headings and compaction texts.
#include "projection/descriptor.h"

#include <string_view>

namespace sessiondb::projection {
namespace {

// `text` in double quotes, on one line: `"` and `\` escaped, control
// characters (newlines included) turned into spaces.
std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// "<kind> <id>: <details>." with the details that are known, comma-separated.
std::string Heading(std::string_view kind, const Resource& r, bool with_dimensions) {
  std::string details;
  auto add = [&details](const std::string& detail) {
    if (detail.empty()) return;
    if (!details.empty()) details += ", ";
    details += detail;
  };
  if (!r.name.empty()) add(Quoted(r.name));
  add(r.mime);
  if (r.size > 0) add(std::to_string(r.size) + " bytes");
  if (with_dimensions && r.width > 0 && r.height > 0) {
    add(std::to_string(r.width) + "x" + std::to_string(r.height));
  }
  if (!r.content_sha256.empty()) add("sha256 " + r.content_sha256);
  std::string out = "[" + std::string(kind) + " " + r.resource_id;
  if (!details.empty()) out += ": " + details;
  return out + ".";
}

// The words for an attachment an import kept only as a descriptor: why the
// store never had its bytes (not "lost": nothing was lost after it came in).
std::string NotStored(const Resource& resource) {
  return " NOT STORED: " + Quoted(resource.not_stored) + "; it cannot be shown.]";
}

}  // namespace

std::string ImageDescriptor(const Resource& resource, bool missing) {
  std::string out = Heading("image", resource, /*with_dimensions=*/true);
  if (!resource.not_stored.empty()) return out + NotStored(resource);
  if (missing) return out + " MISSING from the store: its bytes are lost and it cannot be shown.]";
  return out + " Attached on an earlier turn and not shown again; to see it, record a " +
         "resource_view of " + resource.resource_id + ".]";
}

std::string FileDescriptor(const Resource& resource, bool missing) {
  std::string out = Heading("file", resource, /*with_dimensions=*/false);
  if (!resource.not_stored.empty()) return out + NotStored(resource);
  if (missing) return out + " MISSING from the store: its bytes are lost.]";
  return out + " Its contents are not sent to the provider.]";
}

std::string LinkDescriptor(const Resource& resource) {
  std::string out = "[link " + resource.uri;
  if (!resource.name.empty()) out += " " + Quoted(resource.name);
  return out + ": a remote link, never fetched.]";
}

std::string ResourceViewHeading(const ResourceView& view) {
  std::string out = "[resource_view " + view.resource_id;
  if (!view.reason.empty()) out += ": " + view.reason;
  return out + "]";
}

std::string CompactionText(const Compaction& compaction) {
  std::string out = "[Summary of earlier conversation: events " +
                    std::to_string(compaction.from_seq) + "\u2013" +
                    std::to_string(compaction.to_seq) + "]\n" + compaction.summary;
  if (!compaction.limitations.empty()) out += "\n\nLimitations: " + compaction.limitations;
  return out;
}

std::string ToolResultWithoutCall(const std::string& call_id, const std::string& output,
                                  bool is_error) {
  return std::string(is_error ? "[Error from" : "[Result of") + " tool call " + Quoted(call_id) +
         ", whose call is not part of this conversation:]\n" + output;
}

std::string EmptyToolError() { return "[The tool reported an error and gave no output.]"; }

std::string EarlierTurnsLeftOut() {
  return "[Earlier turns of this conversation are not included.]";
}

}  // namespace sessiondb::projection
