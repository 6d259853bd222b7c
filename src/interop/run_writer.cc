#include "interop/run_writer.h"

namespace sessiondb::interop {

RunWriter::~RunWriter() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

Status RunWriter::Submit(ImportRun run) {
  MutexLock lock(&mu_);
  while (next_.has_value()) cv_.Wait(&mu_);
  if (!error_.ok()) return error_;
  next_ = std::move(run);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  lock.Unlock();
  cv_.SignalAll();
  return Status::Ok();
}

Status RunWriter::Wait() {
  MutexLock lock(&mu_);
  while (next_.has_value()) cv_.Wait(&mu_);
  return error_;
}

bool RunWriter::InFlight(const std::string& session_id) {
  MutexLock lock(&mu_);
  return next_.has_value() && next_->session_id == session_id;
}

void RunWriter::Loop() {
  MutexLock lock(&mu_);
  while (true) {
    while (!stop_ && !next_.has_value()) cv_.Wait(&mu_);
    if (!next_) return;  // stopping, and nothing is left to write
    // The run stays in next_ while it is written: Submit and Wait wait for
    // it to go. Only this thread touches it meanwhile.
    const ImportRun& run = *next_;
    const bool failed = !error_.ok();
    lock.Unlock();
    Status s = failed ? Status::Ok() : Write(store_, run);
    lock.Lock();
    if (error_.ok() && !s.ok()) error_ = s;
    next_.reset();
    cv_.SignalAll();
  }
}

Status RunWriter::Write(Store& store, const ImportRun& run) {
  BlobSourceFn blobs = [&run](std::string_view sha) -> Result<std::string> {
    auto it = run.blobs.find(std::string(sha));
    if (it == run.blobs.end()) return Err(Status::NotFound(std::string(sha)));
    return it->second;
  };
  if (run.create) return store.RestoreSession(*run.create, run.events, blobs);
  return store.RestoreEvents(run.session_id, run.events, blobs);
}

}  // namespace sessiondb::interop
