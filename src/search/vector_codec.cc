#include "search/vector_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "search/embedder.h"

namespace sessiondb::search {

namespace {
constexpr size_t kScaleBytes = 4;
}  // namespace

std::string EncodeVector(std::span<const float> v) {
  float scale = 0.0f;
  for (float x : v) {
    if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
  }
  std::string out(kScaleBytes + v.size(), '\0');
  const uint32_t bits = std::bit_cast<uint32_t>(scale);
  for (size_t i = 0; i < kScaleBytes; ++i) out[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
  if (scale == 0.0f) return out;
  for (size_t i = 0; i < v.size(); ++i) {
    const float x = std::isfinite(v[i]) ? v[i] : 0.0f;
    const long q = std::lround(x / scale * 127.0f);
    out[kScaleBytes + i] = static_cast<char>(static_cast<int8_t>(std::clamp(q, -127L, 127L)));
  }
  return out;
}

Result<std::vector<float>> DecodeVector(std::string_view bytes) {
  if (bytes.size() < kScaleBytes) {
    return Err(Status::Corruption("a stored vector is " + std::to_string(bytes.size()) +
                                  " bytes; it needs at least 4 (the scale)"));
  }
  uint32_t bits = 0;
  for (size_t i = 0; i < kScaleBytes; ++i) {
    bits |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  const float scale = std::bit_cast<float>(bits);
  if (!std::isfinite(scale) || scale < 0.0f) {
    return Err(Status::Corruption("a stored vector has an invalid scale"));
  }
  std::vector<float> v(bytes.size() - kScaleBytes);
  int max_q = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    // The byte as a two's complement int8 (read unsigned: char's sign varies).
    int q = static_cast<uint8_t>(bytes[kScaleBytes + i]);
    if (q > 127) q -= 256;
    max_q = std::max(max_q, q < 0 ? -q : q);
    v[i] = static_cast<float>(q);
  }
  // The encoder maps the largest |x| to 127 and a zero vector to zero scale.
  if ((scale == 0.0f) != (max_q == 0) || max_q > 127 || (max_q != 0 && max_q != 127)) {
    return Err(Status::Corruption("a stored vector's values do not match its scale"));
  }
  // The scale cancels in the normalisation; it is kept so the bytes alone
  // still say the vector's length.
  NormalizeInPlace(v);
  return v;
}

}  // namespace sessiondb::search
