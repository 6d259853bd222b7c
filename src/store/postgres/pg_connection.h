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
#include <utility>
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

 public:
  struct Value {
    std::string text;
    std::string_view bytes;
    bool is_null = false;
    bool binary = false;
  };
  using Values = std::vector<Value>;

 private:
  Values values_;
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

// The session settings of a connection (lock_timeout, synchronous_commit,
// ...), as name and value. Sent with the startup packet (libpq's `options`),
// so they cost no round trip; behind a pooler in transaction mode, set again
// inside each transaction instead (PgTransaction::Begin).
using PgSettings = std::vector<std::pair<std::string, std::string>>;

// True when `message` (a connection failure's) says that the server, or a
// PgBouncer in front of it, has no free connection slot: "too many clients
// already" (SQLSTATE 53300), "remaining connection slots are reserved",
// PgBouncer's "no more connections allowed". Such a connect is worth
// retrying once other clients leave (PgPool::Acquire does).
bool IsNoFreeConnectionSlot(std::string_view message);

class PgConnection {
 public:
  // Connects with libpq's connection string or URI `conninfo`, then runs
  // `setup_sql` (session settings such as lock_timeout). A refused or failed
  // connection is kBusy when the server is starting, stopping or unreachable
  // for the moment, or has no free slot (IsNoFreeConnectionSlot), all worth
  // retrying, kIo otherwise; the message names the server's complaint. libpq
  // itself is loaded by the first call (LoadLibPq): kFailedPrecondition,
  // saying what to install, when it cannot be.
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo,
                                                       const std::string& setup_sql);
  // As above, with `settings` sent as startup options (no round trip). A
  // server that refuses startup options is a pooler (PgBouncer): the
  // connection is made again without them and is transaction_pooled().
  // $SESSIONDB_PG_POOLED=1 makes every connection transaction_pooled(), for
  // a pooler that ignores startup options rather than refusing them.
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo,
                                                       const PgSettings& settings);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs `sql` with `params`. A statement seen for the first time is sent
  // unnamed (parse, bind and execute in one round trip: a short-lived
  // process runs most statements once); the second time it is prepared on
  // this connection, so a long-lived one parses and plans it once. Never
  // prepared when transaction_pooled() or $SESSIONDB_PG_PREPARE=0, nor after
  // the server lost or duplicated a prepared statement (SQLSTATE 26000 or
  // 42P05: a pooler in transaction mode moved the session): from then on
  // this connection sends unnamed statements only, and the failed call is
  // retryable. Errors map SQLSTATEs: unique violation ->
  // kAlreadyExists, lock timeout -> kBusy, disk full -> kIo, data corrupted ->
  // kCorruption, invalid text -> kInvalidArgument, a lost connection or a
  // transient conflict -> kBusy with retryable() set.
  Result<PgResult> Exec(const char* sql, const PgParams& params = {}, bool binary_result = false);
  // As Exec, but always sent unnamed, so the server plans it for these
  // values each time: for a statement whose best plan depends on them (a
  // full-text match of a rare or a common word), where a prepared
  // statement's generic plan, chosen after five runs, can be 100 times slower.
  Result<PgResult> ExecPlanned(const char* sql, const PgParams& params);
  // Exec in two halves, so the caller works while the server does (a
  // history read decodes one page while the server reads the next): Send
  // returns once `sql` is sent, Receive waits for its result, with Exec's
  // errors (a statement the server lost is retryable, never sent again here).
  // One statement in flight at a time, and nothing else runs on the
  // connection until Receive took its result.
  Status Send(const char* sql, const PgParams& params = {});
  Result<PgResult> Receive();
  bool in_flight() const { return in_flight_ != nullptr; }
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

  // True when the connection goes through a pooler in transaction mode
  // (PgBouncer's pool_mode = transaction): nothing of the session outlives a
  // transaction, so no statement is prepared, the settings are made SET
  // LOCAL in each transaction, and no session-level lock may be taken.
  bool transaction_pooled() const { return transaction_pooled_; }

  // What content columns are sealed with on this connection: the namespace
  // of the store whose pool lent it (pg_pool.h), plaintext until set. Every
  // statement writer seals through it, so none can forget to.
  const PgSealer& sealer() const { return *sealer_; }
  void set_sealer(const PgSealer* sealer) { sealer_ = sealer; }

 private:
  friend class PgTransaction;
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  Status ErrorFrom(PGresult* result, const char* sql);
  // The statement that begins a transaction: BEGIN, and the settings made
  // SET LOCAL when transaction_pooled().
  const std::string& begin_sql() const { return begin_sql_; }

  PGconn* conn_;
  bool retryable_ = false;
  bool transaction_pooled_ = false;
  bool prepare_ = true;  // false: unnamed statements only
  std::string begin_sql_ = "BEGIN";
  const PgSealer* sealer_ = &kPlaintext;
  static const PgSealer kPlaintext;
  // SQL text -> the name it was prepared under on this connection, or ""
  // when it was run once, unnamed.
  std::unordered_map<std::string, std::string> prepared_;
  int next_name_ = 0;
  const char* in_flight_ = nullptr;  // the statement Send sent, until Receive

  // The name `sql` is prepared under on this connection, preparing it now
  // when this is its second run; empty: send it unnamed. `*failed` is the
  // result of a PREPARE that failed.
  std::string PreparedName(const char* sql, PGresult** failed);
  // Exec's end: `raw`'s rows, or its error as Exec maps it. `*lost_prepared`
  // is set when the server lost a prepared statement of this connection.
  Result<PgResult> TakeResult(PGresult* raw, const char* sql, bool* lost_prepared);
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
