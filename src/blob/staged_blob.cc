#include "blob/staged_blob.h"

#include <utility>

namespace sessiondb::blob {

StagedBlob::~StagedBlob() {
  {
    MutexLock lock(&mu_);
    abandoned_ = true;  // a writer still waiting for a name stops without syncing
  }
  cv_.SignalAll();
  AwaitDone();
  // Never renamed: the temp file is of no use to anyone.
  if (!renamed_ && !temp_path_.empty()) (void)fs_->Remove(temp_path_);
}

void StagedBlob::Ready(size_t n) {
  {
    MutexLock lock(&mu_);
    if (n <= announced_) return;
    piece_ends_.push_back(n);
    announced_ = n;
  }
  cv_.SignalAll();
}

size_t StagedBlob::AwaitReady(size_t written) {
  MutexLock lock(&mu_);
  // The ends only grow, and the writer takes each in turn: the front is
  // always past `written`.
  while (piece_ends_.empty() && !abandoned_) cv_.Wait(&mu_);
  if (abandoned_) return written;
  const size_t end = piece_ends_.front();
  piece_ends_.pop_front();
  return end;
}

void StagedBlob::WaitWritten() {
  MutexLock lock(&mu_);
  while (!written_) cv_.Wait(&mu_);
}

void StagedBlob::SetDigest(std::string sha256) {
  {
    MutexLock lock(&mu_);
    sha256_ = std::move(sha256);
    named_ = true;
  }
  cv_.SignalAll();
}

Status StagedBlob::Finish() {
  {
    MutexLock lock(&mu_);
    // A blob handed to PutAll unnamed would wait forever; name it first.
    if (!named_ && !done_) {
      return Status::Internal("a staged blob was put before SetDigest named it");
    }
  }
  AwaitDone();
  MutexLock lock(&mu_);
  return status_;
}

void StagedBlob::AwaitDone() {
  if (!has_writer_) return;
  MutexLock lock(&mu_);
  while (!done_) cv_.Wait(&mu_);
}

void StagedBlob::SignalWritten(Status status) {
  {
    MutexLock lock(&mu_);
    written_ = true;
    status_ = std::move(status);
  }
  cv_.SignalAll();
}

bool StagedBlob::AwaitDigest(std::string* sha256) {
  MutexLock lock(&mu_);
  while (!named_ && !abandoned_) cv_.Wait(&mu_);
  if (abandoned_) return false;
  *sha256 = sha256_;
  return true;
}

void StagedBlob::SignalDone(Status status, bool existing) {
  MutexLock lock(&mu_);
  done_ = true;
  existing_ = existing;
  if (status_.ok()) status_ = std::move(status);
  // Under the lock: once the owner can see done_, this object may be gone.
  cv_.SignalAll();
}

}  // namespace sessiondb::blob
