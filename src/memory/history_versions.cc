// HistoryVersions (history_versions.h).
#include "memory/history_versions.h"

#include <utility>

namespace sessiondb::memory {

Result<std::optional<std::string>> HistoryVersions::Known(const std::string& path) {
  if (auto it = known_.find(path); it != known_.end()) return it->second;
  // The latest version in the store, a page of them at a time (a file
  // rarely has many).
  std::optional<FileVersion> latest;
  FileVersionQuery query{.file_path = path, .limit = 1000};
  while (true) {
    ASSIGN_OR_RETURN(std::vector<FileVersion> page, store_.ListFileVersions(query));
    if (page.empty()) break;
    latest = page.back();
    query.after_id = page.back().id;
  }
  std::optional<std::string> content;
  if (latest && latest->exists) {
    ASSIGN_OR_RETURN(std::string bytes, store_.ReadBlob(latest->sha256));
    content = std::move(bytes);
  }
  // A file with no version, or whose last version is "no file", is unknown
  // to an edit: an edit of a file nobody saw cannot be replayed.
  known_[path] = content;
  return content;
}

Result<int64_t> HistoryVersions::Learn(const store::StoredToolCall& call,
                                       const std::vector<ExtractedWrite>& writes) {
  // A call's writes, file by file in the order they come: a MultiEdit's
  // edits apply one after another to the same file and make one version.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ExtractedWrite*>> by_file;
  for (const ExtractedWrite& w : writes) {
    if (w.file_path.empty() || w.file_path[0] != '/') continue;  // no folder known
    auto [it, added] = by_file.try_emplace(w.file_path);
    if (added) order.push_back(w.file_path);
    it->second.push_back(&w);
  }
  int64_t recorded = 0;
  for (const std::string& path : order) {
    ASSIGN_OR_RETURN(std::optional<std::string> before, Known(path));
    std::optional<std::string> after = before;
    for (const ExtractedWrite* w : by_file[path]) {
      if (w->whole_file) {
        after = w->new_code;
        continue;
      }
      const size_t at =
          after && !w->old_code.empty() ? after->find(w->old_code) : std::string::npos;
      if (at == std::string::npos) {
        after.reset();  // the edit does not fit what we know: unknown from here
        break;
      }
      after->replace(at, w->old_code.size(), w->new_code);
    }
    known_[path] = after;
    if (!after) continue;
    FileVersion v{
        .agent_session = call.agent_session.empty() ? call.session_id : call.agent_session,
        .tool_use_id = call.call_id,
        .file_path = path,
        .phase = FileVersionPhase::kBefore,
        .exists = before.has_value(),
        .tool = by_file[path].front()->tool.empty() ? call.name : by_file[path].front()->tool,
        .source = "import",
        .project = call.project,
        .time_ms = call.time_ms};
    // The file as the call found it, when known: what a rewind puts back.
    if (before && !call.call_id.empty()) {
      ASSIGN_OR_RETURN(FileVersion kept, store_.RecordFileVersion(v, *before));
      (void)kept;
    }
    v.phase = FileVersionPhase::kAfter;
    v.exists = true;
    ASSIGN_OR_RETURN(FileVersion kept, store_.RecordFileVersion(v, *after));
    (void)kept;
    ++recorded;
  }
  return recorded;
}

}  // namespace sessiondb::memory
