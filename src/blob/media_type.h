// Sniffs what a run of bytes really is, without trusting the caller's label,
// and reads image dimensions from the header.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::blob {

struct MediaInfo {
  std::string mime;  // "image/png", "image/jpeg", "image/gif", "image/webp", or a non-image type
  bool is_image = false;  // true only for the four supported image types
  int width = 0;          // pixels, images only
  int height = 0;
};

// Identifies PNG, JPEG, GIF and WebP (lossy VP8, lossless VP8L, extended VP8X)
// by signature and reads width and height from their headers. Other bytes get
// a best-effort non-image type: application/pdf, application/zip,
// text/plain (valid UTF-8 without NUL), else application/octet-stream.
// kInvalidArgument when the bytes carry an image signature but the header is
// truncated or malformed (e.g. a PNG signature followed by JPEG bytes); the
// message names the format and what is wrong.
Result<MediaInfo> SniffMedia(std::string_view bytes);

// True for image/png, image/jpeg, image/gif, image/webp (case-insensitive;
// "image/jpg" counts as image/jpeg).
bool IsSupportedImageMime(std::string_view mime);

// Canonical form of a declared MIME type: lowercased, parameters dropped,
// "image/jpg" -> "image/jpeg".
std::string NormalizeMime(std::string_view mime);

// File extension for a MIME type without the dot ("png", "jpg", "gif",
// "webp", "pdf", "txt", else "bin").
std::string_view ExtensionForMime(std::string_view mime);

}  // namespace sessiondb::blob
