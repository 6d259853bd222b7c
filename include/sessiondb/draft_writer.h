// DraftWriter: persists streaming assistant output as it grows, without a
// write per token. Deltas are buffered and saved at most every
// `save_interval` (2 s by default) by a background thread, and at once on
// Finish or Close, so a crash loses at most one interval; the draft is then
// still listed by Store::ListDrafts, holding what was last saved. Nothing is
// written while nothing changed.
//
// Thread-safety: AppendText/AppendReasoning may be called from one thread
// while the background thread saves; do not share a DraftWriter between
// producers.
//
// Example:
//   ASSIGN_OR_RETURN(auto writer, DraftWriter::Open(store, session_id, {}));
//   for (const auto& delta : stream) writer->AppendText(delta);
//   ASSIGN_OR_RETURN(AppendResult r, writer->Finish({}));
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"

namespace sessiondb {

struct DraftWriterOptions {
  Role role = Role::kAssistant;
  std::string model;
  std::chrono::milliseconds save_interval{2000};
};

class DraftWriter {
 public:
  // Opens a new draft in `session_id`. The store must outlive the writer.
  static Result<std::unique_ptr<DraftWriter>> Open(Store* store, std::string_view session_id,
                                                   const DraftWriterOptions& options);
  // Closes (saves what is pending, leaves the draft incomplete) if not
  // finished.
  ~DraftWriter();

  DraftWriter(const DraftWriter&) = delete;
  DraftWriter& operator=(const DraftWriter&) = delete;

  const std::string& draft_id() const { return draft_id_; }

  void AppendText(std::string_view delta);
  void AppendReasoning(std::string_view delta);

  // Saves now if anything changed since the last save.
  Status Flush();
  // Appends the final message (its parts default to the streamed text and
  // reasoning; its model to the writer's) and removes the draft.
  Result<AppendResult> Finish(const Message& message);
  // Saves what is pending and stops; the draft stays, incomplete.
  Status Close();

  // How many saves reached the store (for tests and progress displays).
  int64_t saves() const;
  // The last error a background save met, if any (it is retried next tick).
  Status last_error() const;

 private:
  DraftWriter(Store* store, Draft draft, DraftWriterOptions options);
  void Run();
  Status SaveLocked(std::unique_lock<std::mutex>& lock);
  void Stop();

  Store* const store_;
  const DraftWriterOptions options_;
  const std::string draft_id_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  Draft draft_;            // guarded by mu_: what the caller has streamed
  bool dirty_ = false;     // guarded by mu_: draft_ differs from the stored row
  bool stopping_ = false;  // guarded by mu_
  bool done_ = false;      // guarded by mu_: finished or closed
  int64_t saves_ = 0;      // guarded by mu_
  Status last_error_;      // guarded by mu_
  std::mutex save_mu_;     // one save in flight at a time
  std::thread thread_;
};

}  // namespace sessiondb
