// A second process holding an embedded store's write lock, as a writer in the
// middle of a long transaction (a bulk import) does: a test forks it, and it
// holds the lock until the test releases it. Tests of what must not wait for
// a writer (a search) use it.
//
// Example:
//   HeldWriteLock writer(store_dir, "a message appended before the lock");
//   ASSERT_TRUE(writer.holding());
//   ... a search, which must answer at once ...
//   writer.Release();  // the child rolls back and exits
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "sessiondb/store.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::testing {

class HeldWriteLock {
 public:
  // How the child holds the lock: as this build's writers do (the writer
  // lock file, then SQLite's lock), or as an older build or a `sqlite3`
  // shell would (SQLite's lock alone).
  enum class How { kWriterLockAndSqlite, kSqliteAlone };

  // Forks a child that opens the store at `dir`, appends `text` to session
  // `session` (left for the full-text index to take: the child never closes
  // its store, whose close would index it), then takes the write lock and
  // holds it. Returns once the child holds it (or failed: see holding()).
  HeldWriteLock(const std::string& dir, const std::string& session, const std::string& text,
                How how = How::kWriterLockAndSqlite) {
    int held[2], release[2];
    if (pipe(held) != 0 || pipe(release) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      alarm(120);  // a test that never releases it fails instead of hanging
      ::close(held[0]);
      ::close(release[1]);
      auto store = Store::Open(dir);
      if (!store) _exit(2);
      (void)(*store)->CreateSession({.id = session});  // or it exists
      Message m;
      m.parts = {Part::Text(text)};
      if (!(*store)->Append(session, m)) _exit(3);
      auto db = sqlite::Database::Open(dir + "/" + std::string(kEmbeddedDatabaseFile), 1000);
      if (!db) _exit(4);
      if (how == How::kWriterLockAndSqlite) {
        auto txn = sqlite::Transaction::Begin(db->get());
        if (!txn) _exit(5);
        Hold(held[1], release[0]);
      } else {
        if (!(*db)->Exec("BEGIN IMMEDIATE").ok()) _exit(5);
        Hold(held[1], release[0]);
      }
      _exit(0);  // the lock goes with the process; the store is not closed
    }
    ::close(held[1]);
    ::close(release[0]);
    release_fd_ = release[1];
    char byte = 0;
    holding_ = pid_ > 0 && ::read(held[0], &byte, 1) == 1;
    ::close(held[0]);
  }
  ~HeldWriteLock() { Release(); }
  HeldWriteLock(const HeldWriteLock&) = delete;
  HeldWriteLock& operator=(const HeldWriteLock&) = delete;

  bool holding() const { return holding_; }

  // Lets the child go and waits for it; its exit status (0: it held the
  // lock as asked), or -1.
  int Release() {
    if (release_fd_ >= 0) {
      ::close(release_fd_);
      release_fd_ = -1;
    }
    if (pid_ <= 0) return -1;
    int status = 0;
    const pid_t waited = waitpid(pid_, &status, 0);
    pid_ = -1;
    holding_ = false;
    return waited > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  // Says it holds the lock, then waits until the parent closes its end.
  static void Hold(int held_fd, int release_fd) {
    const char byte = 1;
    if (::write(held_fd, &byte, 1) != 1) _exit(6);
    char ignored = 0;
    while (::read(release_fd, &ignored, 1) > 0) {
    }
  }

  pid_t pid_ = -1;
  int release_fd_ = -1;
  bool holding_ = false;
};

}  // namespace sessiondb::testing
