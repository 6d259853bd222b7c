// OutputFile: an export's output written beside its final name and renamed
// into place on Commit, so a failed or interrupted export never leaves a
// half-written file under that name, and never touches a file it did not
// create (export_manifest.h says which files an export may replace). Every write goes through the
// FileSystem seam (ExportOptions::file_system), where tests inject ENOSPC, EIO and failing fsyncs.
// Shared by the export formats.
//
// Example:
//   OutputFile f(fs);
//   RETURN_IF_ERROR(f.Open(out / "chat.md"));
//   f.Write(markdown);
//   RETURN_IF_ERROR(f.Commit());
//
// Thread-safety: one writer per instance.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "sessiondb/file_system.h"
#include "sessiondb/status.h"

namespace sessiondb::interop {

// Creates the folder `dir` and the parents it lacks through `fs`.
Status CreateDirectories(FileSystem& fs, const std::filesystem::path& dir);

// Ok if nothing is at `path`, or if it may be replaced: the export's own
// manifest, or with ExportOptions::replace_earlier_export a file an earlier
// export wrote and nobody changed since (export_manifest.h). Else
// kAlreadyExists saying which of the two it is.
Status CheckMayWrite(const FileSystem& fs, const std::filesystem::path& path);

class OutputFile {
 public:
  explicit OutputFile(FileSystem& fs) : fs_(fs) {}
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Removes the temporary file unless Commit succeeded.
  ~OutputFile();

  // kAlreadyExists if `path` exists and CheckMayWrite refuses it (exports
  // never overwrite what they did not write); kIo if the
  // folder or the temporary file cannot be created. The temporary file is
  // created exclusively (path + ".partial", or ".partial-2", ... when that
  // name is taken), so a file of someone else's is never emptied.
  Status Open(const std::filesystem::path& path);

  // Appends `text`. Buffered; the first failure is kept and returned by
  // Commit, and the writes after it are dropped.
  void Write(std::string_view text);

  // Writes what is buffered, fsyncs, closes, renames into place and fsyncs
  // the folder. The first error of any write (kIo) is returned, and the
  // temporary file is removed.
  Status Commit();

 private:
  Status Flush();

  FileSystem& fs_;
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::unique_ptr<WritableFile> file_;
  std::string buffer_;
  Status error_;
  bool committed_ = false;
};

}  // namespace sessiondb::interop
