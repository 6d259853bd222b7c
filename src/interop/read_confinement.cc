#include "interop/read_confinement.h"

#include <sys/stat.h>

#include <utility>

#include "core/file_io.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;

thread_local bool t_active = false;
thread_local std::vector<fs::path> t_roots;

}  // namespace

ReadConfinement::ReadConfinement(const std::vector<std::string>& roots) {
  previous_active_ = t_active;
  previous_ = t_roots;
  if (roots.empty()) return;
  active_ = true;
  std::vector<fs::path> resolved;
  for (const std::string& r : roots) {
    std::error_code ec;
    fs::path p = fs::canonical(r, ec);
    if (!ec) resolved.push_back(std::move(p));
  }
  t_active = true;
  t_roots = std::move(resolved);
}

ReadConfinement::~ReadConfinement() {
  if (!active_) return;
  t_active = previous_active_;
  t_roots = std::move(previous_);
}

bool MayRead(const fs::path& path) {
  if (!t_active) return true;
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec) {
    // Missing: allowed only if no symbolic link is on the way (the importer
    // then says it is missing, which tells nothing outside the roots).
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return false;
    real = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) return false;
  }
  for (const fs::path& root : t_roots) {
    if (IsPathInside(real, root)) return true;
  }
  return false;
}

std::string OutsideReason(std::string_view shown) {
  return std::string(shown) +
         " leads outside the folders this import may read (a symbolic link?); it is left out";
}

bool IsPlainFileName(std::string_view name) {
  if (name.empty() || name == "." || name.find("..") != std::string_view::npos) return false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace sessiondb::interop
