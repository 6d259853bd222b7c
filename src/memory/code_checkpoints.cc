// The code checkpoint commands' rules (include/sessiondb/code_checkpoints.h):
// placing versions in conversations, the plan of a code rewind and of a
// restore, applying one, and a file's history. Blame is code_blame.cc.
#include "memory/code_checkpoints.h"

#include <algorithm>
#include <set>

#include "blob/sha256.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/unified_diff.h"
#include "core/uuid.h"
#include "memory/checkpoint_files.h"
#include "memory/write_path.h"

namespace sessiondb {
namespace {

constexpr size_t kPromptChars = 200;
constexpr int kMaxSessionsOfAgent = 50;

// `text` cut to `max_chars` UTF-8 characters, never inside one.
std::string CheckpointPromptCut(std::string_view text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars++ == max_chars) return std::string(text.substr(0, i));
  }
  return std::string(text);
}

std::string MetadataString(const Session& s, std::string_view key) {
  Result<nlohmann::json> meta = ParseJson(s.metadata_json.empty() ? "{}" : s.metadata_json);
  if (!meta || !meta->is_object()) return "";
  return MemberOr(*meta, key, std::string());
}

// The latest "after" version of `versions` (all of one file), else the
// latest of any phase; null when there is none.
const FileVersion* LatestRecordedWrite(const std::vector<FileVersion>& versions) {
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if (it->phase == FileVersionPhase::kAfter) return &*it;
  }
  return versions.empty() ? nullptr : &versions.back();
}

// Why the file on disk is not what `recorded` says the last write left, or "".
std::string ConflictWith(const FileRestore& file, const FileVersion* recorded) {
  if (recorded == nullptr) return "";
  const std::string version = " (version id " + std::to_string(recorded->id) + ", " +
                              (recorded->phase == FileVersionPhase::kBefore ? "before " : "") +
                              (recorded->tool.empty() ? "a tool call" : recorded->tool) + ")";
  if (!file.disk_exists && recorded->exists) {
    return "removed since the last recorded write" + version;
  }
  if (file.disk_exists && !recorded->exists) {
    return "created since the last recorded write" + version + ", which left no file";
  }
  if (!file.disk_exists) return "";
  if (file.disk_too_large) {
    return "past " + std::to_string(kMaxFileVersionBytes) +
           " bytes: changed since the last recorded write" + version;
  }
  if (blob::Sha256Hex(file.disk_content) != recorded->sha256) {
    return "changed since the last recorded write" + version;
  }
  return "";
}

// `file` (its path set) planned towards `target` (null: unknown) against
// the disk, with `recorded` the file's latest recorded write.
Result<FileRestore> PlanTowards(Store& store, FileRestore file, const FileVersion* target,
                                const FileVersion* recorded) {
  if (target == nullptr) {
    file.action = FileRestoreAction::kUnknown;
    return file;
  }
  file.version_id = target->id;
  ASSIGN_OR_RETURN(file.restored_content, memory::FileVersionContent(store, *target));
  Result<memory::DiskFile> disk = memory::ReadDiskFile(file.file_path, kMaxFileVersionBytes);
  file.action = target->exists ? FileRestoreAction::kRestore : FileRestoreAction::kRemove;
  if (!disk) {
    file.refused = disk.error().message();
    return file;
  }
  file.disk_exists = disk->exists;
  file.disk_too_large = disk->too_large;
  file.disk_content = std::move(disk->content);
  const bool same = target->exists ? file.disk_exists && !file.disk_too_large &&
                                         file.disk_content == file.restored_content
                                   : !file.disk_exists;
  if (same) {
    file.action = FileRestoreAction::kUnchanged;
    return file;
  }
  file.conflict = ConflictWith(file, recorded);
  return file;
}

}  // namespace

std::string_view FileRestoreActionName(FileRestoreAction action) {
  switch (action) {
    case FileRestoreAction::kRestore:
      return "restore";
    case FileRestoreAction::kRemove:
      return "remove";
    case FileRestoreAction::kUnchanged:
      return "unchanged";
    case FileRestoreAction::kUnknown:
      return "unknown";
  }
  return "unknown";
}

bool CodeRewindPlan::HasConflict() const {
  return std::any_of(files.begin(), files.end(),
                     [](const FileRestore& f) { return !f.conflict.empty(); });
}

bool CodeRewindPlan::HasRefusal() const {
  return std::any_of(files.begin(), files.end(),
                     [](const FileRestore& f) { return !f.refused.empty(); });
}

std::string CheckpointFilePath(std::string_view typed, std::string_view cwd) {
  return memory::ResolveWritePath(typed, cwd);
}

Result<std::vector<Session>> StoreSessionsOfAgent(Store& store, std::string_view agent_session) {
  std::vector<Session> out;
  if (agent_session.empty()) return out;
  ListOptions options;
  options.limit = kMaxSessionsOfAgent;
  options.archived = ArchiveFilter::kAll;
  options.metadata_key = "source_session_id";
  options.metadata_value = std::string(agent_session);
  ASSIGN_OR_RETURN(SessionPage page, store.ListSessions(options));
  out = std::move(page.sessions);
  const bool listed =
      std::any_of(out.begin(), out.end(), [&](const Session& s) { return s.id == agent_session; });
  if (!listed && std::ssize(out) < kMaxSessionsOfAgent) {
    Result<Session> same_id = store.GetSession(agent_session);
    if (same_id) {
      out.push_back(std::move(*same_id));
    } else if (same_id.error().code() != StatusCode::kNotFound &&
               same_id.error().code() != StatusCode::kInvalidArgument) {
      return Err(same_id.error());  // an agent's id that is no store id is simply not one
    }
  }
  // The main line of an import first: its branches share the source id.
  std::stable_partition(out.begin(), out.end(), [](const Session& s) {
    return s.parent_id.empty() && MetadataString(s, "forked_from").empty();
  });
  return out;
}

Result<std::vector<PlacedFileVersion>> SessionFileVersions(Store& store,
                                                           std::string_view session_id) {
  ASSIGN_OR_RETURN(Session session, store.GetSession(session_id));
  FileVersionQuery query;
  query.agent_sessions.push_back(session.id);
  const std::string source = MetadataString(session, "source_session_id");
  if (!source.empty() && source != session.id) query.agent_sessions.push_back(source);
  ASSIGN_OR_RETURN(std::vector<FileVersion> versions, memory::ListAllFileVersions(store, query));
  memory::VersionPlacer placer(store);
  std::vector<PlacedFileVersion> out;
  out.reserve(versions.size());
  for (FileVersion& v : versions) {
    ASSIGN_OR_RETURN(const int64_t seq, placer.SeqIn(session.id, v));
    out.push_back({.version = std::move(v), .session_id = session.id, .seq = seq});
  }
  return out;
}

Result<CodeRewindPlan> PlanCodeRewind(Store& store, std::string_view session_id, int64_t to_seq) {
  ASSIGN_OR_RETURN(Session session, store.GetSession(session_id));
  if (to_seq < 0 || to_seq > session.last_seq) {
    return Err(Status::InvalidArgument("seq " + std::to_string(to_seq) + " is outside 0.." +
                                       std::to_string(session.last_seq) + " of session " +
                                       session.id));
  }
  ASSIGN_OR_RETURN(std::vector<PlacedFileVersion> placed, SessionFileVersions(store, session.id));
  // Per file, the earliest undone version of the agent (they come in id
  // order). What sessiondb itself wrote back (an earlier rewind or restore)
  // is never undone as a call: it only says the file may be anywhere now, so
  // its file is planned again from the agent's versions, whatever its seq.
  std::map<std::string, const FileVersion*> earliest_undone;
  for (const PlacedFileVersion& p : placed) {
    const bool ours = p.version.source == kCheckpointRestoreSource;
    if (ours) {
      earliest_undone.try_emplace(p.version.file_path, nullptr);
    } else if (p.seq > to_seq) {
      auto [it, added] = earliest_undone.try_emplace(p.version.file_path, &p.version);
      if (!added && it->second == nullptr) it->second = &p.version;
    }
  }
  CodeRewindPlan plan;
  plan.session_id = session.id;
  plan.agent_session = MetadataString(session, "source_session_id");
  if (plan.agent_session.empty()) plan.agent_session = session.id;
  plan.to_seq = to_seq;
  for (const auto& [path, first] : earliest_undone) {
    const FileVersion* target = nullptr;
    if (first != nullptr && first->phase == FileVersionPhase::kBefore) {
      target = first;
    } else if (first != nullptr && !first->tool_use_id.empty()) {
      for (const PlacedFileVersion& p : placed) {
        const FileVersion& v = p.version;
        if (v.phase == FileVersionPhase::kBefore && v.file_path == path &&
            v.source != kCheckpointRestoreSource && v.agent_session == first->agent_session &&
            v.tool_use_id == first->tool_use_id) {
          target = &v;
          break;
        }
      }
    }
    if (target == nullptr) {  // the file as the agent's last write before to_seq left it
      for (const PlacedFileVersion& p : placed) {
        if (p.seq <= to_seq && p.version.file_path == path &&
            p.version.phase == FileVersionPhase::kAfter &&
            p.version.source != kCheckpointRestoreSource) {
          target = &p.version;
        }
      }
    }
    FileVersionQuery query;
    query.file_path = path;
    ASSIGN_OR_RETURN(std::vector<FileVersion> of_file, memory::ListAllFileVersions(store, query));
    FileRestore file;
    file.file_path = path;
    ASSIGN_OR_RETURN(FileRestore planned,
                     PlanTowards(store, std::move(file), target, LatestRecordedWrite(of_file)));
    plan.files.push_back(std::move(planned));
  }
  return plan;
}

namespace {

bool WritesFile(const FileRestore& f) {
  return !f.done &&
         (f.action == FileRestoreAction::kRestore || f.action == FileRestoreAction::kRemove);
}

}  // namespace

Status CheckFileRestores(const std::vector<FileRestore>& files, bool force) {
  const auto writes = WritesFile;
  std::string refused, conflicts;
  int64_t conflict_count = 0;
  for (const FileRestore& f : files) {
    if (!writes(f)) continue;
    if (!f.refused.empty()) refused += (refused.empty() ? "" : "; ") + f.refused;
    if (!f.conflict.empty()) {
      conflicts += (conflicts.empty() ? "" : ", ") + f.file_path;
      ++conflict_count;
    }
  }
  if (!refused.empty()) {
    return Status::FailedPrecondition("nothing was changed: " + refused);
  }
  if (conflict_count > 0 && !force) {
    return Status::FailedPrecondition(std::to_string(conflict_count) +
                                      (conflict_count == 1 ? " file was" : " files were") +
                                      " changed since the agent's last write (" + conflicts +
                                      "); nothing was changed: use --force to overwrite them");
  }
  return Status::Ok();
}

Status ApplyFileRestores(std::vector<FileRestore>& files, bool force) {
  RETURN_IF_ERROR(CheckFileRestores(files, force));
  for (FileRestore& f : files) {
    if (!WritesFile(f)) continue;
    // The file must still be what was planned against: what was checked is
    // what is overwritten.
    ASSIGN_OR_RETURN(memory::DiskFile now, memory::ReadDiskFile(f.file_path, kMaxFileVersionBytes));
    if (now.exists != f.disk_exists || now.too_large != f.disk_too_large ||
        now.content != f.disk_content) {
      return Status::FailedPrecondition(f.file_path + " changed while it was being restored");
    }
    if (f.action == FileRestoreAction::kRestore) {
      RETURN_IF_ERROR(memory::WriteDiskFile(f.file_path, f.restored_content));
    } else {
      RETURN_IF_ERROR(memory::RemoveDiskFile(f.file_path));
    }
    f.done = true;
  }
  return Status::Ok();
}

Status RecordFileRestores(Store& store, const std::vector<FileRestore>& files,
                          std::string_view agent_session, std::string_view tool) {
  const int64_t now = SystemNowMs();
  // One call per run: its own id, so recording it never matches an earlier one.
  const std::string call = "sessiondb-" + std::string(tool) + "-" + NewUuidV7(now);
  for (const FileRestore& f : files) {
    if (!f.done) continue;
    FileVersion v;
    v.agent_session = std::string(agent_session);
    v.tool_use_id = call;
    v.file_path = f.file_path;
    v.tool = std::string(tool);
    v.source = std::string(kCheckpointRestoreSource);
    if (!f.disk_too_large) {
      v.phase = FileVersionPhase::kBefore;
      v.exists = f.disk_exists;
      RETURN_IF_ERROR(store.RecordFileVersion(v, f.disk_content));
    }
    v.phase = FileVersionPhase::kAfter;
    v.exists = f.action == FileRestoreAction::kRestore;
    RETURN_IF_ERROR(store.RecordFileVersion(v, v.exists ? f.restored_content : ""));
  }
  return Status::Ok();
}

std::string FileRestoreDiff(const FileRestore& file, size_t max_lines) {
  if (file.action != FileRestoreAction::kRestore && file.action != FileRestoreAction::kRemove) {
    return "";
  }
  UnifiedDiffOptions options;
  options.old_label = file.disk_exists ? file.file_path + " (now)" : "/dev/null";
  options.new_label = file.action == FileRestoreAction::kRemove
                          ? "/dev/null"
                          : file.file_path + " (version " + std::to_string(file.version_id) + ")";
  options.max_lines = max_lines;
  if (file.disk_too_large) {
    return "--- " + options.old_label + "\n+++ " + options.new_label + "\n(the file now is past " +
           std::to_string(kMaxFileVersionBytes) + " bytes: not compared)\n";
  }
  const std::string_view restored =
      file.action == FileRestoreAction::kRemove ? std::string_view() : file.restored_content;
  std::string diff = UnifiedDiff(file.disk_content, restored, options);
  if (diff.empty() && file.disk_exists != (file.action == FileRestoreAction::kRestore)) {
    // An empty file created or removed: no line changes, but a change.
    diff = "--- " + options.old_label + "\n+++ " + options.new_label + "\n";
  }
  return diff;
}

Result<std::vector<FileHistoryEntry>> ReadFileHistory(Store& store, std::string_view file_path,
                                                      bool with_diffs, size_t diff_lines) {
  if (file_path.empty()) return Err(Status::InvalidArgument("a file's history needs its path"));
  FileVersionQuery query;
  query.file_path = std::string(file_path);
  ASSIGN_OR_RETURN(std::vector<FileVersion> versions, memory::ListAllFileVersions(store, query));
  memory::VersionPlacer placer(store);
  std::vector<FileHistoryEntry> out;
  std::string previous;  // the content of the previous entry
  bool previous_exists = false;
  for (const FileVersion& v : versions) {
    if (v.phase != FileVersionPhase::kAfter) continue;
    FileHistoryEntry entry;
    entry.number = std::ssize(out) + 1;
    ASSIGN_OR_RETURN(entry.placed, placer.Place(v));
    if (!entry.placed.session_id.empty()) {
      ASSIGN_OR_RETURN(entry.prompt, placer.PromptAt(entry.placed.session_id, entry.placed.seq));
    }
    ASSIGN_OR_RETURN(std::string content, memory::FileVersionContent(store, v));
    if (with_diffs) {
      UnifiedDiffOptions options;
      options.max_lines = diff_lines;
      options.old_label = file_path.empty() ? "" : std::string(file_path);
      if (entry.number == 1) {  // from the file as its call found it, when recorded
        const auto before =
            std::find_if(versions.begin(), versions.end(), [&](const FileVersion& b) {
              return b.phase == FileVersionPhase::kBefore && !v.tool_use_id.empty() &&
                     b.tool_use_id == v.tool_use_id && b.agent_session == v.agent_session;
            });
        if (before != versions.end()) {
          ASSIGN_OR_RETURN(previous, memory::FileVersionContent(store, *before));
          previous_exists = before->exists;
        }
        options.old_label += " (before)";
      } else {
        options.old_label += " (version " + std::to_string(entry.number - 1) + ")";
      }
      if (!previous_exists) options.old_label = "/dev/null";
      options.new_label =
          v.exists ? std::string(file_path) + " (version " + std::to_string(entry.number) + ")"
                   : "/dev/null";
      entry.diff = UnifiedDiff(previous, content, options);
      if (entry.diff.empty() && previous_exists != v.exists) {
        entry.diff = "--- " + options.old_label + "\n+++ " + options.new_label + "\n";
      }
    }
    previous = std::move(content);
    previous_exists = v.exists;
    out.push_back(std::move(entry));
  }
  return out;
}

Result<FileRestore> PlanFileRestore(Store& store, std::string_view file_path, int64_t number) {
  RETURN_IF_ERROR(memory::CheckCheckpointPath(file_path));
  FileVersionQuery query;
  query.file_path = std::string(file_path);
  ASSIGN_OR_RETURN(std::vector<FileVersion> versions, memory::ListAllFileVersions(store, query));
  std::vector<const FileVersion*> afters;
  for (const FileVersion& v : versions) {
    if (v.phase == FileVersionPhase::kAfter) afters.push_back(&v);
  }
  if (number < 1 || number > std::ssize(afters)) {
    return Err(Status::NotFound(std::string(file_path) + " has " + std::to_string(afters.size()) +
                                " recorded version" + (afters.size() == 1 ? "" : "s") +
                                "; there is no version " + std::to_string(number) +
                                " (see `sessiondb file-history`)"));
  }
  FileRestore file;
  file.file_path = std::string(file_path);
  return PlanTowards(store, std::move(file), afters[number - 1], LatestRecordedWrite(versions));
}

namespace memory {

Result<std::vector<FileVersion>> ListAllFileVersions(Store& store, FileVersionQuery query) {
  query.limit = kMaxFileVersionsListed;
  std::vector<FileVersion> all;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<FileVersion> page, store.ListFileVersions(query));
    const bool last = std::ssize(page) < query.limit;
    if (!page.empty()) query.after_id = page.back().id;
    for (FileVersion& v : page) all.push_back(std::move(v));
    if (last || page.empty()) return all;
  }
}

Result<std::string> FileVersionContent(Store& store, const FileVersion& version) {
  if (!version.exists) return std::string();
  return store.ReadBlob(version.sha256);
}

Result<const VersionPlacer::SessionLog*> VersionPlacer::Log(std::string_view session_id) {
  if (auto it = logs_.find(session_id); it != logs_.end()) return &it->second;
  ASSIGN_OR_RETURN(std::vector<Event> events, store_.ReadEvents(session_id));
  SessionLog log;
  for (const Event& e : events) {
    log.seq_by_time.emplace_back(e.ts_ms, e.seq);
    if (e.type != EventType::kMessage) continue;
    for (const Part& p : e.message.parts) {
      if (p.type == PartType::kToolCall && !p.tool_call_id.empty()) {
        log.call_seq.try_emplace(p.tool_call_id, e.seq);
      }
    }
    if (e.message.role == Role::kUser) {
      std::string text = e.message.Text();
      if (!text.empty())
        log.user_texts.emplace_back(e.seq, CheckpointPromptCut(text, kPromptChars));
    }
  }
  // By time, each with the highest seq at or before it: a binary search
  // then finds "the last event at or before t".
  std::sort(log.seq_by_time.begin(), log.seq_by_time.end());
  int64_t highest = 0;
  for (auto& [ts, seq] : log.seq_by_time) seq = highest = std::max(highest, seq);
  return &logs_.emplace(std::string(session_id), std::move(log)).first->second;
}

Result<int64_t> VersionPlacer::SeqIn(std::string_view session_id, const FileVersion& version) {
  ASSIGN_OR_RETURN(const SessionLog* log, Log(session_id));
  if (!version.tool_use_id.empty()) {
    if (auto it = log->call_seq.find(version.tool_use_id); it != log->call_seq.end()) {
      return it->second;
    }
  }
  const auto after =
      std::upper_bound(log->seq_by_time.begin(), log->seq_by_time.end(), version.time_ms,
                       [](int64_t t, const std::pair<int64_t, int64_t>& e) { return t < e.first; });
  return after == log->seq_by_time.begin() ? int64_t{0} : std::prev(after)->second;
}

Result<PlacedFileVersion> VersionPlacer::Place(const FileVersion& version) {
  auto known = sessions_of_agent_.find(version.agent_session);
  if (known == sessions_of_agent_.end()) {
    ASSIGN_OR_RETURN(std::vector<Session> sessions,
                     StoreSessionsOfAgent(store_, version.agent_session));
    std::vector<std::string> ids;
    ids.reserve(sessions.size());
    for (const Session& s : sessions) ids.push_back(s.id);
    known = sessions_of_agent_.emplace(version.agent_session, std::move(ids)).first;
  }
  PlacedFileVersion placed{.version = version, .session_id = "", .seq = 0};
  if (known->second.empty()) return placed;
  if (!version.tool_use_id.empty()) {
    for (const std::string& id : known->second) {
      ASSIGN_OR_RETURN(const SessionLog* log, Log(id));
      if (auto it = log->call_seq.find(version.tool_use_id); it != log->call_seq.end()) {
        placed.session_id = id;
        placed.seq = it->second;
        return placed;
      }
    }
  }
  placed.session_id = known->second.front();
  ASSIGN_OR_RETURN(placed.seq, SeqIn(placed.session_id, version));
  return placed;
}

Result<std::string> VersionPlacer::PromptAt(std::string_view session_id, int64_t seq) {
  ASSIGN_OR_RETURN(const SessionLog* log, Log(session_id));
  const auto after = std::upper_bound(
      log->user_texts.begin(), log->user_texts.end(), seq,
      [](int64_t s, const std::pair<int64_t, std::string>& e) { return s < e.first; });
  return after == log->user_texts.begin() ? std::string() : std::prev(after)->second;
}

}  // namespace memory
}  // namespace sessiondb
