#include "store/postgres/pg_vector_cache.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "blob/sha256.h"
#include "store/postgres/pg_store_internal.h"

namespace sessiondb::postgres {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCoverPrefix = "hnsw:";
constexpr std::string_view kEpochPrefix = "cache-epoch ";

std::string CoverPath(const std::string& dir, std::string_view key) {
  std::string name;
  for (char ch : key) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return (fs::path(dir) / (name + ".cover")).string();
}

// The database's epoch for `key`, made when `create` and there is none.
Result<std::optional<std::string>> Epoch(PgConnection& c, const std::string& ns,
                                         std::string_view key, bool create) {
  PgParams p;
  p.Add(ns).Add(key);
  if (create) {
    // One statement: racing builders agree on the first epoch written.
    RETURN_IF_ERROR(
        c.Run("INSERT INTO index_meta (namespace, key, value) VALUES ($1, $2, 'cache-epoch ' ||"
              " md5(random()::text || clock_timestamp()::text)) ON CONFLICT DO NOTHING",
              p));
  }
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT value FROM index_meta WHERE namespace = $1 AND key = $2", p));
  if (r.rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(std::string(r.Text(0, 0)));
}

// Removes every file of the namespace's folder: a stale graph (of vectors
// since cleared or erased) must not stay on disk. A file that cannot be
// removed is left (the next read tries again); it is never used.
void EmptyFolder(const std::string& dir, FileSystem& file_system) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    (void)file_system.Remove(it->path().string());
  }
}

}  // namespace

bool IsVectorCacheKey(std::string_view key) { return key.starts_with(kCoverPrefix); }

std::string VectorCacheRoot() {
  if (const char* dir = std::getenv("SESSIONDB_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return (fs::path(xdg) / "sessiondb").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return (fs::path(home) / ".cache" / "sessiondb").string();
  }
  return "";
}

Result<std::string> VectorCacheDirectory(PgConnection& c, const std::string& ns) {
  const std::string root = VectorCacheRoot();
  if (root.empty()) return std::string();
  // The server's identity: its system identifier (the same on every replica
  // of one cluster, which hold the same vectors), else its address.
  std::string server;
  if (Result<PgResult> id = c.Exec("SELECT system_identifier::text FROM pg_control_system()");
      id && id->rows() == 1) {
    server = std::string(id->Text(0, 0));
  } else {
    ASSIGN_OR_RETURN(PgResult where, c.Exec("SELECT coalesce(inet_server_addr()::text, 'local')"
                                            " || ':' || inet_server_port()::text"));
    server = std::string(where.Text(0, 0));
  }
  ASSIGN_OR_RETURN(PgResult db, c.Exec("SELECT current_database()"));
  const std::string digest = blob::Sha256Hex(
      {server, std::string_view("\0", 1), db.Text(0, 0), std::string_view("\0", 1), ns});
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return std::string();  // no cache here: the exact scan serves
  fs::permissions(root, fs::perms::owner_all, fs::perm_options::replace, ec);
  const std::string dir = (fs::path(root) / ("pg-" + digest.substr(0, 16))).string();
  fs::create_directory(dir, ec);
  if (ec) return std::string();
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  return dir;
}

Result<std::optional<std::string>> ReadVectorCover(PgConnection& c, const std::string& ns,
                                                   const std::string& dir, std::string_view key,
                                                   FileSystem& file_system) {
  std::ifstream in(CoverPath(dir, key), std::ios::binary);
  if (!in) return std::optional<std::string>();
  std::string epoch, value;
  std::getline(in, epoch);
  std::getline(in, value);
  ASSIGN_OR_RETURN(std::optional<std::string> current, Epoch(c, ns, key, /*create=*/false));
  if (!current || *current != epoch || !epoch.starts_with(kEpochPrefix) || value.empty()) {
    EmptyFolder(dir, file_system);
    return std::optional<std::string>();
  }
  return std::optional<std::string>(value);
}

Status WriteVectorCover(PgConnection& c, const std::string& ns, const std::string& dir,
                        std::string_view key, std::string_view value, FileSystem& file_system) {
  ASSIGN_OR_RETURN(std::optional<std::string> epoch, Epoch(c, ns, key, /*create=*/true));
  if (!epoch) return Status::Internal("no cache epoch for " + std::string(key));
  const std::string path = CoverPath(dir, key);
  const std::string temporary = path + ".tmp";
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                   file_system.Create(temporary, /*exclusive=*/false, 0600));
  Status written = file->Append(*epoch + "\n" + std::string(value) + "\n");
  if (written.ok()) written = file->Sync();
  if (Status closed = file->Close(); written.ok()) written = closed;
  if (written.ok()) written = file_system.Rename(temporary, path);
  if (!written.ok()) {
    (void)file_system.Remove(temporary);
    return written;
  }
  return file_system.SyncDirectory(dir);
}

}  // namespace sessiondb::postgres
