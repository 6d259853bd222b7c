// File versions from stored tool calls: what an imported transcript says a
// file became, when its content can be known. A whole-file write (Claude
// Code's Write, a Codex patch's "Add File") gives the file outright; an edit
// (Edit, MultiEdit, a patch's "Update File" hunks) gives it only applied to a
// version already known (recorded by the hook, an earlier import, or an
// earlier call of this scan), and only when each replaced fragment is found
// there. Anything else leaves the file unknown until its next whole write.
// The versions go under the agent's own session id when the session carries
// one ("source_session_id"), so the hook's rows for the same tool call are
// the ones kept (Store::RecordFileVersion keeps a call's version once).
//
// Example:
//   HistoryVersions versions(store);
//   for (const StoredToolCall& call : page) versions.Learn(call, writes_of_call);
//
// Thread-safety: one thread's, like its Store.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "memory/write_extract.h"
#include "sessiondb/store.h"
#include "store/index_backend.h"

namespace sessiondb::memory {

class HistoryVersions {
 public:
  explicit HistoryVersions(Store& store) : store_(store) {}

  // Records the versions one call yields; `writes` are its writes with
  // their file_path already absolute and normal. Returns how many "after"
  // versions it gave (a version the store already kept for the same call is
  // counted, not kept twice).
  Result<int64_t> Learn(const store::StoredToolCall& call,
                        const std::vector<ExtractedWrite>& writes);

 private:
  // The file's content as last known: this scan's, else its latest version
  // in the store; nullopt when unknown (or when it is "no file").
  Result<std::optional<std::string>> Known(const std::string& path);

  Store& store_;
  // What this scan last made each file (nullopt: unknown from here on).
  std::map<std::string, std::optional<std::string>> known_;
};

}  // namespace sessiondb::memory
