// The churn rules of the agents' code memory: how often a file or function
// was rewritten decides its tier (gold: settled code, red: code the agents
// keep rewriting), and when a function earns a warning in the context
// injected before the next write. Also the short previews of code shown in
// that context.
// Thread-safety: pure functions.
//
// Example:
//   ChurnTier t = ClassifyChurn(/*edits_30d=*/12, /*edits_24h=*/1);  // kBronze
//   std::string shown = PreviewCode(body);  // <= 400 bytes + "\n... (truncated)"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sessiondb/memory.h"

namespace sessiondb::memory {

// Gold: 0-2 edits in the last 30 days; silver: 3-10; bronze: 11-20; red:
// more than 20, or 5 or more in the last 24 hours (whatever the 30-day count).
ChurnTier ClassifyChurn(int64_t edits_30d, int64_t edits_24h);

// A function edited this many times or more in 24 hours gets a warning.
inline constexpr int64_t kFunctionWarnEdits24h = 3;

// Appended to a preview that was cut.
inline constexpr std::string_view kTruncatedMarker = "\n... (truncated)";

// `code` unchanged when it is at most `max_chars` bytes. Otherwise its first
// bytes up to the last line break within the first `max_chars` bytes (the
// line break itself dropped), or, when there is none, as many bytes as fit
// without splitting a UTF-8 character; then kTruncatedMarker.
std::string PreviewCode(std::string_view code, size_t max_chars = 400);

}  // namespace sessiondb::memory
