// Raw floors measured in the same run as the workloads, so that results are
// ratios against this machine and disk rather than absolute numbers.
#pragma once

#include <filesystem>
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

// The least any engine honouring "a blob is durable before the event that
// names it" does to ingest `payloads` one per append: for each, create a file
// in `dir`, write the payload, fdatasync it, close it, then (the event's
// commit) pwrite 4 KiB to a preallocated log and fdatasync the log, as a
// recycled SQLite WAL is. With `rename`, the file is written under a temp
// name and renamed into a final folder whose fsync makes the name durable
// before the log's commit (what a crash-safe content-addressed store needs).
// `mib_per_s` counts payload bytes.
struct DurableWriteFloor {
  LatencyFloor latency;  // per payload
  double mib_per_s = 0;
};
DurableWriteFloor MeasureDurableBlobWrites(const std::string& dir,
                                           const std::vector<std::string>& payloads, bool rename);

// Where a durable-write floor writes: `root` made afresh with tmp/ and final/
// folders, and a log preallocated and synced so that each commit (a 4 KiB
// pwrite + fdatasync) flushes data only, as a recycled SQLite WAL does.
// Throws std::runtime_error on any failure. Removes `root` when destroyed.
class FloorScene {
 public:
  FloorScene(std::filesystem::path root, size_t commits);
  ~FloorScene();
  FloorScene(const FloorScene&) = delete;
  FloorScene& operator=(const FloorScene&) = delete;

  std::string tmp(const std::string& name) const { return (root_ / "tmp" / name).string(); }
  std::string final_folder() const { return (root_ / "final").string(); }
  // The event's commit: page `i` of the log written and fdatasynced.
  void Commit(size_t i);

 private:
  std::filesystem::path root_;
  std::string log_path_;
  int log_ = -1;
};

// fsyncs the folder at `path`; throws std::runtime_error on failure.
void SyncDirectory(const std::string& path);

// Base64-decode each data URI's payload and SHA-256 the bytes; returns MiB/s
// of decoded bytes, the faster of OpenSSL's decoder and sessiondb's.
double MeasureHashDecodeMiBps(const std::vector<std::string>& data_uris);

}  // namespace sessiondb::bench
