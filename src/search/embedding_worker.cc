// EmbeddingWorker: a thread with a SearchIndex of its own that embeds what is
// pending in small batches, so stopping it waits for one batch at most.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "sessiondb/search.h"

namespace sessiondb {
namespace search {
namespace {

// Documents per call of Embed: small enough that a stop or a waiting caller
// never waits long, large enough that a remote embedder gets full batches.
constexpr int64_t kBatchDocuments = 256;
// Documents per full-text batch: indexing is cheaper than embedding.
constexpr int64_t kTextBatchDocuments = 4096;

class ThreadEmbeddingWorker final : public EmbeddingWorker {
 public:
  ThreadEmbeddingWorker(std::unique_ptr<SearchIndex> index, int poll_ms)
      : index_(std::move(index)), poll_(std::chrono::milliseconds(std::max(poll_ms, 10))) {
    progress_.model = index_->EmbeddingModel();
    thread_ = std::thread([this] { Run(); });
  }

  ~ThreadEmbeddingWorker() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  void Nudge() override {
    {
      std::lock_guard lock(mu_);
      nudged_ = true;
    }
    wake_.notify_all();
  }

  EmbeddingProgress progress() const override {
    std::lock_guard lock(mu_);
    return progress_;
  }

  bool WaitUntilCaughtUp(int64_t max_pending, int timeout_ms) override {
    std::unique_lock lock(mu_);
    // The count may be stale: let the worker look again before judging.
    const uint64_t look = looks_;
    nudged_ = true;
    wake_.notify_all();
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    if (!caught_up_.wait_until(lock, deadline, [&] { return looks_ > look || stopping_; })) {
      return false;
    }
    if (progress_.pending > max_pending || !progress_.last_error.empty()) {
      return progress_.pending == 0;
    }
    caught_up_.wait_until(lock, deadline, [&] {
      return progress_.pending == 0 || !progress_.last_error.empty() || stopping_;
    });
    return progress_.pending == 0;
  }

 private:
  void Run() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      nudged_ = false;
      lock.unlock();
      const bool more = EmbedOneBatch();
      lock.lock();
      ++looks_;
      caught_up_.notify_all();
      if (more && progress_.last_error.empty()) continue;  // keep going while behind
      wake_.wait_for(lock, poll_, [this] { return stopping_ || nudged_; });
    }
  }

  // Indexes one batch of new documents for full text, then embeds one batch;
  // true when documents remain. Only this thread uses index_, so it needs no
  // lock; progress_ does.
  bool EmbedOneBatch() {
    // A read-only store cannot be indexed; its searches answer as of the
    // index's watermark, and embedding fails on its own below.
    Result<int64_t> text_left = index_->IndexPending(kTextBatchDocuments);
    {
      std::lock_guard lock(mu_);
      progress_.pending_text = text_left ? *text_left : progress_.pending_text;
    }
    const bool more_text = text_left && *text_left > 0;
    Result<EmbedReport> report = index_->Embed(kBatchDocuments);
    Result<int64_t> pending =
        report ? Result<int64_t>(report->remaining) : index_->PendingEmbeddings();
    std::lock_guard lock(mu_);
    if (!report) {
      progress_.last_error = report.error().message();
      if (pending) progress_.pending = *pending;
      return more_text;
    }
    progress_.last_error.clear();
    progress_.embedded += report->embedded;
    progress_.pending = report->remaining;
    if (!report->model.empty()) progress_.model = report->model;
    return more_text || report->remaining > 0;
  }

  std::unique_ptr<SearchIndex> index_;
  const std::chrono::milliseconds poll_;
  mutable std::mutex mu_;
  std::condition_variable wake_;       // the worker waits on it
  std::condition_variable caught_up_;  // callers of WaitUntilCaughtUp wait on it
  EmbeddingProgress progress_;         // guarded by mu_
  uint64_t looks_ = 0;                 // batches tried; guarded by mu_
  bool nudged_ = false;                // guarded by mu_
  bool stopping_ = false;              // guarded by mu_
  std::thread thread_;                 // last: starts after the rest exists
};

}  // namespace
}  // namespace search

Result<std::unique_ptr<EmbeddingWorker>> EmbeddingWorker::Start(Store& store,
                                                                const SearchOptions& options,
                                                                int poll_ms) {
  ASSIGN_OR_RETURN(std::unique_ptr<SearchIndex> index, SearchIndex::Open(store, options));
  return std::unique_ptr<EmbeddingWorker>(
      new search::ThreadEmbeddingWorker(std::move(index), poll_ms));
}

}  // namespace sessiondb
