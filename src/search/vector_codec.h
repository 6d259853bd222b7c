// The stored form of an embedding vector: int8 quantisation, a quarter of
// the float size at a cosine error well under 0.001 for unit vectors.
//
// Format (version 1, little-endian):
//   vector := scale:float32 value:int8{dims}
//   scale  := max |x| over the vector (0 for a zero vector)
//   value  := round(x / scale * 127), in -127..127
// The dimension is the byte length minus 4.
//
// Example:
//   std::string bytes = EncodeVector(v);
//   ASSIGN_OR_RETURN(std::vector<float> back, DecodeVector(bytes));
//
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"

namespace sessiondb::search {

// Encodes `v` as above. Non-finite values are stored as 0.
std::string EncodeVector(std::span<const float> v);

// Decodes bytes written by EncodeVector, re-normalised to unit length (a zero
// vector stays zero). kCorruption if shorter than 4 bytes or the scale is
// negative or not finite, or the values do not fit it (no value at ±127, or -128).
Result<std::vector<float>> DecodeVector(std::string_view bytes);

}  // namespace sessiondb::search
