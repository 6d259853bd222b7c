// ImportClaudeFileHistory (claude_file_history.h).
#include "interop/claude_file_history.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/iso_time.h"
#include "core/json_parse.h"
#include "interop/jsonl_reader.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// The snapshot lines are short; a longer line is no snapshot worth reading.
constexpr size_t kMaxSnapshotLine = size_t{4} * 1024 * 1024;
// Backup names are "<hex>@v<n>": nothing that could leave the folder.
bool SafeBackupName(const std::string& name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    c == '@' || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return name.find("..") == std::string::npos;
}

std::string Str(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The file's absolute, normal path: as written when absolute, else against
// the record's cwd; "" when neither is absolute.
std::string AbsolutePath(const std::string& written, const std::string& cwd) {
  fs::path p(written);
  if (p.is_relative()) {
    if (cwd.empty() || fs::path(cwd).is_relative()) return "";
    p = fs::path(cwd) / p;
  }
  std::string normal = p.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

// At most kMaxFileVersionBytes of the backup; nullopt (with *why) otherwise.
std::optional<std::string> ReadBackup(const fs::path& path, std::string* why) {
  if (!MayRead(path)) {
    *why = "outside the folders this import may read";
    return std::nullopt;
  }
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || !fs::is_regular_file(fs::symlink_status(path, ec))) {
    *why = "missing or not a regular file";
    return std::nullopt;
  }
  if (size > static_cast<uintmax_t>(kMaxFileVersionBytes)) {
    *why = "larger than " + std::to_string(kMaxFileVersionBytes) + " bytes";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    *why = "could not be read";
    return std::nullopt;
  }
  return bytes;
}

}  // namespace

Result<int64_t> ImportClaudeFileHistory(const fs::path& transcript, ImportSink& sink) {
  const std::string session = transcript.stem().string();
  const fs::path backups =
      transcript.parent_path().parent_path().parent_path() / "file-history" / session;
  ASSIGN_OR_RETURN(std::unique_ptr<JsonlReader> reader,
                   JsonlReader::Open(transcript.string(), kMaxSnapshotLine));
  int64_t recorded = 0;
  JsonlReader::Line line;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&line));
    if (!more) break;
    if (line.text.find("\"file-history-snapshot\"") == std::string_view::npos) continue;
    Result<Json> record = ParseJson(line.text);
    if (!record || !record->is_object() || Str(*record, "type") != "file-history-snapshot") {
      continue;
    }
    auto snapshot = record->find("snapshot");
    if (snapshot == record->end() || !snapshot->is_object()) continue;
    auto tracked = snapshot->find("trackedFileBackups");
    if (tracked == snapshot->end() || !tracked->is_object()) continue;
    const std::string message_id = Str(*snapshot, "messageId").empty()
                                       ? Str(*record, "messageId")
                                       : Str(*snapshot, "messageId");
    const std::string cwd = Str(*record, "cwd");
    const std::string where = transcript.string() + ":" + std::to_string(line.number);
    for (const auto& [written, backup] : tracked->items()) {
      if (!backup.is_object()) continue;
      const std::string path = AbsolutePath(written, cwd);
      if (path.empty()) {
        sink.Skip(where, "a file snapshot of " + written + " names no absolute path");
        continue;
      }
      FileVersion v{.agent_session = session,
                    // One per file and snapshot: a re-import keeps it once.
                    .tool_use_id = "snapshot:" + message_id,
                    .file_path = path,
                    .phase = FileVersionPhase::kAfter,
                    .tool = "snapshot",
                    .source = "import",
                    .project = cwd,
                    .time_ms = ParseIsoTime(Str(backup, "backupTime")).value_or(0)};
      std::string content;
      auto name = backup.find("backupFileName");
      if (name == backup.end() || name->is_null()) {
        v.exists = false;  // the file did not exist then
      } else {
        const std::string file = name->is_string() ? name->get<std::string>() : "";
        if (!SafeBackupName(file)) {
          sink.Skip(where, "a file snapshot's backup name is not one Claude Code writes");
          continue;
        }
        std::string why;
        std::optional<std::string> bytes = ReadBackup(backups / file, &why);
        if (!bytes) {
          sink.Skip(where, "the backup of " + path + " (" + file + ") is " + why);
          continue;
        }
        content = std::move(*bytes);
      }
      Result<FileVersion> kept = sink.store().RecordFileVersion(v, content);
      if (!kept) {
        // A store that keeps no versions (a read-only one) says so once.
        if (kept.error().code() == StatusCode::kFailedPrecondition) return recorded;
        return Err(kept.error());
      }
      ++recorded;
    }
  }
  return recorded;
}

}  // namespace sessiondb::interop
