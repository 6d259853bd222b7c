#include "cli/access_denied.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace sessiondb::cli {
namespace {

namespace fs = std::filesystem;

// True when `mode` (R_OK, W_OK, X_OK) is refused at `path` for permissions;
// false when it is allowed or fails for another reason (nothing there).
bool Refused(const std::string& path, int mode) {
  if (faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0) return false;
  return errno == EACCES || errno == EPERM;
}

std::string Who() { return "this user (uid " + std::to_string(geteuid()) + ")"; }

// The name of the user `uid`, else its number.
std::string UserName(uid_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return "uid " + std::to_string(uid);
}

// " (drwx------, owner root)": what `ls -l` would say of `path`; empty when
// it cannot be looked at.
std::string ModeAndOwner(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  std::string mode = S_ISDIR(st.st_mode) ? "d" : "-";
  const char* letters = "rwxrwxrwx";
  for (int bit = 0; bit < 9; ++bit) {
    mode += (st.st_mode & (0400 >> bit)) != 0 ? letters[bit] : '-';
  }
  return " (" + mode + ", owner " + UserName(st.st_uid) + ")";
}

// The first folder on the way to `path` this process may not enter, if any.
std::optional<std::string> UnenterableFolder(const std::string& path) {
  std::error_code ec;
  const fs::path full = fs::absolute(path, ec);
  if (ec) return std::nullopt;
  fs::path at;
  auto last = std::prev(full.end());
  for (auto part = full.begin(); part != full.end() && part != last; ++part) {
    at /= *part;
    if (Refused(at.string(), X_OK)) return at.string();
  }
  return std::nullopt;
}

std::string InsideUnenterable(const std::string& path, const std::string& folder) {
  return "permission denied: " + Who() + " may not enter the folder " + folder +
         ModeAndOwner(folder) + ", which holds " + path;
}

}  // namespace

std::optional<std::string> ReadDenied(const std::string& path) {
  if (std::optional<std::string> folder = UnenterableFolder(path)) {
    return InsideUnenterable(path, *folder);
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  const bool dir = S_ISDIR(st.st_mode);
  if (!Refused(path, dir ? R_OK | X_OK : R_OK)) return std::nullopt;
  return "permission denied: " + Who() + " may not " + (dir ? "list the folder " : "read ") + path +
         ModeAndOwner(path);
}

std::optional<std::string> WriteDenied(const std::string& path) {
  if (std::optional<std::string> folder = UnenterableFolder(path)) {
    return InsideUnenterable(path, *folder);
  }
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    const bool dir = S_ISDIR(st.st_mode);
    if (!Refused(path, dir ? W_OK | X_OK : W_OK)) return std::nullopt;
    return "permission denied: " + Who() + " may not write " + (dir ? "in the folder " : "") +
           path + ModeAndOwner(path);
  }
  // Nothing there yet: it would be made in the nearest folder that exists.
  std::error_code ec;
  fs::path above = fs::absolute(path, ec).parent_path();
  while (!ec && !above.empty() && !fs::exists(above, ec)) {
    if (above == above.root_path()) break;
    above = above.parent_path();
  }
  if (ec || above.empty() || !Refused(above.string(), W_OK | X_OK)) return std::nullopt;
  return "permission denied: " + Who() + " may not create " + path + ": it may not write in " +
         above.string() + ModeAndOwner(above.string());
}

std::optional<std::string> StoreAccessDenied(const std::string& dir, bool create) {
  std::optional<std::string> why;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    why = create ? WriteDenied(dir) : ReadDenied(dir);
  } else if (!(why = ReadDenied(dir))) {
    // The database and what SQLite keeps beside it, the key envelope, the blobs.
    for (const char* name :
         {"sessiondb.db", "sessiondb.db-wal", "sessiondb.db-shm", "sessiondb.db-key", "blobs"}) {
      const std::string file = (fs::path(dir) / name).string();
      if ((why = ReadDenied(file))) break;
    }
  }
  if (!why) return std::nullopt;
  struct stat st {};
  const bool found = stat(dir.c_str(), &st) == 0;
  const std::string owner = found && st.st_uid != geteuid() ? UserName(st.st_uid) : "";
  return *why + "; " + (owner.empty() ? "" : "run sessiondb as " + owner + ", or ") +
         "give this user access (chmod, chown), or use a store of your own (--store DIR)";
}

}  // namespace sessiondb::cli
