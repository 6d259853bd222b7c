// A bounded pool of PostgreSQL connections for one PgStore: a caller leases a
// connection, uses it alone, and hands it back (or throws it away if it broke).
// Connections are opened lazily, up to the limit; past it, callers wait.
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

class PgPool;

// A connection on loan; returned to the pool when the lease ends, unless it is broken.
class PgLease {
 public:
  PgLease(PgPool* pool, std::unique_ptr<PgConnection> conn) : pool_(pool), conn_(std::move(conn)) {}
  PgLease(PgLease&&) = default;
  PgLease& operator=(PgLease&&) = default;
  ~PgLease();

  PgConnection& operator*() { return *conn_; }
  PgConnection* operator->() { return conn_.get(); }
  PgConnection* get() { return conn_.get(); }

 private:
  PgPool* pool_;
  std::unique_ptr<PgConnection> conn_;
};

class PgPool {
 public:
  // What runs on every new connection before it is lent: `setup_sql` (see
  // PgConnection::Connect), then `on_connect` (when set); a connection it
  // fails is closed and its error returned by Acquire.
  using OnConnect = std::function<Status(PgConnection&)>;
  PgPool(std::string conninfo, std::string setup_sql, int max_connections,
         OnConnect on_connect = {})
      : conninfo_(std::move(conninfo)),
        setup_sql_(std::move(setup_sql)),
        max_connections_(max_connections),
        on_connect_(std::move(on_connect)) {}

  // An idle connection, a new one while under the limit, or the next one
  // returned. Connection failures are returned as from PgConnection::Connect.
  Result<PgLease> Acquire() EXCLUDES(mu_);

  // From now on, every connection lent seals with `sealer` (PgConnection::sealer):
  // the store's namespace key, once its envelope is opened, or its new key
  // after crypto-shredding. The sealer it replaces is kept while the pool
  // lives, as a connection leased before may still be using it.
  void SetSealer(std::shared_ptr<const PgSealer> sealer) EXCLUDES(mu_);

 private:
  friend class PgLease;
  void Release(std::unique_ptr<PgConnection> conn) EXCLUDES(mu_);

  const std::string conninfo_;
  const std::string setup_sql_;
  const int max_connections_;
  const OnConnect on_connect_;
  Mutex mu_;
  CondVar returned_;
  std::vector<std::unique_ptr<PgConnection>> idle_ GUARDED_BY(mu_);
  int open_ GUARDED_BY(mu_) = 0;  // idle + leased
  std::shared_ptr<const PgSealer> sealer_ GUARDED_BY(mu_);
  std::vector<std::shared_ptr<const PgSealer>> retired_sealers_ GUARDED_BY(mu_);
};

}  // namespace sessiondb::postgres
