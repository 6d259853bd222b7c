#include "blob/base64.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

// Table-driven scalar codec. Images arrive as data URIs of up to a few MiB, so
// both directions avoid per-character branches: decoding ORs four pre-shifted
// table entries into one word and checks a whole block for bad characters at
// once; encoding emits two characters per 12-bit lookup.

namespace sessiondb::blob {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint8_t kInvalid = 0xFF;
// Set in every decode-table entry of a character outside the alphabet; valid
// entries only use the low 24 bits.
constexpr uint32_t kBadBit = uint32_t{1} << 24;

constexpr std::array<uint8_t, 256> MakeValueTable() {
  std::array<uint8_t, 256> table{};
  for (auto& v : table) v = kInvalid;
  for (uint8_t i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = i;
  return table;
}
constexpr std::array<uint8_t, 256> kValue = MakeValueTable();

// kDecode[k][c] is character c's contribution when it is the k-th of a
// quad, already placed so that the OR of the four entries holds the three
// decoded bytes in memory order (byte 0 first) when stored as a native uint32.
using DecodeTables = std::array<std::array<uint32_t, 256>, 4>;

constexpr uint32_t InMemoryOrder(uint32_t b0, uint32_t b1, uint32_t b2) {
  if constexpr (std::endian::native == std::endian::little) {
    return b0 | (b1 << 8) | (b2 << 16);
  } else {
    return (b0 << 24) | (b1 << 16) | (b2 << 8);
  }
}

constexpr DecodeTables MakeDecodeTables() {
  DecodeTables t{};
  for (int c = 0; c < 256; ++c) {
    const uint32_t v = kValue[c];
    if (v == kInvalid) {
      for (auto& table : t) table[c] = kBadBit;
      continue;
    }
    // Quad value a<<18 | b<<12 | c<<6 | d split over bytes b0 b1 b2.
    t[0][c] = InMemoryOrder(v << 2, 0, 0);
    t[1][c] = InMemoryOrder(v >> 4, (v & 0x0F) << 4, 0);
    t[2][c] = InMemoryOrder(0, v >> 2, (v & 0x03) << 6);
    t[3][c] = InMemoryOrder(0, 0, v);
  }
  return t;
}
constexpr DecodeTables kDecode = MakeDecodeTables();

// kEncodePairs[v] is the two characters of the 12-bit value v.
constexpr std::array<std::array<char, 2>, 4096> MakeEncodePairs() {
  std::array<std::array<char, 2>, 4096> pairs{};
  for (int v = 0; v < 4096; ++v) pairs[v] = {kAlphabet[v >> 6], kAlphabet[v & 63]};
  return pairs;
}
constexpr std::array<std::array<char, 2>, 4096> kEncodePairs = MakeEncodePairs();

uint32_t DecodeQuad(const unsigned char* in) {
  return kDecode[0][in[0]] | kDecode[1][in[1]] | kDecode[2][in[2]] | kDecode[3][in[3]];
}

// The error for the first character at or after `from` that cannot appear
// where it is. Only called once a bad character is known to exist.
Status BadCharacter(std::string_view text, size_t from) {
  size_t offset = from;
  while (offset < text.size() && kValue[static_cast<unsigned char>(text[offset])] != kInvalid) {
    ++offset;
  }
  if (offset == text.size()) return Status::Internal("base64: no bad character found");
  const unsigned char c = static_cast<unsigned char>(text[offset]);
  if (c == '=') {
    return Status::InvalidArgument("invalid base64: padding '=' at offset " +
                                   std::to_string(offset) +
                                   " is misplaced; it may only end the text (at most two)");
  }
  std::string shown = (c >= 0x20 && c < 0x7F) ? std::string("'") + static_cast<char>(c) + "'"
                                              : "byte 0x" + std::string{"0123456789abcdef"[c >> 4],
                                                                        "0123456789abcdef"[c & 15]};
  return Status::InvalidArgument("invalid base64: " + shown + " at offset " +
                                 std::to_string(offset) +
                                 " is not in the standard alphabet (A-Z a-z 0-9 + /)");
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  const size_t out_size = (bytes.size() + 2) / 3 * 4;
  out.resize_and_overwrite(out_size, [&](char* o, size_t) {
    const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
    const size_t whole = bytes.size() / 3 * 3;
    size_t i = 0;
    // Six bytes (48 bits, four 12-bit pairs) per step, read as one 8-byte
    // load while at least 8 bytes remain.
    for (; i + 8 <= bytes.size(); i += 6, o += 8) {
      uint64_t v;
      std::memcpy(&v, in + i, 8);
      if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
      std::memcpy(o, kEncodePairs[(v >> 52) & 0xFFF].data(), 2);
      std::memcpy(o + 2, kEncodePairs[(v >> 40) & 0xFFF].data(), 2);
      std::memcpy(o + 4, kEncodePairs[(v >> 28) & 0xFFF].data(), 2);
      std::memcpy(o + 6, kEncodePairs[(v >> 16) & 0xFFF].data(), 2);
    }
    for (; i < whole; i += 3, o += 4) {
      const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
      std::memcpy(o, kEncodePairs[v >> 12].data(), 2);
      std::memcpy(o + 2, kEncodePairs[v & 0xFFF].data(), 2);
    }
    const size_t rest = bytes.size() - whole;
    if (rest > 0) {
      uint32_t v = uint32_t{in[whole]} << 16;
      if (rest == 2) v |= uint32_t{in[whole + 1]} << 8;
      o[0] = kAlphabet[v >> 18];
      o[1] = kAlphabet[(v >> 12) & 63];
      o[2] = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
      o[3] = '=';
    }
    return out_size;
  });
  return out;
}

Result<size_t> Base64DecodedSize(std::string_view text) {
  if (text.size() % 4 != 0) {
    return Err(Status::InvalidArgument("invalid base64: length " + std::to_string(text.size()) +
                                       " is not a multiple of 4 (is the padding missing?)"));
  }
  if (text.empty()) return size_t{0};
  // The last quad may carry padding: "xx==" (one byte) or "xxx=" (two).
  const size_t last = text.size() - 4;
  size_t padding = 0;
  if (text[last + 3] == '=') padding = text[last + 2] == '=' ? 2 : 1;
  return text.size() / 4 * 3 - padding;
}

Status Base64DecodeInto(std::string_view text, char* out, size_t report_every,
                        const std::function<void(size_t)>& decoded) {
  ASSIGN_OR_RETURN(const size_t out_size, Base64DecodedSize(text));
  if (out_size == 0) return Status::Ok();
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  const size_t last = text.size() - 4;
  const size_t padding = text.size() / 4 * 3 - out_size;
  char* o = out;
  // All quads but the last are full. Each stores 4 bytes and advances 3; the
  // spare byte is overwritten by the next quad, and the last quad (decoded
  // byte by byte below) always follows, so nothing is written past the end.
  // The bytes before `o` are final, so they may be reported.
  constexpr size_t kBlockQuads = 16;  // check for bad characters once per block
  size_t i = 0;
  size_t next_report = report_every;
  uint32_t seen = 0;
  for (; i + 4 * kBlockQuads <= last; i += 4 * kBlockQuads) {
    for (size_t q = 0; q < kBlockQuads; ++q) {
      const uint32_t v = DecodeQuad(in + i + 4 * q);
      seen |= v;
      std::memcpy(o, &v, 4);
      o += 3;
    }
    if (seen & kBadBit) return BadCharacter(text, 0);
    if (decoded && static_cast<size_t>(o - out) >= next_report) {
      decoded(static_cast<size_t>(o - out));
      next_report = static_cast<size_t>(o - out) + report_every;
    }
  }
  for (; i < last; i += 4) {
    const uint32_t v = DecodeQuad(in + i);
    seen |= v;
    std::memcpy(o, &v, 4);
    o += 3;
  }
  if (seen & kBadBit) return BadCharacter(text, 0);
  // The last quad: its data characters must be in the alphabet; padding is
  // decoded as zero. Non-zero bits left over in the character before the
  // padding are accepted (RFC 4648 section 3.5 allows either choice).
  const size_t data_chars = 4 - padding;
  uint32_t v = 0;
  for (size_t k = 0; k < data_chars; ++k) {
    const uint8_t d = kValue[in[last + k]];
    if (d == kInvalid) return BadCharacter(text, 0);
    v |= uint32_t{d} << (18 - 6 * k);
  }
  const char tail[3] = {static_cast<char>(v >> 16), static_cast<char>((v >> 8) & 0xFF),
                        static_cast<char>(v & 0xFF)};
  std::memcpy(o, tail, 3 - padding);
  if (decoded) decoded(out_size);
  return Status::Ok();
}

Result<std::string> Base64Decode(std::string_view text) {
  ASSIGN_OR_RETURN(const size_t out_size, Base64DecodedSize(text));
  std::string out;
  Status status;
  out.resize_and_overwrite(out_size, [&](char* o, size_t) {
    status = Base64DecodeInto(text, o, out_size, nullptr);
    return status.ok() ? out_size : size_t{0};
  });
  if (!status.ok()) return Err(std::move(status));
  return out;
}

}  // namespace sessiondb::blob
