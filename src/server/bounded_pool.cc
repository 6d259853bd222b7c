#include "server/bounded_pool.h"

namespace sessiondb::server {

BoundedPool::BoundedPool(int threads) : max_queued_(static_cast<size_t>(threads)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

BoundedPool::~BoundedPool() { shutdown(); }

void BoundedPool::enqueue(std::function<void()> task) {
  std::unique_lock lock(mu_);
  room_.wait(lock, [this] { return stopping_ || queue_.size() < max_queued_; });
  if (stopping_) return;
  queue_.push_back(std::move(task));
  ready_.notify_one();
}

void BoundedPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  ready_.notify_all();
  room_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void BoundedPool::Work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    room_.notify_one();
    task();
  }
}

}  // namespace sessiondb::server
