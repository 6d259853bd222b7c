// StoreFront's file versions, the code checkpoints (store.h, docs/memory.md):
// the rules both backends share (what is checked, redaction, the digest and
// the clock), before a backend writes the row.
#include <string>

#include "blob/sha256.h"
#include "store/store_front.h"

namespace sessiondb::store {

Result<FileVersion> StoreFront::RecordFileVersion(const FileVersion& version,
                                                  std::string_view content) {
  RETURN_IF_ERROR(CheckWritable());
  if (version.file_path.empty()) {
    return Err(Status::InvalidArgument("a file version needs the file's path"));
  }
  if (version.agent_session.empty()) {
    return Err(Status::InvalidArgument("a file version needs the agent's session id"));
  }
  if (version.exists && static_cast<int64_t>(content.size()) > kMaxFileVersionBytes) {
    return Err(Status::InvalidArgument(
        "file " + version.file_path + " is " + std::to_string(content.size()) +
        " bytes; a file version holds at most " + std::to_string(kMaxFileVersionBytes)));
  }
  FileVersion row = version;
  if (row.time_ms == 0) row.time_ms = Now();
  row.sha256.clear();
  row.size = 0;
  // Secrets never stored: a file's content is redacted like a message's text,
  // so its digest is that of the redacted bytes (a rewind then writes the
  // markers back, and reports the file as changed since).
  std::string kept;
  PendingBlob blob;
  if (row.exists) {
    kept.assign(content);
    RedactText(&kept);
    row.sha256 = blob::Sha256Hex(kept);
    row.size = static_cast<int64_t>(kept.size());
    blob.sha256 = row.sha256;
    blob.bytes = std::move(kept);
  }
  return backend_->InsertFileVersion(row, row.exists ? &blob : nullptr);
}

Result<std::vector<FileVersion>> StoreFront::ListFileVersions(const FileVersionQuery& query) {
  if (query.limit < 1 || query.limit > kMaxFileVersionsListed) {
    return Err(Status::InvalidArgument("a file version list's limit is 1.." +
                                       std::to_string(kMaxFileVersionsListed)));
  }
  if (query.agent_sessions.size() > 100) {
    return Err(Status::InvalidArgument("a file version list names at most 100 agent sessions"));
  }
  if (query.after_id < 0) return Err(Status::InvalidArgument("after_id must be 0 or more"));
  return backend_->SelectFileVersions(query);
}

}  // namespace sessiondb::store
