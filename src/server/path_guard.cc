#include "server/path_guard.h"

#include <stdlib.h>

#include "core/file_io.h"

namespace sessiondb::server {

namespace fs = std::filesystem;

tl::expected<fs::path, std::string> ResolveAllowedPath(const std::string& path,
                                                       const std::vector<std::string>& allowed,
                                                       bool must_exist) {
  if (allowed.empty()) {
    return tl::make_unexpected(
        "this server accepts no file paths; the operator can allow folders with "
        "`sessiondb serve --allow-dir DIR` (or upload the file as the request body)");
  }
  if (path.empty()) return tl::make_unexpected("give a path");
  std::error_code ec;
  const fs::path given(path);
  if (!given.is_absolute()) return tl::make_unexpected("the path must be absolute: " + path);
  fs::path resolved = must_exist ? fs::canonical(given, ec) : fs::weakly_canonical(given, ec);
  if (ec) return tl::make_unexpected("cannot resolve " + path + ": " + ec.message());
  for (const std::string& dir : allowed) {
    fs::path root = fs::canonical(dir, ec);
    if (ec) continue;  // an allowed folder that went away allows nothing
    if (IsPathInside(resolved, root)) return resolved;
  }
  return tl::make_unexpected(path + " is outside the folders this server may use");
}

TempFolder::TempFolder() {
  std::string pattern = (fs::temp_directory_path() / "sessiondb-http-XXXXXX").string();
  if (mkdtemp(pattern.data())) path_ = pattern;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

}  // namespace sessiondb::server
