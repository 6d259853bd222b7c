// OutputFile: an export's output written beside its final name and renamed
// into place on Commit, so a failed or interrupted export never leaves a
// half-written file under that name. Shared by the export formats.
// Thread-safety: one writer per instance.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "sessiondb/status.h"

namespace sessiondb::interop {

class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Removes the temporary file unless Commit succeeded.
  ~OutputFile() {
    if (committed_ || tmp_.empty()) return;
    stream_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }

  // kAlreadyExists if `path` exists (exports never overwrite); kIo if the
  // temporary file cannot be created.
  Status Open(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      return Status::AlreadyExists(path.string() + " exists; exports never overwrite");
    }
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    path_ = path;
    tmp_ = path.string() + ".partial";
    stream_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!stream_) return Status::Io("cannot write " + tmp_.string());
    return Status::Ok();
  }

  void Write(std::string_view text) {
    stream_.write(text.data(), static_cast<std::streamsize>(text.size()));
  }

  // Flushes, closes and renames into place. kIo if any write failed.
  Status Commit() {
    stream_.close();
    if (stream_.fail()) return Status::Io("writing " + tmp_.string() + " failed");
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) return Status::Io("cannot rename " + tmp_.string() + ": " + ec.message());
    committed_ = true;
    return Status::Ok();
  }

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::ofstream stream_;
  bool committed_ = false;
};

}  // namespace sessiondb::interop
