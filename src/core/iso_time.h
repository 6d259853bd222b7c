// ISO-8601 / RFC 3339 time stamps, as foreign files and people write them.
// One parser for the importers and the faces (search --since, the HTTP and
// MCP time arguments).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sessiondb {

// Milliseconds since the Unix epoch of an ISO-8601 / RFC 3339 timestamp
// ("2025-06-01T12:34:56.789Z", "+02:00" offsets, no fraction, or a date
// alone); nullopt if it does not parse.
std::optional<int64_t> ParseIsoTime(std::string_view text);

}  // namespace sessiondb
