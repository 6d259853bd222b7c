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
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

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

  const std::string& draft_id() const;

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
  // The saving thread, its mutexes and the buffered draft (draft_writer.cc).
  class Impl;
  explicit DraftWriter(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace sessiondb
