#include "blob/base64.h"

#include <array>
#include <cstdint>

namespace sessiondb::blob {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint8_t kInvalid = 0xFF;

constexpr std::array<uint8_t, 256> MakeDecodeTable() {
  std::array<uint8_t, 256> table{};
  for (auto& v : table) v = kInvalid;
  for (uint8_t i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = i;
  return table;
}
constexpr std::array<uint8_t, 256> kDecode = MakeDecodeTable();

Status BadCharacter(std::string_view text, size_t offset) {
  unsigned char c = static_cast<unsigned char>(text[offset]);
  std::string shown = (c >= 0x20 && c < 0x7F) ? std::string("'") + static_cast<char>(c) + "'"
                                              : "byte " + std::to_string(c);
  return Status::InvalidArgument("invalid base64: " + shown + " at offset " +
                                 std::to_string(offset) +
                                 " is not in the standard alphabet (A-Z a-z 0-9 + /)");
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.resize((bytes.size() + 2) / 3 * 4);
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  char* o = out.data();
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    *o++ = kAlphabet[v >> 18];
    *o++ = kAlphabet[(v >> 12) & 63];
    *o++ = kAlphabet[(v >> 6) & 63];
    *o++ = kAlphabet[v & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t{in[i]} << 16;
    if (rest == 2) v |= uint32_t{in[i + 1]} << 8;
    *o++ = kAlphabet[v >> 18];
    *o++ = kAlphabet[(v >> 12) & 63];
    *o++ = rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return Err(Status::InvalidArgument("invalid base64: length " + std::to_string(text.size()) +
                                       " is not a multiple of 4 (is the padding missing?)"));
  }
  size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = (text[text.size() - 2] == '=') ? 2 : 1;
  std::string out;
  out.resize(text.size() / 4 * 3 - padding);
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  char* o = out.data();
  const size_t full = padding ? text.size() - 4 : text.size();
  for (size_t i = 0; i < full; i += 4) {
    uint8_t a = kDecode[in[i]], b = kDecode[in[i + 1]], c = kDecode[in[i + 2]],
            d = kDecode[in[i + 3]];
    if ((a | b | c | d) & 0xC0) {  // some byte is outside the alphabet
      for (size_t k = i; k < i + 4; ++k) {
        if (kDecode[in[k]] == kInvalid) return Err(BadCharacter(text, k));
      }
    }
    uint32_t v = (uint32_t{a} << 18) | (uint32_t{b} << 12) | (uint32_t{c} << 6) | d;
    *o++ = static_cast<char>(v >> 16);
    *o++ = static_cast<char>((v >> 8) & 0xFF);
    *o++ = static_cast<char>(v & 0xFF);
  }
  if (padding) {
    const size_t i = text.size() - 4;
    const size_t data_chars = 4 - padding;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      if (k < data_chars) {
        uint8_t d = kDecode[in[i + k]];
        if (d == kInvalid) return Err(BadCharacter(text, i + k));
        v |= uint32_t{d} << (18 - 6 * k);
      } else if (text[i + k] != '=') {
        return Err(Status::InvalidArgument("invalid base64: padding at offset " +
                                           std::to_string(i + k) + " is malformed"));
      }
    }
    *o++ = static_cast<char>(v >> 16);
    if (padding == 1) *o++ = static_cast<char>((v >> 8) & 0xFF);
  }
  return out;
}

}  // namespace sessiondb::blob
