#include "store/sqlite/store_conversion.h"

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <set>
#include <vector>

#include "blob/blob_store.h"
#include "blob/sealed_blob_store.h"
#include "core/file_io.h"
#include "store/key_envelope.h"
#include "store/sqlite/cipher_vfs.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/writer_lock.h"
#include "store/store_encryption.h"

namespace sessiondb::sqlite {
namespace {

namespace fs = std::filesystem;

std::string DbPathIn(const fs::path& dir) { return (dir / kEmbeddedDatabaseFile).string(); }

// The mark beside the database of `dir` that says a converted folder is whole.
std::string MarkIn(const fs::path& dir) {
  return DbPathIn(dir) + std::string(store::kConvertedMarkSuffix);
}

// A raw connection through the cipher VFS (which passes unkeyed files
// through), so that VACUUM INTO's target, opened with the main database's
// VFS, is sealed when its path has a key and plaintext when not.
class RawConnection {
 public:
  ~RawConnection() {
    if (db_ != nullptr) sqlite3_close_v2(db_);
  }
  Status Open(const std::string& path, int busy_timeout_ms) {
    const char* vfs = VfsFor(path);
    if (vfs == nullptr) vfs = "sessiondb-cipher";
    const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, vfs);
    if (rc != SQLITE_OK) return StatusFromSqlite(rc, db_, "opening " + path);
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    return Exec("PRAGMA temp_store = MEMORY");
  }
  Status Exec(const std::string& sql) {
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : StatusFromSqlite(rc, db_, sql);
  }
  Result<int64_t> QueryInt(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
    if (rc != SQLITE_OK) return Err(StatusFromSqlite(rc, db_, sql));
    rc = sqlite3_step(stmt);
    const int64_t value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
    sqlite3_finalize(stmt);
    if (rc != SQLITE_ROW) return Err(StatusFromSqlite(rc, db_, sql));
    return value;
  }
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

std::string SqlQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

Result<std::unique_ptr<blob::BlobStore>> BlobsOf(const fs::path& dir,
                                                 const std::optional<cipher::SecretKey>& key,
                                                 bool sync) {
  ASSIGN_OR_RETURN(std::unique_ptr<blob::FileBlobStore> files,
                   blob::FileBlobStore::Open((dir / kEmbeddedBlobDir).string(), sync));
  std::unique_ptr<blob::BlobStore> blobs = std::move(files);
  if (key) blobs = blob::SealBlobStore(std::move(blobs), key->Derive("blobs"));
  return blobs;
}

// The plan file beside the converted database: which verb made the folder.
std::string PlanIn(const fs::path& dir) { return DbPathIn(dir) + "-convert"; }

// Copies every blob of `from` into `to`, verified, except those `to` holds
// already (a killed run's, each written whole); removes from `to` what
// `from` no longer holds. Counts both into `report`.
Status ConvertBlobs(blob::BlobStore& from, blob::BlobStore& to, const ProgressFn& progress,
                    ConvertReport* report) {
  std::set<std::string> names;
  RETURN_IF_ERROR(from.ForEach([&](const blob::BlobInfo& info) {
    names.insert(info.sha256);
    return Status::Ok();
  }));
  std::vector<std::string> gone;
  RETURN_IF_ERROR(to.ForEach([&](const blob::BlobInfo& info) {
    if (!names.contains(info.sha256)) gone.push_back(info.sha256);
    return Status::Ok();
  }));
  for (const std::string& sha : gone) RETURN_IF_ERROR(to.Remove(sha));
  const auto total = static_cast<int64_t>(names.size());
  int64_t done = 0;
  if (progress) progress(0, total);
  for (const std::string& sha : names) {
    if (to.Stat(sha)) {
      ++report->blobs_resumed;
    } else {
      ASSIGN_OR_RETURN(std::string bytes, from.Get(sha, /*verify=*/true));
      RETURN_IF_ERROR(to.Put(sha, bytes));
    }
    if (progress) progress(++done, total);
  }
  report->blobs = total;
  return Status::Ok();
}

// Whether `work` holds a killed run of `verb` that can go on, and with
// which data key: its plan names the verb and, for an encrypted target, its
// envelope opens under the target's master key (another key given this
// time starts afresh). nullopt: start afresh.
std::optional<std::optional<cipher::SecretKey>> ResumableRun(const fs::path& work,
                                                             const ConversionTarget& to,
                                                             const std::string& verb) {
  std::error_code ec;
  if (!fs::exists(PlanIn(work), ec)) return std::nullopt;
  Result<std::optional<std::string>> plan =
      store::ReadSmallFile(PlanIn(work), "the conversion's plan");
  if (!plan || !*plan || **plan != verb + "\n") return std::nullopt;
  if (!to.master) return std::optional<cipher::SecretKey>();
  Result<std::optional<std::string>> envelope =
      store::ReadSmallFile(store::EnvelopePathFor(DbPathIn(work)), "the key envelope");
  if (!envelope || !*envelope) return std::nullopt;
  Result<cipher::SecretKey> key =
      store::OpenKeyEnvelope(**envelope, *to.master, store::kEmbeddedKeyScope, work.string());
  if (!key) return std::nullopt;
  return std::optional<cipher::SecretKey>(*key);
}

// Makes the converted folder afresh: its plan, then (encrypted) a new data
// key's envelope. Returns the data key.
Result<std::optional<cipher::SecretKey>> StartAfresh(const fs::path& work,
                                                     const ConversionTarget& to,
                                                     const std::string& verb, int64_t now_ms) {
  std::error_code ec;
  fs::remove_all(work, ec);
  if (ec) return Err(Status::Io("cannot clear " + work.string() + ": " + ec.message()));
  fs::create_directories(work, ec);
  if (ec) return Err(Status::Io("cannot create " + work.string() + ": " + ec.message()));
  fs::permissions(work, fs::perms::owner_all, fs::perm_options::replace, ec);
  RETURN_IF_ERROR(ReplaceFileDurably(PlanIn(work), verb + "\n"));
  if (!to.master) return std::optional<cipher::SecretKey>();
  store::NewEnvelope made = store::MakeKeyEnvelope(*to.master, store::kEmbeddedKeyScope, now_ms);
  RETURN_IF_ERROR(ReplaceFileDurably(store::EnvelopePathFor(DbPathIn(work)), made.text));
  return std::optional<cipher::SecretKey>(made.data_key);
}

// Removes the database files a killed run left in `work`: VACUUM INTO
// writes only to a file that does not exist.
Status ClearDatabase(const fs::path& work) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    fs::remove(DbPathIn(work) + suffix, ec);
    if (ec) return Status::Io("cannot clear " + DbPathIn(work) + suffix + ": " + ec.message());
  }
  return Status::Ok();
}

// Finishes a conversion whose folder is whole: the store as it was moves
// aside (or away), the converted folder takes its name.
Status SwapIn(const fs::path& dir, const fs::path& work, const std::string& verb, int64_t now_ms,
              bool remove_old, ConvertReport* report) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    const fs::path old = dir.string() + ".before-" + verb + "-" + std::to_string(now_ms);
    fs::rename(dir, old, ec);
    if (ec) return Status::Io("cannot move " + dir.string() + " aside: " + ec.message());
    report->old_copy = old.string();
  }
  fs::rename(work, dir, ec);
  if (ec) return Status::Io("cannot put the converted store in place: " + ec.message());
  fs::remove(MarkIn(dir), ec);
  fs::remove(PlanIn(dir), ec);
  RETURN_IF_ERROR(FsyncDirectory(dir.parent_path().empty() ? "." : dir.parent_path().string()));
  if (remove_old && !report->old_copy.empty()) {
    fs::remove_all(report->old_copy, ec);
    if (ec) return Status::Io("cannot remove " + report->old_copy + ": " + ec.message());
    report->old_copy.clear();
  }
  return Status::Ok();
}

}  // namespace

Status FinishInterruptedConversion(const std::string& dir_text) {
  const fs::path dir = store::StoreFolderOf(dir_text);
  const fs::path work = store::ConvertingFolderOf(dir_text);
  std::error_code ec;
  if (fs::exists(dir, ec) || !fs::exists(MarkIn(work), ec)) return Status::Ok();
  ConvertReport ignored;
  return SwapIn(dir, work, "convert", 0, /*remove_old=*/false, &ignored);
}

Result<ConvertReport> ConvertEmbeddedStore(const std::string& dir_text,
                                           const std::optional<cipher::SecretKey>& from_key,
                                           const ConversionTarget& to, const std::string& verb,
                                           int busy_timeout_ms, const ConvertOptions& options,
                                           int64_t now_ms) {
  const fs::path dir = store::StoreFolderOf(dir_text);
  const fs::path work = store::ConvertingFolderOf(dir_text);
  ConvertReport report;
  std::error_code ec;
  // Killed between the renames that end a conversion: finish it.
  if (!fs::exists(dir, ec) && fs::exists(MarkIn(work), ec)) {
    RETURN_IF_ERROR(SwapIn(dir, work, verb, now_ms, options.remove_old, &report));
    return report;
  }
  const std::string from_db = DbPathIn(dir);
  std::unique_ptr<PageKeyRegistration> from_pages;
  if (from_key) {
    ASSIGN_OR_RETURN(from_pages,
                     PageKeyRegistration::Register(from_db, from_key->Derive("sqlite-pages")));
  }
  // Writers wait while the store is copied: nothing they would write after
  // the copy began can be left behind in the old folder.
  std::unique_ptr<WriterLock> lock = WriterLock::Open(from_db);
  WriterLock::Held held;
  if (lock) {
    ASSIGN_OR_RETURN(held, lock->Acquire(busy_timeout_ms));
  }

  // A killed run of the same verb goes on with its data key and the blobs
  // it converted (its database, even a whole one, is copied again: the store
  // may have been written since); anything else left there is made afresh.
  std::optional<cipher::SecretKey> to_key;
  if (std::optional<std::optional<cipher::SecretKey>> resumed = ResumableRun(work, to, verb)) {
    to_key = *resumed;
    fs::remove(MarkIn(work), ec);
    RETURN_IF_ERROR(ClearDatabase(work));
  } else {
    ASSIGN_OR_RETURN(to_key, StartAfresh(work, to, verb, now_ms));
  }
  const std::string to_db = DbPathIn(work);
  std::unique_ptr<PageKeyRegistration> to_pages;
  if (to_key) {
    ASSIGN_OR_RETURN(to_pages,
                     PageKeyRegistration::Register(to_db, to_key->Derive("sqlite-pages")));
  }
  {
    RawConnection source;
    RETURN_IF_ERROR(source.Open(from_db, busy_timeout_ms));
    ASSIGN_OR_RETURN(int64_t page_size, source.QueryInt("PRAGMA page_size"));
    if (to_key && page_size != kCipherPageSize) {
      return Err(Status::FailedPrecondition(
          "the store's database has pages of " + std::to_string(page_size) +
          " bytes; an encrypted one needs " + std::to_string(kCipherPageSize) + ": run `sqlite3 " +
          from_db + " 'PRAGMA page_size=4096; VACUUM'` first"));
    }
    // VACUUM INTO gives the copy the reserve asked for here: room for each
    // page's nonce and tag when it is to be sealed.
    int reserve = to_key ? kCipherReserveBytes : 0;
    sqlite3_file_control(source.handle(), "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
    if (options.progress) options.progress(0, 0);
    RETURN_IF_ERROR(source.Exec("VACUUM INTO " + SqlQuote(to_db)));
  }
  report.database_bytes = static_cast<int64_t>(fs::file_size(to_db, ec));
  {
    // The copy opens and its pages check, through the new form.
    RawConnection check;
    RETURN_IF_ERROR(check.Open(to_db, busy_timeout_ms));
    ASSIGN_OR_RETURN(int64_t ok, check.QueryInt("SELECT count(*) FROM sessions"));
    (void)ok;
    RETURN_IF_ERROR(check.Exec("PRAGMA quick_check"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobStore> from_blobs, BlobsOf(dir, from_key, false));
  ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobStore> to_blobs, BlobsOf(work, to_key, true));
  RETURN_IF_ERROR(ConvertBlobs(*from_blobs, *to_blobs, options.progress, &report));
  // What else belongs to the store: the watch state of `import --watch`.
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(std::string(kEmbeddedDatabaseFile) + "-watch-")) {
      fs::copy_file(e.path(), work / name, fs::copy_options::overwrite_existing, ec);
    }
  }
  if (to_key) report.key_id = store::DataKeyId(*to_key);
  RETURN_IF_ERROR(ReplaceFileDurably(MarkIn(work), "whole\n"));
  held.Release();
  RETURN_IF_ERROR(SwapIn(dir, work, verb, now_ms, options.remove_old, &report));
  return report;
}

}  // namespace sessiondb::sqlite
