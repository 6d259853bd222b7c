// Which files on the server's disk the HTTP API may touch: only those inside
// the folders the operator allowed (--allow-dir). A path is resolved first
// (symbolic links, "..", relative parts), so neither can lead out.
// Thread-safety: pure functions (they read the file system).
#pragma once

#include <filesystem>
#include <string>
#include <tl/expected.hpp>
#include <vector>

namespace sessiondb::server {

// The resolved path when it lies inside one of `allowed`, else why not (for a
// 403). `must_exist`: an import source; otherwise an export target, whose
// last components may not exist yet (the existing part is resolved).
tl::expected<std::filesystem::path, std::string> ResolveAllowedPath(
    const std::string& path, const std::vector<std::string>& allowed, bool must_exist);

// A folder under the system's temporary directory, removed with everything
// in it when this is destroyed.
class TempFolder {
 public:
  TempFolder();
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace sessiondb::server
