#include "blob/writer_threads.h"

#include <system_error>
#include <utility>

namespace sessiondb::blob {

WriterThreads::~WriterThreads() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    ending_ = true;
    threads.swap(threads_);
  }
  job_ready_.SignalAll();
  for (std::thread& t : threads) t.join();
}

bool WriterThreads::Run(std::function<void()> job) {
  MutexLock lock(&mu_);
  if (waiting_ > 0) {
    --waiting_;  // promised to one of them: a later Run cannot count it again
    jobs_.push_back(std::move(job));
    job_ready_.Signal();
    return true;
  }
  try {
    threads_.emplace_back([this, first = std::move(job)]() mutable { Work(std::move(first)); });
  } catch (const std::system_error&) {
    return false;
  }
  return true;
}

size_t WriterThreads::threads() {
  MutexLock lock(&mu_);
  return threads_.size();
}

int WriterThreads::waiting() {
  MutexLock lock(&mu_);
  return waiting_;
}

void WriterThreads::Work(std::function<void()> job) {
  for (;;) {
    job();
    job = nullptr;  // what it captured goes before the wait
    MutexLock lock(&mu_);
    ++waiting_;
    while (jobs_.empty() && !ending_) job_ready_.Wait(&mu_);
    if (jobs_.empty()) return;  // ending, and no job was promised to this one
    job = std::move(jobs_.back());
    jobs_.pop_back();
  }
}

}  // namespace sessiondb::blob
