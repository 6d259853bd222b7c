#include "store/postgres/pg_pool.h"

namespace sessiondb::postgres {

PgLease::~PgLease() {
  if (pool_ && conn_) pool_->Release(std::move(conn_));
}

Result<PgLease> PgPool::Acquire() {
  const PgSealer* sealer = nullptr;
  {
    MutexLock lock(&mu_);
    while (idle_.empty() && open_ >= max_connections_) returned_.Wait(&mu_);
    if (sealer_) sealer = sealer_.get();
    if (!idle_.empty()) {
      std::unique_ptr<PgConnection> conn = std::move(idle_.back());
      idle_.pop_back();
      if (sealer) conn->set_sealer(sealer);
      return PgLease(this, std::move(conn));
    }
    ++open_;  // reserve the slot; connect outside the lock
  }
  auto conn = PgConnection::Connect(conninfo_, setup_sql_);
  Status ready = conn ? Status::Ok() : conn.error();
  if (ready.ok() && on_connect_) ready = on_connect_(**conn);
  if (!ready.ok()) {
    MutexLock lock(&mu_);
    --open_;
    returned_.Signal();
    return Err(ready);
  }
  if (sealer) (*conn)->set_sealer(sealer);
  return PgLease(this, std::move(*conn));
}

void PgPool::SetSealer(std::shared_ptr<const PgSealer> sealer) {
  MutexLock lock(&mu_);
  if (sealer_) retired_sealers_.push_back(std::move(sealer_));
  sealer_ = std::move(sealer);
}

void PgPool::Release(std::unique_ptr<PgConnection> conn) {
  MutexLock lock(&mu_);
  if (conn->broken()) {
    --open_;  // dropped here; the next Acquire opens a fresh one
  } else {
    idle_.push_back(std::move(conn));
  }
  returned_.Signal();
}

}  // namespace sessiondb::postgres
