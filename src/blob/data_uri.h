// RFC 2397 data URIs in their base64 form: "data:<mime>[;param]*;base64,<data>".
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::blob {

struct DataUri {
  std::string mime;   // lowercased, parameters dropped; may be empty ("data:;base64,...")
  std::string bytes;  // decoded payload
};

// Parses a base64 data URI. kInvalidArgument when it does not start with
// "data:", has no ";base64," marker (percent-encoded data URIs are refused),
// or its payload is not valid base64; the message says which.
Result<DataUri> ParseDataUri(std::string_view uri);

// ParseDataUri's first half: the header checked, the payload not decoded, so
// a caller can decode it itself (blob/base64.h), into a buffer of its own.
struct DataUriParts {
  std::string mime;         // as DataUri::mime
  std::string_view base64;  // the payload, inside the uri given
};
Result<DataUriParts> SplitDataUri(std::string_view uri);
// The error ParseDataUri gives for a payload Base64Decode refused.
Status DataUriPayloadError(const Status& base64_error);

// "data:" + mime + ";base64," + base64(bytes).
std::string MakeDataUri(std::string_view mime, std::string_view bytes);

}  // namespace sessiondb::blob
