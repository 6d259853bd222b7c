// RunWriter: writes an import's runs (see ImportSink) on a thread of its
// own, so that reading and converting the source overlaps with the store's
// work (encoding, indexing, committing) on another core. One run is written
// while the importer fills the next; Submit waits for the one before, so at
// most two runs are in memory.
//
// Errors: the first run that fails stops the writer; it drops what comes
// after, and the next Submit or Wait returns that error. Each run is a
// transaction of its own, so a failed run leaves nothing of itself behind.
//
// Thread-safety: Submit, Wait and InFlight are for one thread, the
// importer's; the store must take calls from two threads (every Store does).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "sessiondb/store.h"

namespace sessiondb::interop {

// Events for one session, with the bytes of the blobs they add.
struct ImportRun {
  std::string session_id;
  // Set for a session's first run: it is created (RestoreSession) with
  // these events; later runs add theirs (RestoreEvents).
  std::optional<Session> create;
  std::vector<Event> events;
  std::map<std::string, std::string> blobs;  // sha256 -> bytes
};

class RunWriter {
 public:
  explicit RunWriter(Store& store) : store_(store) {}
  // Waits for the run being written.
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;

  // Waits for the run before, then hands `run` over; the error of an
  // earlier run if there was one (then `run` is dropped).
  Status Submit(ImportRun run) EXCLUDES(mu_);
  // Waits until every run handed over is written; the first error.
  Status Wait() EXCLUDES(mu_);
  // Whether a run of `session_id` is handed over and not yet written.
  bool InFlight(const std::string& session_id) EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);
  static Status Write(Store& store, const ImportRun& run);

  Store& store_;
  std::thread thread_;
  Mutex mu_;
  CondVar cv_;
  std::optional<ImportRun> next_ GUARDED_BY(mu_);  // written by the thread
  bool stop_ GUARDED_BY(mu_) = false;
  Status error_ GUARDED_BY(mu_) = Status::Ok();
};

}  // namespace sessiondb::interop
