// A blob's bytes read in pieces (Store::OpenBlob), so that a large file is
// streamed rather than held whole.
// Thread-safety: none; one reader belongs to one thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "sessiondb/status.h"

namespace sessiondb {

class BlobReader {
 public:
  virtual ~BlobReader() = default;
  // The blob's size in bytes.
  virtual int64_t size() const = 0;
  // The next at most `max` bytes (max > 0); empty once every byte was read.
  virtual Result<std::string> Read(size_t max) = 0;
  // Moves past the next `n` bytes (0 <= n <= what is left) without returning
  // them. The default reads and drops them, a bounded piece at a time.
  virtual Status Skip(int64_t n) {
    while (n > 0) {
      Result<std::string> piece = Read(static_cast<size_t>(std::min<int64_t>(n, 1 << 18)));
      if (!piece) return piece.error();
      if (piece->empty()) return Status::InvalidArgument("cannot skip past the end of a blob");
      n -= static_cast<int64_t>(piece->size());
    }
    return Status::Ok();
  }
};

}  // namespace sessiondb
