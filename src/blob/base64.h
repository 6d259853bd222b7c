// Standard base64 (RFC 4648 section 4, with '=' padding).
// Thread-safety: pure functions.
#pragma once

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

}  // namespace sessiondb::blob
