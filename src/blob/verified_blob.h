// Blob bytes on their way out, checked against their name: whatever emits a
// blob's bytes (an HTTP answer, a data URI, an export) goes through here, so
// bytes damaged on disk or in a database never leave under the digest of
// what they were. Both checks stream: memory is one piece, whatever the size.
// Thread-safety: a VerifyingReader, like any BlobReader, belongs to one thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "sessiondb/blob_reader.h"
#include "sessiondb/status.h"

namespace sessiondb::blob {

// How much of a blob one read takes while it is checked or streamed.
inline constexpr size_t kBlobPieceBytes = size_t{256} * 1024;

// kCorruption naming the blob whose bytes no longer hash to `sha256`.
Status CorruptBlob(std::string_view sha256);

// Reads `reader` from where it stands to its end, a piece at a time, hashing
// as it goes: OK when the bytes hash to `sha256`, CorruptBlob when they do
// not, else the reader's error.
Status CheckBlobBytes(BlobReader& reader, std::string_view sha256);

// `inner` (at its start) read through a hash of what it returns: the Read
// that reaches the end answers CorruptBlob instead of the last piece when the
// whole does not hash to `sha256`, so a caller that streams the whole blob
// never receives it complete when damaged. After Skip the bytes are no longer
// hashed (a caller that skips checked the blob first, with CheckBlobBytes).
std::unique_ptr<BlobReader> VerifyingReader(std::unique_ptr<BlobReader> inner, std::string sha256);

}  // namespace sessiondb::blob
