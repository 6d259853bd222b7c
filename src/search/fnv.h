// FNV-1a, 64 bits: a fixed hash (unlike std::hash) for values that must be
// the same on every machine and run: the built-in embedder's buckets and the
// HNSW file's checksum.
#pragma once

#include <cstdint>
#include <string_view>

namespace sessiondb::search {

inline uint64_t Fnv1a64(std::string_view bytes, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace sessiondb::search
