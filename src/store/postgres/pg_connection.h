// A thin RAII layer over libpq: one connection, parameterised queries, results
// that free themselves, and transactions that roll back unless committed.
// PostgreSQL's SQLSTATEs become Status values here and nowhere else, and the
// connection remembers whether its last failure was transient (a dropped
// connection, a restarting server, a serialization failure or deadlock), so
// the store can retry the whole transaction.
// Thread-safety: none; PgStore hands a connection to one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sessiondb/status.h"
#include "store/postgres/libpq.h"
#include "store/postgres/pg_sealer.h"

namespace sessiondb::postgres {

// The parameters of one query, in order ($1, $2, ...). Text values are
// copied; bytes passed to AddBytes are borrowed and must outlive the query.
class PgParams {
 public:
  PgParams& Add(std::string_view text);
  PgParams& Add(int64_t value);
  PgParams& Add(bool value);
  PgParams& AddNull();
  PgParams& AddOptional(const std::optional<std::string>& text);
  // Sent in binary form, for a bytea parameter; not copied.
  PgParams& AddBytes(std::string_view bytes);

 private:
  friend class PgConnection;
  struct Value {
    std::string text;
    std::string_view bytes;
    bool is_null = false;
    bool binary = false;
  };
  std::vector<Value> values_;
};

// The rows of a query. Text format unless the query asked for binary results.
class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result, Pq().clear) {}

  int rows() const { return Pq().ntuples(result_.get()); }
  bool IsNull(int row, int col) const { return Pq().getisnull(result_.get(), row, col) != 0; }
  std::string_view Text(int row, int col) const;
  int64_t Int(int row, int col) const;
  bool Bool(int row, int col) const { return Text(row, col) == "t"; }
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t Affected() const;

 private:
  std::unique_ptr<PGresult, decltype(LibPq::clear)> result_;
};

// A literal for an array parameter ($1::text[], $1::bigint[]): {"a","b"}
// with quotes and backslashes escaped; absent values become NULL.
std::string PgArray(const std::vector<std::string>& values);
std::string PgArray(const std::vector<std::optional<std::string>>& values);
std::string PgArray(const std::vector<int64_t>& values);
// A bytea value in PostgreSQL's hex form (\x0a1b...), which an array literal
// of bytea ($1::bytea[]) can hold.
std::string PgByteaHex(std::string_view bytes);

class PgConnection {
 public:
  // Connects with libpq's connection string or URI `conninfo`, then runs
  // `setup_sql` (session settings such as lock_timeout). A refused or failed
  // connection is kBusy when the server is starting, stopping or unreachable
  // for the moment (worth retrying), kIo otherwise; the message names the
  // server's complaint. libpq itself is loaded by the first call (LoadLibPq):
  // kFailedPrecondition, saying what to install, when it cannot be.
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo,
                                                       const std::string& setup_sql);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs `sql` with `params`, as a statement prepared on this connection the
  // first time it is seen (so it is parsed and planned once, not per call).
  // Errors map SQLSTATEs: unique violation ->
  // kAlreadyExists, lock timeout -> kBusy, disk full -> kIo, data corrupted ->
  // kCorruption, invalid text -> kInvalidArgument, a lost connection or a
  // transient conflict -> kBusy with retryable() set.
  Result<PgResult> Exec(const char* sql, const PgParams& params = {}, bool binary_result = false);
  Status Run(const char* sql, const PgParams& params = {});
  // Runs several statements separated by ';' (no parameters), e.g. a migration.
  Status RunScript(const char* sql);

  // True if the last failed Exec may succeed when its transaction is retried
  // (on a fresh connection when broken()).
  bool retryable() const { return retryable_; }
  // True once the connection is lost; it must be replaced.
  bool broken() const { return Pq().status(conn_) != CONNECTION_OK; }
  // Ends any open transaction without touching retryable(), which describes
  // the failure that made the caller give the transaction up.
  void RollbackQuietly();

  // What content columns are sealed with on this connection: the namespace
  // of the store whose pool lent it (pg_pool.h), plaintext until set. Every
  // statement writer seals through it, so none can forget to.
  const PgSealer& sealer() const { return *sealer_; }
  void set_sealer(const PgSealer* sealer) { sealer_ = sealer; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  Status ErrorFrom(PGresult* result, const char* sql);

  PGconn* conn_;
  bool retryable_ = false;
  const PgSealer* sealer_ = &kPlaintext;
  static const PgSealer kPlaintext;
  // SQL text -> the name it was prepared under on this connection.
  std::unordered_map<std::string, std::string> prepared_;
};

// BEGIN on Begin(); ROLLBACK on destruction unless Commit() succeeded.
class PgTransaction {
 public:
  static Result<PgTransaction> Begin(PgConnection* conn);
  PgTransaction(PgTransaction&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }
  PgTransaction(const PgTransaction&) = delete;
  ~PgTransaction();
  Status Commit();

 private:
  explicit PgTransaction(PgConnection* conn) : conn_(conn) {}
  PgConnection* conn_;
};

}  // namespace sessiondb::postgres
