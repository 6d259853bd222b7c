// Raw floors measured in the same run as the workloads, so that results are
// ratios against this machine and disk rather than absolute numbers.
#pragma once

#include <string>
#include <vector>

namespace sessiondb::bench {

struct LatencyFloor {
  int n = 0;
  double p50_us = 0;
  double p99_us = 0;
  double median_ms = 0;
};

// `n` x (pwrite of 4 KiB at increasing offsets of one file in `dir` + fdatasync).
// With `preallocated`, the file is written and fsynced in full first, so each
// fdatasync flushes data only and never a new file size: the case of a WAL
// that is recycled after checkpoints, as SQLite's is. Without it, every write
// extends the file (the floor).
LatencyFloor MeasureFdatasync4k(const std::string& dir, int n, bool preallocated = false);

// Base64-decode each data URI's payload and SHA-256 the bytes; returns MiB/s
// of decoded bytes, the faster of OpenSSL's decoder and sessiondb's.
double MeasureHashDecodeMiBps(const std::vector<std::string>& data_uris);

}  // namespace sessiondb::bench
