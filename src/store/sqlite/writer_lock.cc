#include "store/sqlite/writer_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

#include "core/mutex.h"

namespace sessiondb::sqlite {
namespace {

// The whole file, exclusively. OFD locks need l_pid = 0.
struct flock WholeFile(short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 0;
  fl.l_pid = 0;
  return fl;
}

// Opens the side file read-write without following a symbolic link and
// without blocking (a FIFO planted at its name), and keeps it only if it is a
// regular file. -1 when it cannot be used.
int OpenSideFile(const std::string& path, bool create) {
  const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A blocking wait on a descriptor of its own, run on a thread so that the
// caller can give up after its timeout: fcntl's wait has no timeout, and a
// library may not use signals to interrupt it. Whoever finishes last (the
// waiter that gets the lock after its caller gave up) closes the descriptor,
// which releases the lock at once.
struct Wait {
  Mutex mu;
  CondVar done_cv;
  bool done GUARDED_BY(mu) = false;
  bool abandoned GUARDED_BY(mu) = false;  // the caller timed out
  int error GUARDED_BY(mu) = 0;           // errno of a failed wait
  int fd = -1;
};

void RunWait(const std::shared_ptr<Wait>& wait) {
  struct flock fl = WholeFile(F_WRLCK);
  int rc;
  do {
    rc = ::fcntl(wait->fd, F_OFD_SETLKW, &fl);
  } while (rc != 0 && errno == EINTR);
  const int error = rc == 0 ? 0 : errno;
  MutexLock lock(&wait->mu);
  wait->done = true;
  wait->error = error;
  if (wait->abandoned) {
    // Nobody will use it: release at once. Unlocked before the close, as in
    // Held::Release, in case a fork left a copy of the descriptor behind.
    struct flock unlock = WholeFile(F_UNLCK);
    (void)::fcntl(wait->fd, F_OFD_SETLK, &unlock);
    ::close(wait->fd);
    return;
  }
  wait->done_cv.Signal();
}

}  // namespace

WriterLock::Held& WriterLock::Held::operator=(Held&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    owns_fd_ = other.owns_fd_;
    other.fd_ = -1;
  }
  return *this;
}

void WriterLock::Held::Release() {
  if (fd_ < 0) return;
  // Unlock explicitly even when the descriptor is about to be closed: a
  // child forked meanwhile holds a copy of it (the same open file
  // description), and closing ours alone would leave the lock held by it.
  struct flock fl = WholeFile(F_UNLCK);
  (void)::fcntl(fd_, F_OFD_SETLK, &fl);
  if (owns_fd_) ::close(fd_);
  fd_ = -1;
}

std::unique_ptr<WriterLock> WriterLock::Open(const std::string& db_path) {
  std::string path = db_path + kSuffix;
  int fd = OpenSideFile(path, /*create=*/true);
  if (fd < 0) return nullptr;
  return std::unique_ptr<WriterLock>(new WriterLock(std::move(path), fd));
}

WriterLock::~WriterLock() { ::close(fd_); }

Result<WriterLock::Held> WriterLock::Acquire(int timeout_ms) {
  struct flock fl = WholeFile(F_WRLCK);
  if (::fcntl(fd_, F_OFD_SETLK, &fl) == 0) return Held(fd_, /*owns_fd=*/false);
  if (errno != EAGAIN && errno != EACCES) {
    return Err(Status::Io("locking " + path_ + ": " + std::strerror(errno)));
  }
  // A try (a search's catch-up): no waiter thread left to queue for it.
  if (timeout_ms <= 0) {
    return Err(Status::Busy("the writer lock " + path_ + " is held by another writer"));
  }
  // Held by another connection: wait in the kernel's queue, on a descriptor
  // of our own (the same description would count as the same owner).
  auto wait = std::make_shared<Wait>();
  wait->fd = OpenSideFile(path_, /*create=*/false);
  if (wait->fd < 0) return Held();  // removed or replaced since Open: SQLite's lock alone
  try {
    std::thread(RunWait, wait).detach();
  } catch (const std::system_error&) {
    ::close(wait->fd);
    return Held();
  }
  MutexLock lock(&wait->mu);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!wait->done && wait->done_cv.WaitUntil(&wait->mu, deadline)) {
  }
  if (!wait->done) {
    wait->abandoned = true;  // the waiter closes the descriptor when it ends
    return Err(Status::Busy("waited " + std::to_string(timeout_ms) + " ms for the writer lock " +
                            path_ + "; another writer held the store past the busy timeout"));
  }
  if (wait->error != 0) {
    ::close(wait->fd);
    return Err(
        Status::Io("waiting for the writer lock " + path_ + ": " + std::strerror(wait->error)));
  }
  return Held(wait->fd, /*owns_fd=*/true);
}

}  // namespace sessiondb::sqlite
