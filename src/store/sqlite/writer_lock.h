// The store's writer lock: a fair, blocking wait for the right to write,
// taken before SQLite's own write lock (BEGIN IMMEDIATE).
//
// SQLite makes a writer that finds the database locked sleep and retry, on a
// backoff that grows to 100 ms a try: a writer that has waited long sleeps
// through every release while newcomers take the lock, and with 64 processes
// some writers starve for seconds. Here a writer first takes an open file
// description lock (fcntl F_OFD_SETLKW) on a side file beside the database,
// `sessiondb.db-writer`; the kernel wakes its waiters the moment it is
// released, so waiting writers take turns instead of sleeping. SQLite's lock
// stays the one that guarantees correctness: a reader never takes this lock,
// and a process of an older build (or a statement outside a transaction)
// that does not take it still meets SQLite's lock, only less fairly. OFD
// locks belong to the open file description, so two connections of one
// process exclude each other too (POSIX record locks would not).
//
// When the side file cannot be used (a read-only folder, a file of another
// user, a symbolic link or anything but a regular file at its name) the store
// writes without it, as before: correct, only less fair.
//
// Thread-safety: a WriterLock may be used from one thread at a time (its
// Database's); the waits of several WriterLocks may run at once.
//
// Example:
//   std::unique_ptr<WriterLock> lock = WriterLock::Open(db_path);  // may be null
//   ASSIGN_OR_RETURN(WriterLock::Held held, lock->Acquire(busy_timeout_ms));
//   ... BEGIN IMMEDIATE ... COMMIT ...
//   held.Release();  // or let it go out of scope
#pragma once

#include <memory>
#include <string>

#include "sessiondb/status.h"

namespace sessiondb::sqlite {

class WriterLock {
 public:
  // The side file's name beside the database file.
  static constexpr const char* kSuffix = "-writer";

  // A held lock; released (the lock dropped, or the file descriptor of a
  // waited-for lock closed) when Release is called or it goes out of scope.
  class Held {
   public:
    Held() = default;
    Held(Held&& other) noexcept : fd_(other.fd_), owns_fd_(other.owns_fd_) { other.fd_ = -1; }
    Held& operator=(Held&& other) noexcept;
    Held(const Held&) = delete;
    ~Held() { Release(); }
    void Release();
    bool held() const { return fd_ >= 0; }

   private:
    friend class WriterLock;
    Held(int fd, bool owns_fd) : fd_(fd), owns_fd_(owns_fd) {}
    int fd_ = -1;
    bool owns_fd_ = false;  // closed after the unlock (a wait's own descriptor)
  };

  // Opens (creating, mode 0600) `<db_path>-writer`. Returns null when it
  // cannot be used (see the file comment): then the caller writes without it.
  static std::unique_ptr<WriterLock> Open(const std::string& db_path);
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  // Takes the lock: at once when it is free, else blocks until it is
  // released (woken by the kernel, no polling) or `timeout_ms` passes.
  // kBusy after the timeout, as SQLite's busy handler would give (at once,
  // with no wait, when `timeout_ms` is 0: a try-lock); kIo when
  // the kernel refuses the lock. A Held that holds nothing when no thread
  // can be started for the wait (the caller then meets SQLite's lock alone).
  // Not reentrant: call it only while no Held of this WriterLock is alive
  // (a connection runs one transaction at a time).
  Result<Held> Acquire(int timeout_ms);

  const std::string& path() const { return path_; }

 private:
  WriterLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  const std::string path_;
  const int fd_;  // taken without waiting on the fast path
};

}  // namespace sessiondb::sqlite
