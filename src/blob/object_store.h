// Object storage: bytes kept under a key outside the database (an S3
// bucket), for the blob tier of a PostgreSQL store (docs/postgres.md,
// "Blobs in object storage"). The interface is the four calls that tier
// needs; s3_object_store.h is the one implementation, tests may put a fake
// behind it.
//
// Example:
//   RETURN_IF_ERROR(objects.Put("sha256/ab/ab12...", bytes));  // verified
//   ASSIGN_OR_RETURN(std::string back, objects.Get("sha256/ab/ab12...", size, sha));
//
// Thread-safety: an implementation must be safe to call from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::blob {

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Stores `bytes` under `key`, replacing what was there. Returns Ok only
  // once the stored object has been read back and hashes to the SHA-256 of
  // `bytes`: kCorruption when it does not, kIo (or kBusy for a timeout or
  // a 5xx that outlasted the retries) when the store cannot be reached.
  virtual Status Put(std::string_view key, std::string_view bytes) = 0;

  // The object's bytes. kNotFound when there is no such object; kCorruption
  // when it is longer than `max_bytes` or, with `expected_sha256` given (64
  // hex digits), does not hash to it: wrong bytes are never returned.
  virtual Result<std::string> Get(std::string_view key, int64_t max_bytes,
                                  std::string_view expected_sha256) = 0;

  // Removes the object; Ok when it was already gone.
  virtual Status Delete(std::string_view key) = 0;

  // Whether an object is stored under `key`.
  virtual Result<bool> Exists(std::string_view key) = 0;

  // Names the store in messages: "s3://bucket at http://host:port".
  virtual std::string Describe() const = 0;
};

}  // namespace sessiondb::blob
