#include "sessiondb/draft_writer.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

namespace sessiondb {

// What a DraftWriter is: the buffered draft, the thread that saves it every
// interval, and the locks between them. Kept here so the public header
// carries no thread or mutex.
class DraftWriter::Impl {
 public:
  Impl(Store* store, Draft draft, DraftWriterOptions options)
      : store_(store), options_(std::move(options)), draft_id_(draft.id), draft_(std::move(draft)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Impl() {
    Status ignored = Close();  // errors were kept in last_error_ for the caller
    (void)ignored;
  }

  const std::string& draft_id() const { return draft_id_; }
  void AppendText(std::string_view delta);
  void AppendReasoning(std::string_view delta);
  Status Flush();
  Result<AppendResult> Finish(const Message& message);
  Status Close();
  int64_t saves() const;
  Status last_error() const;

 private:
  void Run();
  Status SaveLocked(std::unique_lock<std::mutex>& lock);
  void Stop();

  Store* const store_;
  const DraftWriterOptions options_;
  const std::string draft_id_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  Draft draft_;            // guarded by mu_: what the caller has streamed
  bool dirty_ = false;     // guarded by mu_: draft_ differs from the stored row
  bool stopping_ = false;  // guarded by mu_
  bool done_ = false;      // guarded by mu_: finished or closed
  int64_t saves_ = 0;      // guarded by mu_
  Status last_error_;      // guarded by mu_
  std::mutex save_mu_;     // one save in flight at a time
  std::thread thread_;
};

Result<std::unique_ptr<DraftWriter>> DraftWriter::Open(Store* store, std::string_view session_id,
                                                       const DraftWriterOptions& options) {
  if (options.save_interval.count() <= 0) {
    return Err(Status::InvalidArgument("the draft save interval must be positive"));
  }
  ASSIGN_OR_RETURN(Draft draft, store->OpenDraft(session_id, options.role, options.model));
  return std::unique_ptr<DraftWriter>(
      new DraftWriter(std::make_unique<Impl>(store, std::move(draft), options)));
}

DraftWriter::DraftWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DraftWriter::~DraftWriter() = default;  // Impl's destructor closes

const std::string& DraftWriter::draft_id() const { return impl_->draft_id(); }
void DraftWriter::AppendText(std::string_view delta) { impl_->AppendText(delta); }
void DraftWriter::AppendReasoning(std::string_view delta) { impl_->AppendReasoning(delta); }
Status DraftWriter::Flush() { return impl_->Flush(); }
Result<AppendResult> DraftWriter::Finish(const Message& message) { return impl_->Finish(message); }
Status DraftWriter::Close() { return impl_->Close(); }
int64_t DraftWriter::saves() const { return impl_->saves(); }
Status DraftWriter::last_error() const { return impl_->last_error(); }

void DraftWriter::Impl::AppendText(std::string_view delta) {
  if (delta.empty()) return;
  std::lock_guard lock(mu_);
  draft_.text.append(delta);
  dirty_ = true;
}

void DraftWriter::Impl::AppendReasoning(std::string_view delta) {
  if (delta.empty()) return;
  std::lock_guard lock(mu_);
  draft_.reasoning.append(delta);
  dirty_ = true;
}

void DraftWriter::Impl::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, options_.save_interval, [this] { return stopping_; });
    if (stopping_) break;
    if (!dirty_) continue;  // nothing changed: nothing is written
    Status s = SaveLocked(lock);
    if (!s.ok()) last_error_ = s;
  }
}

Status DraftWriter::Impl::SaveLocked(std::unique_lock<std::mutex>& lock) {
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

Status DraftWriter::Impl::Flush() {
  std::unique_lock lock(mu_);
  if (done_ || !dirty_) return Status::Ok();
  return SaveLocked(lock);
}

void DraftWriter::Impl::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<AppendResult> DraftWriter::Impl::Finish(const Message& message) {
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

Status DraftWriter::Impl::Close() {
  Stop();
  std::unique_lock lock(mu_);
  if (done_) return Status::Ok();
  done_ = true;
  if (!dirty_) return last_error_;
  Status s = SaveLocked(lock);
  if (!s.ok()) last_error_ = s;
  return s;
}

int64_t DraftWriter::Impl::saves() const {
  std::lock_guard lock(mu_);
  return saves_;
}

Status DraftWriter::Impl::last_error() const {
  std::lock_guard lock(mu_);
  return last_error_;
}

}  // namespace sessiondb
