// ISO-8601 / RFC 3339 time stamps, as foreign files and people write them.
// One parser for the importers and the faces (search --since, the HTTP and
// MCP time arguments), and one formatter of UTC times for whatever writes them
// (exports, MCP answers, the hook's messages). Thread-safe: no shared state.
//
// Example:
//   FormatUtcTime(1748781296789, UtcTimeForm::kIsoMillis)  // "2025-06-01T12:34:56.789Z"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sessiondb {

// Milliseconds since the Unix epoch of an ISO-8601 / RFC 3339 timestamp
// ("2025-06-01T12:34:56.789Z", "+02:00" offsets, no fraction, or a date
// alone); nullopt if it does not parse.
std::optional<int64_t> ParseIsoTime(std::string_view text);

// The ways a UTC time is written.
enum class UtcTimeForm {
  kIsoMillis,   // "2025-06-01T12:34:56.789Z" (RFC 3339, what ParseIsoTime reads back)
  kIsoSeconds,  // "2025-06-01T12:34:56Z"
  kReadable,    // "2025-06-01 12:34:56 UTC"
  kDate,        // "2025-06-01"
};

// `unix_ms` (milliseconds since the Unix epoch; before 1970 too) in UTC, in
// `form`. Shorter forms drop what they do not show; they never round up.
std::string FormatUtcTime(int64_t unix_ms, UtcTimeForm form);

}  // namespace sessiondb
