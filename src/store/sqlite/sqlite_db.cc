#include "store/sqlite/sqlite_db.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "store/sqlite/cached_bm25.h"
#include "store/sqlite/cipher_vfs.h"
#include "store/sqlite/search_text.h"

namespace sessiondb::sqlite {

Status StatusFromSqlite(int rc, sqlite3* db, std::string_view context) {
  const std::string sqlite_says = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message =
      std::string(context) + ": " + sqlite_says + " (sqlite code " + std::to_string(rc) + ")";
  if (rc == SQLITE_IOERR_DATA) {  // only the encrypting VFS returns it (cipher_vfs.h)
    std::string detail = LastCipherFailure();
    if (detail.empty()) detail = sqlite_says;
    return Status::Corruption(std::string(context) +
                              ": the store's database does not decrypt: " + detail);
  }
  switch (rc & 0xFF) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return Status::Ok();
    // What a user meets in normal use says what happened and what to do,
    // never the SQL that met it (`context` is often a statement).
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_PROTOCOL:  // lost a race for the WAL index with another process
      return Status::Busy("another writer held the store past the busy timeout (SQLite: " +
                          sqlite_says + "); try again when it is done");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(message);
    case SQLITE_READONLY:
      return Status::FailedPrecondition(
          "cannot write the store: it is open read-only (its files or folder are not "
          "writable by this user, or it was opened read-only; SQLite: " +
          sqlite_says +
          "); it can be listed, shown, searched and exported; run this as the user who "
          "owns it to change it");
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return Status::Io(message);
    case SQLITE_CONSTRAINT:
      return Status::AlreadyExists(message);
    default:
      return Status::Internal(message);
  }
}

Statement::~Statement() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Statement& Statement::Bind(int index, int64_t value) {
  if (sqlite3_stmt_busy(stmt_)) sqlite3_reset(stmt_);
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  if (sqlite3_stmt_busy(stmt_)) sqlite3_reset(stmt_);
  sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Statement& Statement::BindStatic(int index, std::string_view text) {
  if (sqlite3_stmt_busy(stmt_)) sqlite3_reset(stmt_);
  sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8);
  return *this;
}

Statement& Statement::BindDouble(int index, double value) {
  if (sqlite3_stmt_busy(stmt_)) sqlite3_reset(stmt_);
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::BindBlob(int index, std::string_view bytes) {
  if (sqlite3_stmt_busy(stmt_)) sqlite3_reset(stmt_);
  sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  if (sqlite3_stmt_busy(stmt_)) sqlite3_reset(stmt_);
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Statement& Statement::BindOptional(int index, const std::optional<std::string>& text) {
  return text ? Bind(index, std::string_view(*text)) : BindNull(index);
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Err(StatusFromSqlite(rc, db_, sqlite3_sql(stmt_)));
}

Status Statement::Run() {
  Result<bool> stepped = Step();
  sqlite3_reset(stmt_);
  return stepped ? Status::Ok() : stepped.error();
}

std::string_view Statement::ColumnText(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (p == nullptr) return {};
  return std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string_view Statement::ColumnBlob(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
  if (p == nullptr) return {};
  return std::string_view(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

namespace {

// Why this process may not write `path` (an existing database file) or the
// directory that holds it; empty when it may. Uses the effective uid, as
// opening does, so root (who may write anything) gets an empty answer.
std::string NotWritableReason(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return "";
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const std::string who = "this user (uid " + std::to_string(geteuid()) + ")";
  if (faccessat(AT_FDCWD, dir.c_str(), W_OK, AT_EACCESS) != 0) {
    return errno == EROFS ? "its folder " + dir + " is on a read-only file system"
                          : "its folder " + dir + " is not writable by " + who;
  }
  if (faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
    return errno == EROFS ? path + " is on a read-only file system"
                          : path + " is not writable by " + who;
  }
  return "";
}

// A file: URI for `path` with `query`, escaping what URIs reserve.
std::string FileUri(const std::string& path, const std::string& query) {
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7F) {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      uri += hex;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?" + query;
}

// Readies a connection through the encrypting VFS: temporary tables and
// statement journals in memory (the VFS keeps no temporary file), and a new
// database laid out as the VFS needs it (4096-byte pages, kCipherReserveBytes
// free at the end of each) before its first page is written. Reading the page
// count opens page 1, so a wrong key fails here, before anything is written.
Status PrepareEncryptedConnection(sqlite3* db, const std::string& path) {
  int rc = sqlite3_exec(db, "PRAGMA temp_store = MEMORY", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return StatusFromSqlite(rc, db, "opening " + path);
  sqlite3_stmt* stmt = nullptr;
  rc = sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &stmt, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
  const int64_t pages = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) return StatusFromSqlite(rc, db, "opening " + path);
  if (pages == 0 && !sqlite3_db_readonly(db, "main")) {
    rc = sqlite3_exec(db, "PRAGMA page_size = 4096", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return StatusFromSqlite(rc, db, "opening " + path);
    int reserve = kCipherReserveBytes;
    rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
    if (rc != SQLITE_OK) return StatusFromSqlite(rc, db, "opening " + path);
  }
  int reserve = -1;  // only asks
  rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve);
  if (rc != SQLITE_OK) return StatusFromSqlite(rc, db, "opening " + path);
  if (pages > 0 && reserve != kCipherReserveBytes) {
    return Status::Corruption(path + " reserves " + std::to_string(reserve) +
                              " bytes per page; an encrypted store's database reserves " +
                              std::to_string(kCipherReserveBytes));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, int busy_timeout_ms,
                                                 Access access) {
  std::string read_only_reason;
  if (access == Access::kReadOnly) read_only_reason = "it was opened read-only";
  if (access == Access::kAuto) read_only_reason = NotWritableReason(path);

  std::string target = path;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (!read_only_reason.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return Err(Status::NotFound("no database at " + path + " to open read-only"));
    }
    // Without a -wal every committed write is in the file itself, and a reader
    // that cannot create the -shm must be told the file will not change
    // (immutable); with one, the -shm that its writer made is read as it is.
    const bool has_wal = std::filesystem::exists(path + "-wal", ec);
    const bool can_create_shm = access == Access::kReadOnly && NotWritableReason(path).empty();
    target = FileUri(path, has_wal || can_create_shm ? "mode=ro" : "mode=ro&immutable=1");
    flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
  }
  // With a page key registered for the path, through the encrypting VFS;
  // a plaintext file is refused before SQLite touches it.
  const char* vfs = VfsFor(path);
  if (vfs != nullptr && IsPlaintextDatabase(path)) {
    return Err(Status::FailedPrecondition(
        path +
        " is a plaintext SQLite database but a key is configured for it; encrypt it "
        "first (sessiondb encrypt) or open it without a key"));
  }
  sqlite3* db = nullptr;
  // Extended codes from the open itself, which reads page 1: a page that
  // does not decrypt is SQLITE_IOERR_DATA, not a bare I/O error.
  int rc = sqlite3_open_v2(target.c_str(), &db, flags | SQLITE_OPEN_EXRESCODE, vfs);
  if (rc != SQLITE_OK) {
    Status s = StatusFromSqlite(rc, db, "opening " + path);
    sqlite3_close(db);
    return Err(s);
  }
  sqlite3_busy_timeout(db, busy_timeout_ms);
  sqlite3_extended_result_codes(db, 1);
  std::unique_ptr<Database> database(new Database(db));
  if (vfs != nullptr) RETURN_IF_ERROR(PrepareEncryptedConnection(db, path));
  database->read_only_reason_ = std::move(read_only_reason);
  // The full-text index's triggers and views call it (schema v3 on).
  rc = RegisterSearchTextFunction(db);
  // Keyword search ranks with it (sqlite_index_keyword.cc).
  if (rc == SQLITE_OK) rc = RegisterCachedBm25Function(db);
  if (rc != SQLITE_OK)
    return Err(StatusFromSqlite(rc, db, "registering sessiondb's SQL functions"));
  if (database->read_only_reason_.empty()) database->writer_lock_ = WriterLock::Open(path);
  return database;
}

Database::~Database() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

Status Database::Exec(const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  Status s = StatusFromSqlite(rc, db_, sql.substr(0, 80));
  sqlite3_free(error);
  return s;
}

Result<Statement> Database::Prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return Statement(it->second, db_);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Err(StatusFromSqlite(rc, db_, std::string("preparing ") + sql));
  cache_.emplace(sql, stmt);
  return Statement(stmt, db_);
}

Result<std::optional<int64_t>> Database::QueryInt(const char* sql) {
  ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row || stmt.ColumnIsNull(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(stmt.ColumnInt(0));
}

Result<Transaction> Transaction::Begin(Database* db) {
  WriterLock::Held writer;
  if (db->writer_lock_) {
    // The busy timeout as the connection has it now (a PRAGMA may have changed it).
    ASSIGN_OR_RETURN(std::optional<int64_t> timeout, db->QueryInt("PRAGMA busy_timeout"));
    const int timeout_ms = static_cast<int>(timeout.value_or(0));
    const auto start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(writer, db->writer_lock_->Acquire(timeout_ms));
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    if (waited > 0) {
      // What is left of the timeout is for SQLite's lock (a writer of an
      // older build, or a statement outside a transaction, may hold it).
      sqlite3_busy_timeout(db->db_, static_cast<int>(std::max<int64_t>(1, timeout_ms - waited)));
      Status begun = db->Exec("BEGIN IMMEDIATE");
      sqlite3_busy_timeout(db->db_, timeout_ms);
      RETURN_IF_ERROR(begun);
      return Transaction(db, std::move(writer));
    }
  }
  RETURN_IF_ERROR(db->Exec("BEGIN IMMEDIATE"));
  return Transaction(db, std::move(writer));
}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)db_->Exec("ROLLBACK");
  writer_.Release();
}

Status Transaction::Commit() {
  Status s = db_->Exec("COMMIT");
  if (s.ok()) {
    db_ = nullptr;
    writer_.Release();
  }
  return s;
}

Result<Savepoint> Savepoint::Begin(Database* db) {
  RETURN_IF_ERROR(db->Exec("SAVEPOINT part"));
  return Savepoint(db);
}

Savepoint::~Savepoint() {
  if (db_ != nullptr) (void)Rollback();
}

Status Savepoint::Release() {
  Status s = db_->Exec("RELEASE part");
  if (s.ok()) db_ = nullptr;
  return s;
}

Status Savepoint::Rollback() {
  // ROLLBACK TO keeps the savepoint open; RELEASE then removes it.
  Status s = db_->Exec("ROLLBACK TO part; RELEASE part");
  db_ = nullptr;
  return s;
}

}  // namespace sessiondb::sqlite
