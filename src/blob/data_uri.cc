#include "blob/data_uri.h"

#include "blob/base64.h"
#include "blob/media_type.h"

namespace sessiondb::blob {

Result<DataUri> ParseDataUri(std::string_view uri) {
  constexpr std::string_view kScheme = "data:";
  if (uri.size() < kScheme.size() || uri.substr(0, kScheme.size()) != kScheme) {
    return Err(Status::InvalidArgument("not a data URI: it must start with \"data:\" (got \"" +
                                       std::string(uri.substr(0, 16)) + "\")"));
  }
  size_t comma = uri.find(',');
  if (comma == std::string_view::npos) {
    return Err(Status::InvalidArgument("malformed data URI: no ',' before the data"));
  }
  std::string_view header = uri.substr(kScheme.size(), comma - kScheme.size());
  constexpr std::string_view kBase64 = ";base64";
  if (header.size() < kBase64.size() || header.substr(header.size() - kBase64.size()) != kBase64) {
    return Err(Status::InvalidArgument(
        "data URI is not base64-encoded; only \"data:<mime>;base64,<data>\" URIs are accepted"));
  }
  header.remove_suffix(kBase64.size());
  auto bytes = Base64Decode(uri.substr(comma + 1));
  if (!bytes) return Err(Status::InvalidArgument("data URI payload: " + bytes.error().message()));
  DataUri out;
  out.mime = NormalizeMime(header);
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
