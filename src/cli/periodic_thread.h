// A thread that runs some work at once and then every period until it is
// destroyed: the loop of serve's schedules (retention, sync). Its destructor
// wakes the thread and waits for a run under way to finish.
// Thread-safety: made and destroyed by one thread; the work runs on its own.
//
// Example:
//   PeriodicThread ticks(std::chrono::seconds(30), [this] { RunOnce(); });
#pragma once

#include <chrono>
#include <functional>
#include <thread>
#include <utility>

#include "core/mutex.h"

namespace sessiondb::cli {

class PeriodicThread {
 public:
  PeriodicThread(std::chrono::steady_clock::duration every, std::function<void()> work)
      : every_(every), work_(std::move(work)), thread_([this] { Loop(); }) {}
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;
  ~PeriodicThread() {
    {
      MutexLock lock(&mu_);
      stop_ = true;
    }
    wake_.SignalAll();
    thread_.join();
  }

 private:
  void Loop() EXCLUDES(mu_) {
    while (true) {
      work_();
      MutexLock lock(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + every_;
      while (!stop_ && wake_.WaitUntil(&mu_, deadline)) {
      }
      if (stop_) return;
    }
  }

  const std::chrono::steady_clock::duration every_;
  const std::function<void()> work_;
  Mutex mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace sessiondb::cli
