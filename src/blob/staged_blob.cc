#include "blob/staged_blob.h"

#include <utility>

namespace sessiondb::blob {

StagedBlob::~StagedBlob() {
  {
    std::lock_guard lock(mu_);
    abandoned_ = true;  // a writer still waiting for a name stops without syncing
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  // Never renamed: the temp file is of no use to anyone.
  if (!renamed_ && !temp_path_.empty()) (void)fs_->Remove(temp_path_);
}

void StagedBlob::Ready(size_t n) {
  {
    std::lock_guard lock(mu_);
    if (n <= announced_) return;
    piece_ends_.push_back(n);
    announced_ = n;
  }
  cv_.notify_all();
}

size_t StagedBlob::AwaitReady(size_t written) {
  std::unique_lock lock(mu_);
  // The ends only grow, and the writer takes each in turn: the front is
  // always past `written`.
  cv_.wait(lock, [&] { return !piece_ends_.empty() || abandoned_; });
  if (abandoned_) return written;
  const size_t end = piece_ends_.front();
  piece_ends_.pop_front();
  return end;
}

void StagedBlob::WaitWritten() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return written_; });
}

void StagedBlob::SetDigest(std::string sha256) {
  {
    std::lock_guard lock(mu_);
    sha256_ = std::move(sha256);
    named_ = true;
  }
  cv_.notify_all();
}

Status StagedBlob::Finish() {
  {
    std::unique_lock lock(mu_);
    // A blob handed to PutAll unnamed would wait forever; name it first.
    if (!named_ && !done_) {
      return Status::Internal("a staged blob was put before SetDigest named it");
    }
  }
  if (writer_.joinable()) writer_.join();
  std::lock_guard lock(mu_);
  return status_;
}

void StagedBlob::SignalWritten(Status status) {
  {
    std::lock_guard lock(mu_);
    written_ = true;
    status_ = std::move(status);
  }
  cv_.notify_all();
}

bool StagedBlob::AwaitDigest(std::string* sha256) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return named_ || abandoned_; });
  if (abandoned_) return false;
  *sha256 = sha256_;
  return true;
}

void StagedBlob::SignalDone(Status status, bool existing) {
  {
    std::lock_guard lock(mu_);
    done_ = true;
    existing_ = existing;
    if (status_.ok()) status_ = std::move(status);
  }
  cv_.notify_all();
}

}  // namespace sessiondb::blob
