// The server's workers: a fixed number of threads and a queue of at most as
// many waiting connections. When the queue is full the accepting thread
// waits, so further clients queue in the kernel (the listen backlog) instead
// of growing the server's memory. cpp-httplib hands each accepted connection
// to enqueue().
// Thread-safety: enqueue from the accepting thread; shutdown once.
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sessiondb::server {

class BoundedPool final : public httplib::TaskQueue {
 public:
  explicit BoundedPool(int threads);
  ~BoundedPool() override;

  void enqueue(std::function<void()> task) override;
  // Lets the queued tasks finish, then joins the threads.
  void shutdown() override;

 private:
  void Work();

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable ready_;  // a task was queued, or shutting down
  std::condition_variable room_;   // the queue has room again
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace sessiondb::server
