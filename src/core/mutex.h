// A mutex, its scoped lock and a condition variable that clang's thread
// safety analysis (-Wthread-safety) can check, with the annotations that say
// which lock guards what (leveldb's port/thread_annotations.h, abseil's Mutex).
//
// libstdc++'s std::mutex carries no capability attributes, so a member marked
// GUARDED_BY(mu_) is only checked when mu_ is a sessiondb::Mutex and is
// locked through MutexLock. Under g++ every annotation expands to nothing and
// these are thin wrappers over std::mutex and std::condition_variable.
//
// Example:
//   class Queue {
//    public:
//     void Push(int v) EXCLUDES(mu_) {
//       MutexLock lock(&mu_);
//       items_.push_back(v);
//       ready_.SignalAll();
//     }
//     int Pop() EXCLUDES(mu_) {
//       MutexLock lock(&mu_);
//       while (items_.empty()) ready_.Wait(&mu_);
//       ...
//     }
//    private:
//     Mutex mu_;
//     CondVar ready_;
//     std::deque<int> items_ GUARDED_BY(mu_);
//   };
//
// Thread-safety: a Mutex and a CondVar are used from many threads at once;
// a MutexLock belongs to the thread that made it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define SESSIONDB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SESSIONDB_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are locks.
#define CAPABILITY(x) SESSIONDB_THREAD_ANNOTATION(capability(x))
// On a class: an object holds a lock from its construction to its end.
#define SCOPED_CAPABILITY SESSIONDB_THREAD_ANNOTATION(scoped_lockable)
// On a member: read or written only while holding the lock named.
#define GUARDED_BY(x) SESSIONDB_THREAD_ANNOTATION(guarded_by(x))
// On a pointer member: what it points to is guarded by the lock named.
#define PT_GUARDED_BY(x) SESSIONDB_THREAD_ANNOTATION(pt_guarded_by(x))
// On a function: the caller holds these locks.
#define REQUIRES(...) SESSIONDB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// On a function: the caller does not hold these locks (the function takes them).
#define EXCLUDES(...) SESSIONDB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it takes / releases these locks (or the object's own).
#define ACQUIRE(...) SESSIONDB_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SESSIONDB_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SESSIONDB_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function: it returns the lock named.
#define RETURN_CAPABILITY(x) SESSIONDB_THREAD_ANNOTATION(lock_returned(x))
// On a function the analysis cannot follow (say why where it is used).
#define NO_THREAD_SAFETY_ANALYSIS SESSIONDB_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace sessiondb {

class CondVar;

// A non-recursive mutex.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Returns true when it took the lock, false at once when another holds it.
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope. Unlock() and Lock() let a scope give the
// mutex up for a while (around a slow call) and take it back.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    held_ = false;
    mu_->Unlock();
  }
  void Lock() ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* const mu_;
  bool held_ = true;
};

// A condition variable over a Mutex the caller holds. Each Wait may return
// spuriously: call it in a loop over the condition.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases *mu while waiting and holds it again on return.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, for at most `timeout`. Returns false when the time ran out.
  template <class Rep, class Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  // As Wait, until `deadline`. Returns false when the deadline passed.
  template <class Clock, class Duration>
  bool WaitUntil(Mutex* mu, std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }

  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace sessiondb
