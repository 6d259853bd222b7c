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
  const bool zero = width == 0 || height == 0;
  if (zero || width > 1u << 30 || height > 1u << 30) {
    return Err(Malformed(format, std::string("its header gives ") +
                                     (zero ? "a zero width or height" : "an impossible size") +
                                     " (" + std::to_string(width) + "x" + std::to_string(height) +
                                     ")"));
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

// Walks the marker segments after SOI to the first frame header (SOF0..SOF15
// except DHT C4, JPG C8 and DAC CC): FF Cn, length(2), precision(1),
// height(2), width(2), components(1), ...
Result<MediaInfo> SniffJpeg(std::string_view b) {
  size_t at = 2;
  while (at + 4 <= b.size()) {
    if (static_cast<uint8_t>(b[at]) != 0xFF) {
      return Err(Malformed("JPEG", "a segment marker is missing at offset " + std::to_string(at)));
    }
    const uint8_t marker = static_cast<uint8_t>(b[at + 1]);
    if (marker == 0xFF) {  // fill byte before a marker
      ++at;
      continue;
    }
    if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
      at += 2;  // markers without a length
      continue;
    }
    if (marker == 0xD9 || marker == 0xDA) {
      return Err(Malformed("JPEG", "its image data starts before any frame header (SOF)"));
    }
    if (marker == 0x00) {
      return Err(Malformed("JPEG", "a segment marker is missing at offset " + std::to_string(at)));
    }
    const uint32_t length = Be16(b, at + 2);
    if (length < 2) {
      return Err(Malformed(
          "JPEG", "the segment at offset " + std::to_string(at) + " has an invalid length"));
    }
    const bool is_frame =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (is_frame) {
      if (length < 8) return Err(Malformed("JPEG", "the frame header (SOF) is too short"));
      if (at + 9 > b.size()) return Err(Malformed("JPEG", "the frame header (SOF) is truncated"));
      return Image("image/jpeg", Be16(b, at + 7), Be16(b, at + 5), "JPEG");
    }
    at += 2 + length;
  }
  return Err(Malformed("JPEG", "it is truncated before a frame header (SOF) gives its size"));
}

// Signature (6), the logical screen descriptor (width(2), height(2),
// flags(1), background(1), aspect(1)), the global color table when the flags
// say so (3 << (size + 1) bytes), then blocks up to the first image
// descriptor (2C, left(2), top(2), width(2), height(2), flags(1)), past
// extensions (21, label, sub-blocks up to an empty one). As with a PNG's IHDR
// or a JPEG's SOF, what gives the size must be whole and an image must
// follow: 17 bytes of "GIF89a" and text are not a 28205x29807 image.
Result<MediaInfo> SniffGif(std::string_view b) {
  constexpr size_t kImageDescriptorBytes = 10;
  if (b.size() < 13) return Err(Malformed("GIF", "the logical screen descriptor is truncated"));
  size_t at = 13;
  const uint8_t flags = static_cast<uint8_t>(b[10]);
  if ((flags & 0x80) != 0) at += size_t{3} << ((flags & 7) + 1);
  while (true) {
    if (at >= b.size()) return Err(Malformed("GIF", "it is truncated before its first image"));
    const uint8_t block = static_cast<uint8_t>(b[at]);
    if (block == 0x2C) {
      if (at + kImageDescriptorBytes > b.size()) {
        return Err(Malformed("GIF", "its first image descriptor is truncated"));
      }
      break;
    }
    if (block == 0x3B) return Err(Malformed("GIF", "it ends before any image"));
    if (block != 0x21) {
      return Err(Malformed("GIF", "a block is missing at offset " + std::to_string(at)));
    }
    at += 2;  // the introducer and the label, then the sub-blocks
    while (true) {
      if (at >= b.size()) return Err(Malformed("GIF", "it is truncated before its first image"));
      const size_t length = static_cast<uint8_t>(b[at]);
      at += 1 + length;
      if (length == 0) break;
    }
  }
  return Image("image/gif", Le16(b, 6), Le16(b, 8), "GIF");
}

// RIFF(4) size(4) WEBP(4), then the first chunk: fourcc(4) size(4) payload.
Result<MediaInfo> SniffWebp(std::string_view b) {
  if (b.size() < 20) return Err(Malformed("WebP", "the first chunk header is truncated"));
  const std::string_view chunk = b.substr(12, 4);
  if (chunk == "VP8 ") {
    // Frame tag (3 bytes), start code 9D 01 2A, then 14-bit width and height
    // (the top two bits of each are a scale).
    if (b.size() < 30) return Err(Malformed("WebP", "the VP8 frame header is truncated"));
    if (static_cast<uint8_t>(b[23]) != 0x9D || static_cast<uint8_t>(b[24]) != 0x01 ||
        static_cast<uint8_t>(b[25]) != 0x2A) {
      return Err(Malformed("WebP", "the VP8 start code is missing"));
    }
    return Image("image/webp", Le16(b, 26) & 0x3FFF, Le16(b, 28) & 0x3FFF, "WebP");
  }
  if (chunk == "VP8L") {
    // Signature 0x2F, then 14 bits width-1, 14 bits height-1, 1 bit alpha,
    // 3 bits version (0).
    if (b.size() < 25) return Err(Malformed("WebP", "the VP8L header is truncated"));
    if (static_cast<uint8_t>(b[20]) != 0x2F) {
      return Err(Malformed("WebP", "the VP8L signature is missing"));
    }
    const uint32_t bits = Le16(b, 21) | (uint32_t{static_cast<uint8_t>(b[23])} << 16) |
                          (uint32_t{static_cast<uint8_t>(b[24])} << 24);
    if (bits >> 29 != 0) return Err(Malformed("WebP", "the VP8L version is not 0"));
    return Image("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, "WebP");
  }
  if (chunk == "VP8X") {
    // Flags (4 bytes), then 24 bits canvas width-1 and 24 bits height-1.
    if (b.size() < 30) return Err(Malformed("WebP", "the VP8X header is truncated"));
    return Image("image/webp", Le24(b, 24) + 1, Le24(b, 27) + 1, "WebP");
  }
  return Err(Malformed("WebP", "the first chunk is not VP8, VP8L or VP8X"));
}

// True for valid UTF-8 without NUL. `truncated`: b is a prefix of the bytes,
// so a sequence cut at its end is not an error. Kept local so the blob layer
// needs nothing from core.
bool LooksLikeText(std::string_view b, bool truncated) {
  if (b.empty()) return false;
  const auto* s = reinterpret_cast<const unsigned char*>(b.data());
  size_t i = 0;
  while (i < b.size()) {
    const unsigned char c = s[i];
    if (c == 0) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Lead byte: sequence length and the allowed range of the second byte,
    // which rules out overlong forms, surrogates and code points past U+10FFFF.
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      if (i + k == b.size()) return truncated;
      const unsigned char next = s[i + k];
      if (k == 1 ? (next < lo || next > hi) : (next & 0xC0) != 0x80) return false;
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
