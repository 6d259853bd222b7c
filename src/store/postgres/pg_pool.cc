#include "store/postgres/pg_pool.h"

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <random>

namespace sessiondb::postgres {

PgLease::~PgLease() {
  if (pool_ && conn_) pool_->Release(std::move(conn_));
}

PgPool::PgPool(std::string conninfo, PgSettings settings, PgPoolLimits limits, OnConnect on_connect)
    : conninfo_(std::move(conninfo)),
      settings_(std::move(settings)),
      limits_(limits),
      on_connect_(std::move(on_connect)) {}

PgPool::~PgPool() {
  std::thread reaper;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    reaper_wake_.SignalAll();
    reaper = std::move(reaper_);
  }
  if (reaper.joinable()) reaper.join();
}

Result<std::unique_ptr<PgConnection>> PgPool::Connect() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point give_up = Clock::now() + limits_.slot_wait;
  // Full jitter: many processes refused at once do not come back at once.
  thread_local std::minstd_rand random(std::random_device{}());
  std::chrono::milliseconds backoff(10);
  int refused = 0;
  while (true) {
    Result<std::unique_ptr<PgConnection>> conn = PgConnection::Connect(conninfo_, settings_);
    if (conn || !IsNoFreeConnectionSlot(conn.error().message())) return conn;
    ++refused;
    const Clock::time_point now = Clock::now();
    if (now >= give_up) {
      return Err(Status::Busy(
          conn.error().message() + " (still refused after " + std::to_string(refused) +
          " tries in " + std::to_string(limits_.slot_wait.count() / 1000) +
          " s: the server's max_connections is taken by other clients; raise it, or put "
          "PgBouncer in transaction mode in front of the server, see docs/postgres.md, "
          "\"Many agents: connections and PgBouncer\")"));
    }
    std::uniform_int_distribution<int64_t> pick(backoff.count() / 2, backoff.count());
    const auto sleep =
        std::min<std::chrono::nanoseconds>(std::chrono::milliseconds(pick(random)), give_up - now);
    std::this_thread::sleep_for(sleep);
    backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::milliseconds(500));
  }
}

Result<PgLease> PgPool::Acquire() {
  const PgSealer* sealer = nullptr;
  {
    MutexLock lock(&mu_);
    while (idle_.empty() && open_ >= limits_.max_connections) returned_.Wait(&mu_);
    if (sealer_) sealer = sealer_.get();
    if (!idle_.empty()) {
      std::unique_ptr<PgConnection> conn = std::move(idle_.back().conn);
      idle_.pop_back();
      if (sealer) conn->set_sealer(sealer);
      return PgLease(this, std::move(conn));
    }
    ++open_;  // reserve the slot; connect outside the lock
  }
  auto conn = Connect();
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

int PgPool::open_connections() const {
  MutexLock lock(&mu_);
  return open_;
}

void PgPool::Release(std::unique_ptr<PgConnection> conn) {
  std::unique_ptr<PgConnection> closed;  // closed after the lock is let go
  {
    MutexLock lock(&mu_);
    if (conn->broken() || limits_.idle_timeout.count() <= 0 || stopping_) {
      --open_;  // dropped here; the next Acquire opens a fresh one
      closed = std::move(conn);
    } else {
      idle_.push_back({std::move(conn), std::chrono::steady_clock::now()});
      if (!reaper_.joinable()) {
        // Started with every signal blocked, which it keeps: a signal the
        // process waits for on a thread of its own (serve's SIGTERM) must
        // never be delivered here, where it would kill the process.
        sigset_t all, before;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &before);
        reaper_ = std::thread([this] { CloseIdle(); });
        pthread_sigmask(SIG_SETMASK, &before, nullptr);
      } else if (idle_.size() == 1) {
        reaper_wake_.Signal();
      }
    }
    returned_.Signal();
  }
}

void PgPool::CloseIdle() {
  while (true) {
    std::vector<std::unique_ptr<PgConnection>> expired;
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
      if (idle_.empty()) {
        reaper_wake_.Wait(&mu_);
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      while (!idle_.empty() && now - idle_.front().since >= limits_.idle_timeout) {
        expired.push_back(std::move(idle_.front().conn));
        idle_.pop_front();
        --open_;
      }
      if (expired.empty()) {
        (void)reaper_wake_.WaitUntil(&mu_, idle_.front().since + limits_.idle_timeout);
        continue;
      }
      returned_.SignalAll();
    }
    // `expired` closes here, outside the lock (a Terminate message each).
  }
}

}  // namespace sessiondb::postgres
