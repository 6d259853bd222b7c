#include "memory/write_path.h"

#include <cctype>
#include <vector>

namespace sessiondb::memory {
namespace {

bool IsSeparator(char c, bool windows) { return c == '/' || (windows && c == '\\'); }

// "C:\", "C:/" (a drive) or "\\" (a UNC share): the root of a Windows path.
size_t WindowsRootLength(std::string_view path) {
  if (path.size() >= 3 && std::isalpha(static_cast<unsigned char>(path[0])) && path[1] == ':' &&
      (path[2] == '\\' || path[2] == '/')) {
    return 3;
  }
  if (path.size() >= 2 && path[0] == '\\' && path[1] == '\\') return 2;
  return 0;
}

// `path` (absolute) without ".", empty segments and "..".
std::string Normalise(std::string_view path) {
  const size_t windows_root = WindowsRootLength(path);
  const bool windows = windows_root > 0;
  const char sep = windows ? '\\' : '/';
  std::string root = windows ? std::string(path.substr(0, windows_root)) : "/";
  if (windows) {
    for (char& c : root) {
      if (c == '/') c = '\\';
    }
  }
  std::vector<std::string_view> segments;
  size_t i = windows ? windows_root : 1;
  while (i <= path.size()) {
    size_t end = i;
    while (end < path.size() && !IsSeparator(path[end], windows)) ++end;
    const std::string_view segment = path.substr(i, end - i);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    i = end + 1;
  }
  std::string out = root;
  for (size_t k = 0; k < segments.size(); ++k) {
    if (k > 0) out += sep;
    out += segments[k];
  }
  return out;
}

}  // namespace

bool IsAbsolutePath(std::string_view path) {
  return (!path.empty() && path[0] == '/') || WindowsRootLength(path) > 0;
}

std::string ResolveWritePath(std::string_view path, std::string_view folder) {
  if (IsAbsolutePath(path)) return Normalise(path);
  if (!IsAbsolutePath(folder)) return std::string(path);
  std::string joined(folder);
  joined += WindowsRootLength(folder) > 0 ? '\\' : '/';
  joined += path;
  return Normalise(joined);
}

}  // namespace sessiondb::memory
