// The pieces the code checkpoint commands share (include/sessiondb/
// code_checkpoints.h): every version a query selects, however many pages,
// and the placing of versions in their conversations, with each session's
// log read once.
//
// Thread-safety: a VersionPlacer is one thread's, like its Store.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/code_checkpoints.h"

namespace sessiondb::memory {

// Every version `query` selects (its limit is the page size), in id order.
Result<std::vector<FileVersion>> ListAllFileVersions(Store& store, FileVersionQuery query);

// The content a version names: its blob, or "" for "no file".
Result<std::string> FileVersionContent(Store& store, const FileVersion& version);

// Places versions in stored conversations (the rules in code_checkpoints.h),
// reading each session's log once.
class VersionPlacer {
 public:
  explicit VersionPlacer(Store& store) : store_(store) {}

  // `version` placed in the store session of its agent session: the first
  // of StoreSessionsOfAgent holding its tool call, else the first of them
  // by time; no session when there is none.
  Result<PlacedFileVersion> Place(const FileVersion& version);
  // Its seq in `session_id`'s log.
  Result<int64_t> SeqIn(std::string_view session_id, const FileVersion& version);
  // The text of the last user message with text at or before `seq` in
  // `session_id`, cut to 200 characters; "" when none.
  Result<std::string> PromptAt(std::string_view session_id, int64_t seq);

 private:
  struct SessionLog {
    std::map<std::string, int64_t, std::less<>> call_seq;     // tool call id -> seq
    std::vector<std::pair<int64_t, int64_t>> seq_by_time;     // (ts, highest seq at or before)
    std::vector<std::pair<int64_t, std::string>> user_texts;  // (seq, text), by seq
  };
  Result<const SessionLog*> Log(std::string_view session_id);

  Store& store_;
  std::map<std::string, SessionLog, std::less<>> logs_;
  std::map<std::string, std::vector<std::string>, std::less<>> sessions_of_agent_;
};

}  // namespace sessiondb::memory
