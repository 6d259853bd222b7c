// Standard base64 (RFC 4648 section 4, with '=' padding).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::blob {

std::string Base64Encode(std::string_view bytes);

// Decodes strict standard base64. kInvalidArgument names the offset of the
// first bad character, or says the length/padding is wrong.
// NOTE: strict means no whitespace, no URL-safe alphabet, padding required and
// only at the end. Non-zero unused bits in the last character before the
// padding ("Zh==") are accepted, as RFC 4648 section 3.5 allows.
Result<std::string> Base64Decode(std::string_view text);

// How many bytes `text` decodes to, from its length and padding alone; the
// same error as Base64Decode when its length is wrong. Nothing is decoded.
Result<size_t> Base64DecodedSize(std::string_view text);

// Base64Decode into `out`, which holds Base64DecodedSize(text) bytes. Calls
// `decoded(n)` (when given) each time about `report_every` more bytes are
// final, n being how many of out's first bytes are, and once at the end with
// all of them. A bad character fails with the same error as Base64Decode,
// after earlier bytes may have been reported: they are not to be trusted.
// Example: a staged blob's writer writes an image while it is decoded.
Status Base64DecodeInto(std::string_view text, char* out, size_t report_every,
                        const std::function<void(size_t)>& decoded);

}  // namespace sessiondb::blob
