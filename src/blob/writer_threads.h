// Threads kept for the staged blob writers of one FileBlobStore, so that a
// staged image's writer starts at once: starting a thread for each one cost
// the appending thread about half a millisecond before the writer wrote its
// first byte (issue 40's W5, traced with strace). A job goes to a thread
// waiting for one, or to a new thread when none is waiting. A thread stays,
// waiting, once its job is done, until the keeper ends.
//
// A job is never queued behind another: each may wait for its owner (a
// staged writer waits for the bytes and their name), and the owner may
// wait for that job before it gets to the next.
//
// How many threads there are is bounded by the most jobs ever run at once,
// and those whose job had ended but that were not yet waiting again (the
// job's owner may start the next before): FileBlobStore::Stage runs at most
// kMaxStagedInFlight (16) at once, so a store keeps fewer than 32.
//
// Example:
//   WriterThreads threads;
//   if (!threads.Run([&] { WriteStaged(...); })) { /* write it inline */ }
//
// Thread-safety: Run may be called from any thread. Not across fork(): a
// child would count threads it does not have (as with the store's SQLite
// connections, a store is opened again in the child).
#pragma once

#include <functional>
#include <thread>
#include <vector>

#include "core/mutex.h"

namespace sessiondb::blob {

class WriterThreads {
 public:
  WriterThreads() = default;
  // Waits for the jobs running, then ends every thread.
  ~WriterThreads();
  WriterThreads(const WriterThreads&) = delete;
  WriterThreads& operator=(const WriterThreads&) = delete;

  // Runs `job` on a waiting thread, or a new one. False, with `job` not
  // run, when no thread could be started.
  bool Run(std::function<void()> job) EXCLUDES(mu_);

  // Threads started so far, and those waiting for a job (tests).
  size_t threads() EXCLUDES(mu_);
  int waiting() EXCLUDES(mu_);

 private:
  // A thread's loop: its first job, then each handed to it, until the end.
  void Work(std::function<void()> job) EXCLUDES(mu_);

  Mutex mu_;
  CondVar job_ready_;
  // Handed over, not yet taken: never more than `waiting_` were when it was.
  std::vector<std::function<void()>> jobs_ GUARDED_BY(mu_);
  int waiting_ GUARDED_BY(mu_) = 0;  // threads waiting, less the jobs promised to them
  bool ending_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
};

}  // namespace sessiondb::blob
