// A blob's bytes read in pieces (Store::OpenBlob), so that a large file is
// streamed rather than held whole.
// Thread-safety: none; one reader belongs to one thread.
#pragma once

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
};

}  // namespace sessiondb
