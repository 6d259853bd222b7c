#include "cli/shell_words.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace sessiondb::cli {

namespace fs = std::filesystem;

std::string ShellQuote(std::string_view word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_@%+=:,./-") == std::string_view::npos;
  if (plain) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string SelfExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec || !self.is_absolute()) return "";
  return self.string();
}

std::string SelfCommandWord() {
  const std::string self = SelfExecutable();
  if (self.empty()) return "sessiondb";
  if (const char* path = std::getenv("PATH")) {
    std::string_view dirs = path;
    while (!dirs.empty()) {
      const size_t colon = dirs.find(':');
      const std::string_view dir = dirs.substr(0, colon);
      dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
      if (dir.empty()) continue;
      std::error_code ec;
      const fs::path candidate = fs::path(dir) / "sessiondb";
      if (fs::exists(candidate, ec)) {  // the first one found is the one a shell runs
        return fs::equivalent(candidate, self, ec) ? "sessiondb" : ShellQuote(self);
      }
    }
  }
  return ShellQuote(self);
}

bool IsDatabaseUri(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::string AbsoluteStoreLocation(const std::string& location) {
  if (IsDatabaseUri(location)) return location;
  std::error_code ec;
  fs::path absolute = fs::absolute(location, ec);
  if (ec) return location;
  std::string normal = absolute.lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

}  // namespace sessiondb::cli
