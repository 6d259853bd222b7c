#include "sessiondb/draft_writer.h"

#include <utility>

namespace sessiondb {

Result<std::unique_ptr<DraftWriter>> DraftWriter::Open(Store* store, std::string_view session_id,
                                                       const DraftWriterOptions& options) {
  if (options.save_interval.count() <= 0) {
    return Err(Status::InvalidArgument("the draft save interval must be positive"));
  }
  ASSIGN_OR_RETURN(Draft draft, store->OpenDraft(session_id, options.role, options.model));
  return std::unique_ptr<DraftWriter>(new DraftWriter(store, std::move(draft), options));
}

DraftWriter::DraftWriter(Store* store, Draft draft, DraftWriterOptions options)
    : store_(store), options_(std::move(options)), draft_id_(draft.id), draft_(std::move(draft)) {
  thread_ = std::thread([this] { Run(); });
}

DraftWriter::~DraftWriter() {
  Status ignored = Close();  // errors were kept in last_error_ for the caller
  (void)ignored;
}

void DraftWriter::AppendText(std::string_view delta) {
  if (delta.empty()) return;
  std::lock_guard lock(mu_);
  draft_.text.append(delta);
  dirty_ = true;
}

void DraftWriter::AppendReasoning(std::string_view delta) {
  if (delta.empty()) return;
  std::lock_guard lock(mu_);
  draft_.reasoning.append(delta);
  dirty_ = true;
}

void DraftWriter::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, options_.save_interval, [this] { return stopping_; });
    if (stopping_) break;
    if (!dirty_) continue;  // nothing changed: nothing is written
    Status s = SaveLocked(lock);
    if (!s.ok()) last_error_ = s;
  }
}

Status DraftWriter::SaveLocked(std::unique_lock<std::mutex>& lock) {
  // Copy under mu_, write without it, so producers never wait for the disk.
  Draft snapshot = draft_;
  dirty_ = false;
  lock.unlock();
  Status s;
  {
    std::lock_guard save(save_mu_);
    s = store_->SaveDraft(snapshot);
  }
  lock.lock();
  if (s.ok()) {
    ++saves_;
  } else {
    dirty_ = true;  // try again on the next tick
  }
  return s;
}

Status DraftWriter::Flush() {
  std::unique_lock lock(mu_);
  if (done_ || !dirty_) return Status::Ok();
  return SaveLocked(lock);
}

void DraftWriter::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<AppendResult> DraftWriter::Finish(const Message& message) {
  Stop();
  {
    std::lock_guard lock(mu_);
    if (done_) return Err(Status::FailedPrecondition("draft " + draft_id_ + " is already closed"));
  }
  Message final_message = message;
  if (final_message.parts.empty()) {
    // The streamed text, even what the last save has not reached yet.
    std::lock_guard lock(mu_);
    if (!draft_.reasoning.empty()) final_message.parts.push_back(Part::Reasoning(draft_.reasoning));
    final_message.parts.push_back(Part::Text(draft_.text));
  }
  std::lock_guard save(save_mu_);
  ASSIGN_OR_RETURN(AppendResult result, store_->FinishDraft(draft_id_, final_message));
  std::lock_guard lock(mu_);
  done_ = true;
  dirty_ = false;
  return result;
}

Status DraftWriter::Close() {
  Stop();
  std::unique_lock lock(mu_);
  if (done_) return Status::Ok();
  done_ = true;
  if (!dirty_) return last_error_;
  Status s = SaveLocked(lock);
  if (!s.ok()) last_error_ = s;
  return s;
}

int64_t DraftWriter::saves() const {
  std::lock_guard lock(mu_);
  return saves_;
}

Status DraftWriter::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

}  // namespace sessiondb
