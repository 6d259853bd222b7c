#include "memory/hook_checkpoints.h"

#include <algorithm>
#include <map>
#include <vector>

#include "blob/sha256.h"
#include "memory/write_path.h"

namespace sessiondb::memory {
namespace {

// Records `file` (read from `path`) for `call`; the log line says what was
// kept, or why nothing was.
std::string RecordVersion(Store& store, const HookToolCall& call, const std::string& path,
                          FileVersionPhase phase, std::string_view source, const HookFile& file) {
  const std::string what = "hook: checkpoint " + std::string(FileVersionPhaseName(phase)) + " " +
                           call.tool + " of " + path;
  if (file.kind == HookFile::Kind::kRefused) return what + " not kept: " + file.why;
  FileVersion version{.agent_session = call.agent_session,
                      .tool_use_id = call.tool_use_id,
                      .file_path = path,
                      .phase = phase,
                      .exists = file.kind == HookFile::Kind::kRead,
                      .tool = call.tool,
                      .source = std::string(source),
                      .project = call.cwd};
  Result<FileVersion> kept = store.RecordFileVersion(version, file.text);
  if (!kept) return what + " failed: " + kept.error().message();
  return what + (kept->exists ? " (" + std::to_string(kept->size) + " bytes)" : " (no file)");
}

// The latest version of each file `agent_session` has versions of, the most
// recently recorded first, at most kMaxShellCheckedFiles.
Result<std::vector<FileVersion>> LatestVersionPerFile(Store& store,
                                                      const std::string& agent_session) {
  std::map<std::string, FileVersion, std::less<>> latest;
  FileVersionQuery query;
  query.agent_sessions = {agent_session};
  query.limit = 10000;
  int64_t rows = 0;
  while (rows < kMaxShellCheckedVersions) {
    ASSIGN_OR_RETURN(std::vector<FileVersion> page, store.ListFileVersions(query));
    rows += static_cast<int64_t>(page.size());
    const bool last_page = static_cast<int64_t>(page.size()) < query.limit;
    if (!page.empty()) query.after_id = page.back().id;
    // In id order: a later version of a path replaces the earlier one.
    for (FileVersion& v : page) latest.insert_or_assign(v.file_path, std::move(v));
    if (last_page) break;
  }
  std::vector<FileVersion> files;
  files.reserve(latest.size());
  for (auto& [path, v] : latest) files.push_back(std::move(v));
  std::sort(files.begin(), files.end(),
            [](const FileVersion& a, const FileVersion& b) { return a.id > b.id; });
  if (static_cast<int64_t>(files.size()) > kMaxShellCheckedFiles) {
    files.resize(static_cast<size_t>(kMaxShellCheckedFiles));
  }
  return files;
}

// Whether `file` on disk is other than `recorded` says. Sizes first: only
// a file of the recorded size is hashed.
bool DiffersFrom(const HookFile& file, const FileVersion& recorded) {
  if (file.kind == HookFile::Kind::kMissing) return recorded.exists;
  if (!recorded.exists) return true;
  if (static_cast<int64_t>(file.text.size()) != recorded.size) return true;
  return blob::Sha256Hex(file.text) != recorded.sha256;
}

}  // namespace

bool IsFileWritingTool(std::string_view tool) {
  return tool == "Write" || tool == "Edit" || tool == "MultiEdit" || tool == "NotebookEdit";
}

std::string RecordToolCallFile(Store& store, const HookToolCall& call, std::string_view typed_path,
                               FileVersionPhase phase, HookFile* read) {
  const std::string path = ResolveWritePath(typed_path, call.cwd);
  HookFile file = ReadFileForHook(path);
  std::string log;
  if (call.agent_session.empty()) {
    log = "hook: no checkpoint of " + path + ": the event names no session_id";
  } else if (!IsAbsolutePath(path)) {
    // Recorded paths are absolute (a rewind writes nothing else): a relative
    // one with no absolute cwd names no file we could find again.
    log = "hook: no checkpoint of " + path + ": a relative path and no absolute cwd";
  } else {
    log = RecordVersion(store, call, path, phase, "hook", file);
  }
  if (read != nullptr) *read = std::move(file);
  return log;
}

std::string RecordShellChanges(Store& store, const HookToolCall& call) {
  if (call.agent_session.empty()) return "hook: no shell check: the event names no session_id";
  Result<std::vector<FileVersion>> files = LatestVersionPerFile(store, call.agent_session);
  if (!files) return "hook: shell check failed: " + files.error().message();
  if (files->empty()) return "hook: shell check: no file of this session recorded yet";
  const auto deadline = std::chrono::steady_clock::now() + kShellCheckBudget;
  int checked = 0;
  int changed = 0;
  std::string notes;
  for (const FileVersion& recorded : *files) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      notes += "\nhook: shell check stopped after " + std::to_string(checked) + " of " +
               std::to_string(files->size()) + " files: its " +
               std::to_string(kShellCheckBudget.count()) + " ms are spent";
      break;
    }
    HookFile file =
        ReadFileForHook(recorded.file_path, kMaxHookFileBytes, std::min(left, kHookFileBudget));
    ++checked;
    if (file.kind == HookFile::Kind::kRefused) {
      notes += "\nhook: shell check of " + recorded.file_path + " skipped: " + file.why;
      continue;
    }
    if (!DiffersFrom(file, recorded)) continue;
    ++changed;
    notes += "\n" + RecordVersion(store, call, recorded.file_path, FileVersionPhase::kAfter,
                                  "shell", file);
  }
  return "hook: shell check of " + std::to_string(checked) + " file(s), " +
         std::to_string(changed) + " changed" + notes;
}

}  // namespace sessiondb::memory
