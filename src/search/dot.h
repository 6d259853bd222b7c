// The dot product of float vectors, shared by the exact scan (VectorSet) and
// the mapped HNSW search, so both score a vector the same way.
#pragma once

#include <cstddef>

namespace sessiondb::search {

// Eight independent partial sums: a loop the compiler turns into SIMD
// without -ffast-math (which it may not do for one running float sum).
inline float Dot(const float* a, const float* b, size_t n) {
  float acc[8] = {};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (size_t j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace sessiondb::search
