// The floors of W3 (load a session's 10,000 messages): the same rows read
// from the same database file by SQLite alone, and read again into the public
// `Message`s by a bare loop, measured in the same run, so that the load's
// median reads as a ratio over what stepping the rows costs on this machine
// at this moment, and over what building the public type from them costs.
#pragma once

#include <cstdint>
#include <string>

namespace sessiondb::bench {

struct ReadFloor {
  int64_t rows = 0;
  // Median of the reads: each row stepped and every column the store reads
  // looked at (SQLite copies each text into its own buffer), nothing kept.
  double median_ms = 0;
  // Median of the reads of the same statement that build each row into a
  // `Message` (id, session, seq, time, role, one text part) with nothing
  // but the assignments the type needs: three heap allocations a message
  // (id, parts, text). The vector is freed outside the clock, as W3's is.
  double build_median_ms = 0;
  // The same two medians in this thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
  // which a wait for a core on a loaded machine does not inflate.
  double cpu_median_ms = 0;
  double build_cpu_median_ms = 0;
};

// Reads the message rows of `session_id` in seq order from the store's
// database file `db_path`, `repeats` times after one warm-up read, on a
// read-only connection of its own opened as the store opens its own (no
// mutex of SQLite's, the store's page cache size); then `repeats` times
// more building `Message`s. Throws std::runtime_error when SQLite fails or
// a row has a JSON body (the build floor reads plain-text messages only, as
// W1 writes them).
ReadFloor MeasureMessageRowRead(const std::string& db_path, const std::string& session_id,
                                int repeats);

}  // namespace sessiondb::bench
