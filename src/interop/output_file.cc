#include "interop/output_file.h"

#include <system_error>
#include <vector>

#include "interop/export_manifest.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;

// Writes reach the file system in pieces of this size.
constexpr size_t kBufferBytes = size_t{256} * 1024;

}  // namespace

Status CreateDirectories(FileSystem& file_system, const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    RETURN_IF_ERROR(file_system.CreateDirectory(it->string()));
  }
  return Status::Ok();
}

Status CheckMayWrite(const FileSystem& file_system, const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::Ok();
  const ExportFileSystem* files = AsExportFileSystem(file_system);
  if (files != nullptr && files->MayReplace(path)) return Status::Ok();
  if (files != nullptr && files->Classify(path) == InTheWay::kEarlierExport) {
    return Status::AlreadyExists(path.string() +
                                 " exists, written by an earlier export; replace it with "
                                 "--force (ExportOptions::replace_earlier_export)");
  }
  return Status::AlreadyExists(path.string() +
                               " exists; exports never overwrite a file they did not write "
                               "(or one changed since they wrote it)");
}

OutputFile::~OutputFile() {
  if (committed_ || !file_) return;
  // Best effort on the way out of a failed export: the error that brought
  // us here is what the caller hears; a leftover ".partial" file is ours and
  // never stands under the final name.
  (void)file_->Close();
  (void)fs_.Remove(tmp_.string());
}

Status OutputFile::Open(const fs::path& path) {
  RETURN_IF_ERROR(CheckMayWrite(fs_, path));
  if (path.has_parent_path()) RETURN_IF_ERROR(CreateDirectories(fs_, path.parent_path()));
  path_ = path;
  for (int attempt = 1; attempt <= 100; ++attempt) {
    tmp_ = path.string() + ".partial" + (attempt == 1 ? "" : "-" + std::to_string(attempt));
    Result<std::unique_ptr<WritableFile>> file =
        fs_.Create(tmp_.string(), /*exclusive=*/true, 0644);
    if (file) {
      file_ = std::move(*file);
      return Status::Ok();
    }
    if (file.error().code() != StatusCode::kAlreadyExists) return file.error();
  }
  return Status::AlreadyExists("cannot find a free temporary name beside " + path.string());
}

void OutputFile::Write(std::string_view text) {
  if (!error_.ok()) return;
  buffer_.append(text);
  if (buffer_.size() >= kBufferBytes) error_ = Flush();
}

Status OutputFile::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status s = file_->Append(buffer_);
  buffer_.clear();
  return s;
}

Status OutputFile::Commit() {
  if (!file_) return Status::Internal("OutputFile::Commit before a successful Open");
  Status s = error_;
  if (s.ok()) s = Flush();
  if (s.ok()) s = file_->Sync();
  if (s.ok()) s = file_->Close();
  if (s.ok()) s = fs_.Rename(tmp_.string(), path_.string());
  if (!s.ok()) return s;  // the destructor removes the temporary file
  committed_ = true;
  // The name is in place; making it durable is the last step. Should the
  // fsync of the folder fail, the export is whole but may not survive a
  // power loss: the caller hears it.
  const fs::path folder = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  return fs_.SyncDirectory(folder.string());
}

}  // namespace sessiondb::interop
