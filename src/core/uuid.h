// Time-ordered identifiers: UUIDv7 (RFC 9562), so ids sort by creation time.
// Thread-safety: safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace sessiondb {

// A UUIDv7 for `unix_ms`, in the canonical 8-4-4-4-12 lowercase form.
std::string NewUuidV7(int64_t unix_ms);

// Milliseconds since the Unix epoch from the system clock.
int64_t SystemNowMs();

}  // namespace sessiondb
