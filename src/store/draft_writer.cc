#include "sessiondb/draft_writer.h"

#include <chrono>
#include <thread>
#include <utility>

#include "core/mutex.h"

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
  void AppendText(std::string_view delta) EXCLUDES(mu_);
  void AppendReasoning(std::string_view delta) EXCLUDES(mu_);
  Status Flush() EXCLUDES(mu_, save_mu_);
  Result<AppendResult> Finish(const Message& message) EXCLUDES(mu_, save_mu_);
  Status Close() EXCLUDES(mu_, save_mu_);
  int64_t saves() const EXCLUDES(mu_);
  Status last_error() const EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_, save_mu_);
  // Saves a copy of draft_, releasing mu_ while the store writes it.
  Status SaveLocked() REQUIRES(mu_) EXCLUDES(save_mu_);
  void Stop() EXCLUDES(mu_);

  Store* const store_;
  const DraftWriterOptions options_;
  const std::string draft_id_;
  mutable Mutex mu_;
  CondVar wake_;
  Draft draft_ GUARDED_BY(mu_);         // what the caller has streamed
  bool dirty_ GUARDED_BY(mu_) = false;  // draft_ differs from the stored row
  bool stopping_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;  // finished or closed
  int64_t saves_ GUARDED_BY(mu_) = 0;
  Status last_error_ GUARDED_BY(mu_);
  Mutex save_mu_;  // one save in flight at a time
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
  MutexLock lock(&mu_);
  draft_.text.append(delta);
  dirty_ = true;
}

void DraftWriter::Impl::AppendReasoning(std::string_view delta) {
  if (delta.empty()) return;
  MutexLock lock(&mu_);
  draft_.reasoning.append(delta);
  dirty_ = true;
}

void DraftWriter::Impl::Run() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    const auto deadline = std::chrono::steady_clock::now() + options_.save_interval;
    while (!stopping_) {
      if (!wake_.WaitUntil(&mu_, deadline)) break;
    }
    if (stopping_) break;
    if (!dirty_) continue;  // nothing changed: nothing is written
    Status s = SaveLocked();
    if (!s.ok()) last_error_ = s;
  }
}

Status DraftWriter::Impl::SaveLocked() {
  // Copy under mu_, write without it, so producers never wait for the disk.
  Draft snapshot = draft_;
  dirty_ = false;
  mu_.Unlock();
  Status s;
  {
    MutexLock save(&save_mu_);
    s = store_->SaveDraft(snapshot);
  }
  mu_.Lock();
  if (s.ok()) {
    ++saves_;
  } else {
    dirty_ = true;  // try again on the next tick
  }
  return s;
}

Status DraftWriter::Impl::Flush() {
  MutexLock lock(&mu_);
  if (done_ || !dirty_) return Status::Ok();
  return SaveLocked();
}

void DraftWriter::Impl::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

Result<AppendResult> DraftWriter::Impl::Finish(const Message& message) {
  Stop();
  {
    MutexLock lock(&mu_);
    if (done_) return Err(Status::FailedPrecondition("draft " + draft_id_ + " is already closed"));
  }
  Message final_message = message;
  if (final_message.parts.empty()) {
    // The streamed text, even what the last save has not reached yet.
    MutexLock lock(&mu_);
    if (!draft_.reasoning.empty()) final_message.parts.push_back(Part::Reasoning(draft_.reasoning));
    final_message.parts.push_back(Part::Text(draft_.text));
  }
  MutexLock save(&save_mu_);
  ASSIGN_OR_RETURN(AppendResult result, store_->FinishDraft(draft_id_, final_message));
  MutexLock lock(&mu_);
  done_ = true;
  dirty_ = false;
  return result;
}

Status DraftWriter::Impl::Close() {
  Stop();
  MutexLock lock(&mu_);
  if (done_) return Status::Ok();
  done_ = true;
  if (!dirty_) return last_error_;
  Status s = SaveLocked();
  if (!s.ok()) last_error_ = s;
  return s;
}

int64_t DraftWriter::Impl::saves() const {
  MutexLock lock(&mu_);
  return saves_;
}

Status DraftWriter::Impl::last_error() const {
  MutexLock lock(&mu_);
  return last_error_;
}

}  // namespace sessiondb
