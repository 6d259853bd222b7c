// The floor of W3 (load a session's 10,000 messages): the same rows read
// from the same database file by SQLite alone, measured in the same run, so
// that the load's median reads as a ratio over what stepping the rows costs
// on this machine at this moment.
#pragma once

#include <cstdint>
#include <string>

namespace sessiondb::bench {

struct ReadFloor {
  int64_t rows = 0;
  // Median of the reads: each row stepped and every column the store reads
  // looked at (SQLite copies each text into its own buffer), nothing kept.
  double median_ms = 0;
};

// Reads the message rows of `session_id` in seq order from the store's
// database file `db_path`, `repeats` times after one warm-up read, on a
// read-only connection of its own opened as the store opens its own (no
// mutex of SQLite's, the store's page cache size). Throws
// std::runtime_error when SQLite fails.
ReadFloor MeasureMessageRowRead(const std::string& db_path, const std::string& session_id,
                                int repeats);

}  // namespace sessiondb::bench
