// The least any engine keeping "a blob is durable (temp file, sync, rename)
// before the event that names it" can spend on W5 on this machine, with its
// CPU work and its I/O overlapped as well as two threads can: no database,
// no store, no checks, only what the rule and the workload require.
//
// For each data URI, one after another (W5 appends one at a time):
//   - this thread decodes the base64 payload in 128 KiB pieces, then hashes
//     the bytes (the name must be known before the rename);
//   - a writer thread, started once for the whole run, writes each piece
//     to a temp file as soon as it is decoded, asks the kernel to write it
//     out (sync_file_range), and fdatasyncs the file after the last piece,
//     without waiting for the hash (an engine must also check whether the
//     name is stored already: the floor does not);
//   - then the temp file is renamed to its digest in one final folder (no
//     shard folders to make), that folder is fsynced, and the event's commit
//     is a 4 KiB pwrite + fdatasync of a preallocated log.
//
// So it is the W5 ratio's own ceiling: the hash+decode floor's CPU work plus
// the rename floor's I/O, overlapped. Figures: MiB/s of decoded bytes.
//
// PipelinedIngestFloor is the same, one image per call, so that a workload
// can alternate it with the engine image by image (both then meet the
// disk in the same state: see W5's interleaved ratio in bench_main.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "floors.h"

namespace sessiondb::bench {

class PipelinedIngestFloor {
 public:
  // A fresh scene under `dir` for at most `images` images.
  PipelinedIngestFloor(const std::string& dir, size_t images);
  ~PipelinedIngestFloor();
  PipelinedIngestFloor(const PipelinedIngestFloor&) = delete;
  PipelinedIngestFloor& operator=(const PipelinedIngestFloor&) = delete;

  // Ingests the next image: its nanoseconds. Throws std::runtime_error on a
  // failed call.
  int64_t Ingest(const std::string& data_uri);
  // Throws unless every image ingested is stored whole under its name.
  void CheckStored() const;
  int64_t bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

DurableWriteFloor MeasurePipelinedImageIngest(const std::string& dir,
                                              const std::vector<std::string>& data_uris);

}  // namespace sessiondb::bench
