// A thin RAII layer over the SQLite C API: a connection with a cache of
// prepared statements, and a Statement handle that binds, steps and resets.
// SQLite's result codes become Status values here and nowhere else.
// Thread-safety: none; SqliteStore serialises access to a connection.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sessiondb/status.h"
#include "store/sqlite/writer_lock.h"

namespace sessiondb::sqlite {

// Maps a SQLite result code to a Status: BUSY/LOCKED -> kBusy,
// CORRUPT/NOTADB -> kCorruption, READONLY -> kFailedPrecondition,
// FULL/IOERR/CANTOPEN/PERM -> kIo, else kInternal. `context` (what was being
// done, often the SQL) heads the message, except for BUSY and READONLY, which
// a user meets in normal use: those say what happened and what to do instead.
Status StatusFromSqlite(int rc, sqlite3* db, std::string_view context);

// A prepared statement borrowed from the connection's cache. Reset and its
// bindings cleared when the handle goes out of scope.
class Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept : stmt_(other.stmt_), db_(other.db_) {
    other.stmt_ = nullptr;
  }
  ~Statement();

  // Binding positions start at 1, as in SQLite. Binding a statement that has
  // already been stepped resets it first, so a cached statement can be reused
  // in a loop.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, std::string_view text);  // SQLITE_TRANSIENT: copied
  // Not copied (SQLITE_STATIC): `text` must stay put until the statement is
  // stepped to its end, reset by Run, or bound again.
  Statement& BindStatic(int index, std::string_view text);
  Statement& BindDouble(int index, double value);
  Statement& BindBlob(int index, std::string_view bytes);  // copied
  Statement& BindNull(int index);
  Statement& BindOptional(int index, const std::optional<std::string>& text);  // NULL when absent

  // Returns true when a row is ready, false when done.
  Result<bool> Step();
  // Steps a statement that returns no rows, then resets it.
  Status Run();
  // Rewinds the statement so it can be stepped again; bindings are kept.
  void Reset() { sqlite3_reset(stmt_); }

  int64_t ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::string_view ColumnText(int col) const;
  std::string_view ColumnBlob(int col) const;
  double ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
  bool ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_;
  sqlite3* db_;
};

// How Database::Open opens a file.
enum class Access {
  kReadWrite,  // creating it if missing
  kReadOnly,   // never written; writes fail with kFailedPrecondition
  // Read-only when the file exists and this process may not write it or the
  // directory holding it (SQLite needs the directory for its -wal and -shm
  // files), else read-write.
  kAuto,
};

class Database {
 public:
  // Opens the database file with the given busy timeout. Read-only, a WAL
  // database is opened with SQLite's `mode=ro`, which reads the -wal through
  // the existing -shm; when there is no -wal (every write checkpointed, the
  // last writer gone) and its -shm cannot be created, with `immutable=1`,
  // which needs neither (see docs/formats.md).
  static Result<std::unique_ptr<Database>> Open(const std::string& path, int busy_timeout_ms,
                                                Access access = Access::kAuto);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Runs one or more statements that return no rows.
  Status Exec(const std::string& sql);
  // A cached prepared statement for `sql`.
  Result<Statement> Prepare(const char* sql);
  // The first column of the first row as an integer (nullopt if no row).
  Result<std::optional<int64_t>> QueryInt(const char* sql);

  int64_t Changes() const { return sqlite3_changes64(db_); }
  // Rows this connection has changed since it opened.
  int64_t TotalChanges() const { return sqlite3_total_changes64(db_); }

  // Empty when the connection may write; else why it is read-only, worded to
  // follow "read-only: " ("its directory ... is not writable by uid 1000").
  const std::string& read_only_reason() const { return read_only_reason_; }

  // The store's writer lock (writer_lock.h), taken by Transaction::Begin
  // before BEGIN IMMEDIATE; null for a read-only connection or when the side
  // file cannot be used.
  WriterLock* writer_lock() const { return writer_lock_.get(); }

  // The connection itself, for what this layer does not wrap (the WAL hook
  // of wal_checkpointer.h). Owned by this Database.
  sqlite3* handle() const { return db_; }

 private:
  friend class Transaction;
  explicit Database(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  std::unique_ptr<WriterLock> writer_lock_;
  std::string read_only_reason_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

// The store's writer lock, then BEGIN IMMEDIATE on construction (the write
// lock is taken up front, so a writer waits instead of failing on upgrade);
// ROLLBACK on destruction unless Commit() succeeded, and the writer lock
// released after either. The wait for both together is bounded by the
// connection's busy timeout; kBusy past it.
class Transaction {
 public:
  static Result<Transaction> Begin(Database* db);
  Transaction(Transaction&& other) noexcept : db_(other.db_), writer_(std::move(other.writer_)) {
    other.db_ = nullptr;
  }
  Transaction(const Transaction&) = delete;
  ~Transaction();
  Status Commit();

 private:
  Transaction(Database* db, WriterLock::Held writer) : db_(db), writer_(std::move(writer)) {}
  Database* db_;
  WriterLock::Held writer_;  // released after COMMIT or ROLLBACK (declared after db_)
};

// SAVEPOINT on construction, inside an open Transaction: a part of it that can
// be undone alone while the rest goes on to commit. Undone on destruction
// unless Release() succeeded or Rollback() was called. Savepoints of this
// class do not nest (they share one name).
class Savepoint {
 public:
  static Result<Savepoint> Begin(Database* db);
  Savepoint(Savepoint&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Savepoint(const Savepoint&) = delete;
  ~Savepoint();
  // Keeps what was written since Begin as part of the enclosing transaction.
  Status Release();
  // Undoes what was written since Begin; the enclosing transaction goes on.
  // Fails if SQLite already ended that transaction itself: then nothing of it
  // is left to commit.
  Status Rollback();

 private:
  explicit Savepoint(Database* db) : db_(db) {}
  Database* db_;
};

}  // namespace sessiondb::sqlite
