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
Result<std::string> Base64Decode(std::string_view text);

}  // namespace sessiondb::blob
