// The JSON form of a message body in the log (format version 1, see
// docs/formats.md). Backends store role, text, seq, id and time in columns of
// their own and the rest here. A message that is one plain text part and
// nothing else has no body at all: it is only its text, which keeps the common
// case cheap to write and to load.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb {

inline constexpr int kMessageBodyVersion = 1;

// The body JSON of `message`, or nullopt when the message is a single text
// part with no other fields (then its text alone describes it). Attachment
// parts must already carry their stored Resource. kInvalidArgument if a JSON
// field (arguments, edit results, metadata) does not parse.
Result<std::optional<std::string>> EncodeMessageBody(const Message& message);

// Fills message->parts and the optional fields from `body`; when `body` is
// absent, the message becomes one text part holding `text`. kCorruption if the
// body does not parse, kFailedPrecondition if it has a newer version.
Status DecodeMessageBody(const std::optional<std::string_view>& body, std::string_view text,
                         Message* message);

// The compact JSON text of `text` if it is a JSON object ("{}" when empty);
// kInvalidArgument naming `what` otherwise.
Result<std::string> CanonicalJsonObject(std::string_view text, std::string_view what);

// A Resource as the JSON object the log, snapshots and the CLI use.
std::string ResourceToJson(const Resource& resource);
// Parses what ResourceToJson wrote; kCorruption if it is not such an object.
Result<Resource> ResourceFromJson(std::string_view text);

}  // namespace sessiondb
