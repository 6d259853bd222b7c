// SHA-256 digests as lowercase hex, the names of blobs.
// Thread-safety: pure functions.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace sessiondb::blob {

// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

// The SHA-256 of `pieces` one after the other, without putting them together
// (a piece may be a line of tens of MiB).
std::string Sha256Hex(std::initializer_list<std::string_view> pieces);

// True if `text` is exactly 64 lowercase hex digits (a blob name).
bool IsSha256Hex(std::string_view text);

}  // namespace sessiondb::blob
