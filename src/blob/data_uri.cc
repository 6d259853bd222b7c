#include "blob/data_uri.h"

#include "blob/base64.h"
#include "blob/media_type.h"

namespace sessiondb::blob {
namespace {

// ASCII case-insensitive: URI schemes are (RFC 3986 section 3.1), and so is
// the "base64" token in practice (WHATWG fetch, data: URL processor).
bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// Shows the start of what the caller passed, without dumping a whole payload
// or raw control bytes into an error message.
std::string Excerpt(std::string_view uri) {
  constexpr size_t kMax = 24;
  std::string out;
  for (char c : uri.substr(0, kMax)) {
    out += (c >= 0x20 && c < 0x7F) ? c : '?';
  }
  if (uri.size() > kMax) out += "...";
  return out;
}

}  // namespace

Result<DataUriParts> SplitDataUri(std::string_view uri) {
  constexpr std::string_view kScheme = "data:";
  if (uri.size() < kScheme.size() || !EqualsIgnoringCase(uri.substr(0, kScheme.size()), kScheme)) {
    return Err(Status::InvalidArgument(
        "not a data URI: it must start with \"data:\" (it starts \"" + Excerpt(uri) + "\")"));
  }
  const size_t comma = uri.find(',');
  if (comma == std::string_view::npos) {
    return Err(
        Status::InvalidArgument("malformed data URI: no ',' separates the header from the data"));
  }
  std::string_view header = uri.substr(kScheme.size(), comma - kScheme.size());
  constexpr std::string_view kBase64 = ";base64";
  if (header.size() < kBase64.size() ||
      !EqualsIgnoringCase(header.substr(header.size() - kBase64.size()), kBase64)) {
    return Err(Status::InvalidArgument(
        "data URI is not base64-encoded; only base64 data URIs "
        "(\"data:<mime>;base64,<data>\") are accepted, not percent-encoded ones"));
  }
  header.remove_suffix(kBase64.size());
  return DataUriParts{NormalizeMime(header), uri.substr(comma + 1)};
}

Status DataUriPayloadError(const Status& base64_error) {
  // Offsets in the message count from the first character after the comma.
  return Status::InvalidArgument("data URI payload: " + base64_error.message());
}

Result<DataUri> ParseDataUri(std::string_view uri) {
  ASSIGN_OR_RETURN(DataUriParts parts, SplitDataUri(uri));
  auto bytes = Base64Decode(parts.base64);
  if (!bytes) return Err(DataUriPayloadError(bytes.error()));
  DataUri out;
  out.mime = std::move(parts.mime);
  out.bytes = std::move(*bytes);
  return out;
}

std::string MakeDataUri(std::string_view mime, std::string_view bytes) {
  std::string out = "data:";
  out += mime;
  out += ";base64,";
  out += Base64Encode(bytes);
  return out;
}

}  // namespace sessiondb::blob
