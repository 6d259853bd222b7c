// A bounded pool of PostgreSQL connections for one PgStore: a caller leases a
// connection, uses it alone, and hands it back (or throws it away if it broke).
// Connections are opened lazily, up to the limit; past it, callers wait.
// Connections are a shared resource of the server (max_connections), so the
// pool gives back what it does not use: a connection idle for longer than
// the idle timeout is closed by a thread of the pool's own, and a process
// that stops working (an idle `mcp` or `serve`) ends up holding none. A
// server with no free slot is waited for, with jittered backoff, up to a
// bound (see Acquire).
// Thread-safety: all methods may be called from any thread.
//
// Example:
//   PgPool pool(conninfo, {{"lock_timeout", "60000"}}, {.max_connections = 8});
//   ASSIGN_OR_RETURN(PgLease conn, pool.Acquire());
//   RETURN_IF_ERROR(conn->Run("SELECT 1"));
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
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

// How a pool uses the server's connections.
struct PgPoolLimits {
  // Connections open at once, idle and leased.
  int max_connections = 8;
  // A connection left idle this long is closed (zero: at once when returned).
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(10);
  // How long a connect refused for want of a free slot (IsNoFreeConnectionSlot)
  // is tried again before Acquire gives up.
  std::chrono::milliseconds slot_wait = std::chrono::seconds(60);
};

class PgPool {
 public:
  // What runs on every new connection before it is lent: `settings` (see
  // PgConnection::Connect), then `on_connect` (when set); a connection it
  // fails is closed and its error returned by Acquire.
  using OnConnect = std::function<Status(PgConnection&)>;
  PgPool(std::string conninfo, PgSettings settings, PgPoolLimits limits, OnConnect on_connect = {});
  // Closes every connection; no lease may outlive the pool.
  ~PgPool();
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  // An idle connection, a new one while under the limit, or the next one
  // returned. Connection failures are returned as from PgConnection::Connect,
  // but for a server (or PgBouncer) with no free connection slot: that
  // connect is tried again with jittered backoff for up to limits.slot_wait,
  // then fails with kBusy naming max_connections and PgBouncer.
  Result<PgLease> Acquire() EXCLUDES(mu_);

  // From now on, every connection lent seals with `sealer` (PgConnection::sealer):
  // the store's namespace key, once its envelope is opened, or its new key
  // after crypto-shredding. The sealer it replaces is kept while the pool
  // lives, as a connection leased before may still be using it.
  void SetSealer(std::shared_ptr<const PgSealer> sealer) EXCLUDES(mu_);

  // Connections open now, idle and leased (for tests and stats).
  int open_connections() const EXCLUDES(mu_);

 private:
  friend class PgLease;
  struct Idle {
    std::unique_ptr<PgConnection> conn;
    std::chrono::steady_clock::time_point since;
  };
  void Release(std::unique_ptr<PgConnection> conn) EXCLUDES(mu_);
  // A new connection with the settings and on_connect applied, waiting for
  // a free slot of the server as Acquire says.
  Result<std::unique_ptr<PgConnection>> Connect();
  // The idle reaper's loop: closes connections idle past the timeout.
  void CloseIdle() EXCLUDES(mu_);

  const std::string conninfo_;
  const PgSettings settings_;
  const PgPoolLimits limits_;
  const OnConnect on_connect_;
  mutable Mutex mu_;
  CondVar returned_;
  CondVar reaper_wake_;
  // Oldest first: leases take the newest, so the oldest age out.
  std::deque<Idle> idle_ GUARDED_BY(mu_);
  int open_ GUARDED_BY(mu_) = 0;  // idle + leased
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread reaper_ GUARDED_BY(mu_);  // started with the first idle connection
  std::shared_ptr<const PgSealer> sealer_ GUARDED_BY(mu_);
  std::vector<std::shared_ptr<const PgSealer>> retired_sealers_ GUARDED_BY(mu_);
};

}  // namespace sessiondb::postgres
