#include "blob/media_type.h"

#include <algorithm>
#include <cstdint>

namespace sessiondb::blob {
namespace {

bool StartsWith(std::string_view bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() && bytes.substr(0, prefix.size()) == prefix;
}

uint32_t Be16(std::string_view b, size_t at) {
  return (uint32_t{static_cast<uint8_t>(b[at])} << 8) | static_cast<uint8_t>(b[at + 1]);
}
uint32_t Be32(std::string_view b, size_t at) { return (Be16(b, at) << 16) | Be16(b, at + 2); }
uint32_t Le16(std::string_view b, size_t at) {
  return (uint32_t{static_cast<uint8_t>(b[at + 1])} << 8) | static_cast<uint8_t>(b[at]);
}
uint32_t Le24(std::string_view b, size_t at) {
  return Le16(b, at) | (uint32_t{static_cast<uint8_t>(b[at + 2])} << 16);
}

Status Malformed(std::string_view format, std::string_view what) {
  return Status::InvalidArgument("bytes start with a " + std::string(format) + " signature but " +
                                 std::string(what));
}

Result<MediaInfo> Image(std::string_view mime, uint32_t width, uint32_t height,
                        std::string_view format) {
  if (width == 0 || height == 0) return Err(Malformed(format, "the header gives a zero size"));
  if (width > 1u << 30 || height > 1u << 30) {
    return Err(Malformed(format, "the header gives an impossible size"));
  }
  return MediaInfo{std::string(mime), true, static_cast<int>(width), static_cast<int>(height)};
}

Result<MediaInfo> SniffPng(std::string_view b) {
  // Signature (8), then the first chunk must be IHDR: length 13, type, width, height.
  if (b.size() < 24 || b.substr(12, 4) != "IHDR" || Be32(b, 8) != 13) {
    return Err(Malformed("PNG", "the IHDR chunk is missing or malformed"));
  }
  return Image("image/png", Be32(b, 16), Be32(b, 20), "PNG");
}

Result<MediaInfo> SniffJpeg(std::string_view b) {
  size_t at = 2;
  while (at + 4 <= b.size()) {
    if (static_cast<uint8_t>(b[at]) != 0xFF) {
      return Err(Malformed("JPEG", "a segment marker is missing at offset " + std::to_string(at)));
    }
    uint8_t marker = static_cast<uint8_t>(b[at + 1]);
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
      at += 2;  // markers without a length
      continue;
    }
    if (marker == 0xD9 || marker == 0xDA) break;  // end of image / start of scan before a frame
    uint32_t length = Be16(b, at + 2);
    if (length < 2) return Err(Malformed("JPEG", "a segment has an invalid length"));
    const bool is_frame =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (is_frame) {
      if (at + 9 > b.size() || length < 7) break;
      return Image("image/jpeg", Be16(b, at + 7), Be16(b, at + 5), "JPEG");
    }
    at += 2 + length;
  }
  return Err(Malformed("JPEG", "no frame header (SOF) gives its size"));
}

Result<MediaInfo> SniffGif(std::string_view b) {
  if (b.size() < 10) return Err(Malformed("GIF", "the logical screen descriptor is truncated"));
  return Image("image/gif", Le16(b, 6), Le16(b, 8), "GIF");
}

Result<MediaInfo> SniffWebp(std::string_view b) {
  if (b.size() < 30) return Err(Malformed("WebP", "the header is truncated"));
  std::string_view chunk = b.substr(12, 4);
  if (chunk == "VP8 ") {
    // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height.
    if (static_cast<uint8_t>(b[23]) != 0x9D || static_cast<uint8_t>(b[24]) != 0x01 ||
        static_cast<uint8_t>(b[25]) != 0x2A) {
      return Err(Malformed("WebP", "the VP8 start code is missing"));
    }
    return Image("image/webp", Le16(b, 26) & 0x3FFF, Le16(b, 28) & 0x3FFF, "WebP");
  }
  if (chunk == "VP8L") {
    if (static_cast<uint8_t>(b[20]) != 0x2F) {
      return Err(Malformed("WebP", "the VP8L signature is missing"));
    }
    uint32_t bits = Le16(b, 21) | (uint32_t{static_cast<uint8_t>(b[23])} << 16) |
                    (uint32_t{static_cast<uint8_t>(b[24])} << 24);
    return Image("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, "WebP");
  }
  if (chunk == "VP8X") {
    return Image("image/webp", Le24(b, 24) + 1, Le24(b, 27) + 1, "WebP");
  }
  return Err(Malformed("WebP", "the first chunk is not VP8, VP8L or VP8X"));
}

// `truncated`: b is a prefix, so a sequence cut at its end is not an error.
bool LooksLikeText(std::string_view b, bool truncated) {
  if (b.empty()) return false;
  if (b.find('\0') != std::string_view::npos) return false;
  // Valid UTF-8 check, kept local so the blob layer needs nothing from core.
  const auto* s = reinterpret_cast<const unsigned char*>(b.data());
  size_t i = 0;
  while (i < b.size()) {
    unsigned char c = s[i];
    size_t len = c < 0x80             ? 1
                 : (c & 0xE0) == 0xC0 ? 2
                 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4
                                      : 0;
    if (len == 0 || (len == 2 && c < 0xC2)) return false;
    if (i + len > b.size()) return truncated;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

Result<MediaInfo> SniffMedia(std::string_view bytes) {
  constexpr size_t kTextProbeBytes = 4096;
  if (StartsWith(bytes, std::string_view("\x89PNG\r\n\x1a\n", 8))) return SniffPng(bytes);
  if (StartsWith(bytes, "\xFF\xD8\xFF")) return SniffJpeg(bytes);
  if (StartsWith(bytes, "GIF87a") || StartsWith(bytes, "GIF89a")) return SniffGif(bytes);
  if (bytes.size() >= 12 && StartsWith(bytes, "RIFF") && bytes.substr(8, 4) == "WEBP") {
    return SniffWebp(bytes);
  }
  MediaInfo info;
  if (StartsWith(bytes, "%PDF-")) {
    info.mime = "application/pdf";
  } else if (StartsWith(bytes, std::string_view("PK\x03\x04", 4))) {
    info.mime = "application/zip";
  } else if (LooksLikeText(bytes.substr(0, std::min<size_t>(bytes.size(), kTextProbeBytes)),
                           bytes.size() > kTextProbeBytes)) {
    info.mime = "text/plain";
  } else {
    info.mime = "application/octet-stream";
  }
  return info;
}

std::string NormalizeMime(std::string_view mime) {
  std::string out;
  for (char c : mime.substr(0, mime.find(';'))) {
    if (c == ' ' || c == '\t') continue;
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (out == "image/jpg" || out == "image/pjpeg") out = "image/jpeg";
  return out;
}

bool IsSupportedImageMime(std::string_view mime) {
  std::string m = NormalizeMime(mime);
  return m == "image/png" || m == "image/jpeg" || m == "image/gif" || m == "image/webp";
}

std::string_view ExtensionForMime(std::string_view mime) {
  std::string m = NormalizeMime(mime);
  if (m == "image/png") return "png";
  if (m == "image/jpeg") return "jpg";
  if (m == "image/gif") return "gif";
  if (m == "image/webp") return "webp";
  if (m == "application/pdf") return "pdf";
  if (m == "text/plain") return "txt";
  return "bin";
}

}  // namespace sessiondb::blob
