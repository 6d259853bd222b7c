// EmbeddingWorker: a thread with a SearchIndex of its own that embeds what is
// pending in small batches, so stopping it waits for one batch at most.
#include <algorithm>
#include <chrono>
#include <thread>

#include "core/mutex.h"
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
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    wake_.SignalAll();
    thread_.join();
  }

  void Nudge() override EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      nudged_ = true;
    }
    wake_.SignalAll();
  }

  EmbeddingProgress progress() const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return progress_;
  }

  bool WaitUntilCaughtUp(int64_t max_pending, int timeout_ms) override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    // The count may be stale: let the worker look again before judging.
    const uint64_t look = looks_;
    nudged_ = true;
    wake_.SignalAll();
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
    while (looks_ <= look && !stopping_) {
      if (!caught_up_.WaitUntil(&mu_, deadline)) break;
    }
    if (looks_ <= look && !stopping_) return false;
    if (progress_.pending > max_pending || !progress_.last_error.empty()) {
      return progress_.pending == 0;
    }
    while (progress_.pending != 0 && progress_.last_error.empty() && !stopping_) {
      if (!caught_up_.WaitUntil(&mu_, deadline)) break;
    }
    return progress_.pending == 0;
  }

 private:
  void Run() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!stopping_) {
      nudged_ = false;
      lock.Unlock();
      const bool more = EmbedOneBatch();
      lock.Lock();
      ++looks_;
      caught_up_.SignalAll();
      if (more && progress_.last_error.empty()) {
        quiet_looks_ = 0;
        continue;  // keep going while behind
      }
      // Nothing new: look again later and later, up to a minute, so a quiet
      // process stops using its store's connections and a PostgreSQL pool
      // closes them (pg_pool.h). A nudge (a write, a search) looks at once.
      const auto wait = std::min<std::chrono::milliseconds>(
          poll_ * (int64_t{1} << std::min(quiet_looks_++, 5)), std::chrono::minutes(1));
      const auto deadline = std::chrono::steady_clock::now() + wait;
      while (!stopping_ && !nudged_) {
        if (!wake_.WaitUntil(&mu_, deadline)) break;
      }
      if (nudged_) quiet_looks_ = 0;
    }
  }

  // Indexes one batch of new documents for full text, then embeds one batch;
  // true when documents remain. Only this thread uses index_, so it needs no
  // lock; progress_ does.
  bool EmbedOneBatch() EXCLUDES(mu_) {
    // A read-only store cannot be indexed; its searches answer as of the
    // index's watermark, and embedding fails on its own below.
    Result<int64_t> text_left = index_->IndexPending(kTextBatchDocuments);
    {
      MutexLock lock(&mu_);
      progress_.pending_text = text_left ? *text_left : progress_.pending_text;
    }
    const bool more_text = text_left && *text_left > 0;
    Result<EmbedReport> report = index_->Embed(kBatchDocuments);
    Result<int64_t> pending =
        report ? Result<int64_t>(report->remaining) : index_->PendingEmbeddings();
    MutexLock lock(&mu_);
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
  mutable Mutex mu_;
  CondVar wake_;       // the worker waits on it
  CondVar caught_up_;  // callers of WaitUntilCaughtUp wait on it
  EmbeddingProgress progress_ GUARDED_BY(mu_);
  uint64_t looks_ GUARDED_BY(mu_) = 0;  // batches tried
  bool nudged_ GUARDED_BY(mu_) = false;
  int quiet_looks_ GUARDED_BY(mu_) = 0;  // looks in a row that found nothing
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts after the rest exists
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
