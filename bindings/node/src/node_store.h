// NodeStore: the Store behind one `Store` object of the Node package. Its
// calls run on libuv's worker threads (addon.cc), several at once: each
// holds a shared lock, close() the exclusive one, so closing waits for the
// calls under way. The store's SearchIndex and CodeMemory are opened on first
// use and kept, each behind a mutex of its own (neither is thread-safe), and
// closed before the Store. The Python package's PyStore has the same shape.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>

#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"

namespace sessiondb::node {

class NodeStore {
 public:
  NodeStore(std::string location, std::unique_ptr<Store> store)
      : location_(std::move(location)), store_(std::move(store)) {}
  ~NodeStore() { Close(); }
  NodeStore(const NodeStore&) = delete;
  NodeStore& operator=(const NodeStore&) = delete;

  // f(Store&), or kFailedPrecondition once closed. f returns a Result.
  template <typename F>
  auto Run(F&& f) -> decltype(f(std::declval<Store&>())) {
    std::shared_lock lock(mu_);
    if (!store_) return Err(Closed());
    return f(*store_);
  }

  // f(Store&) for a call that answers only a Status; kFailedPrecondition once closed.
  template <typename F>
  Status RunStatus(F&& f) {
    std::shared_lock lock(mu_);
    if (!store_) return Closed();
    return f(*store_);
  }

  // f(SearchIndex&), opening the index once.
  template <typename F>
  auto RunSearch(F&& f) -> decltype(f(std::declval<SearchIndex&>())) {
    return Run([&](Store& store) -> decltype(f(std::declval<SearchIndex&>())) {
      std::lock_guard guard(search_mu_);
      if (!search_) {
        auto opened = SearchIndex::Open(store);
        if (!opened) return Err(opened.error());
        search_ = std::move(*opened);
      }
      return f(*search_);
    });
  }

  // f(CodeMemory&), opening the memory once.
  template <typename F>
  auto RunMemory(F&& f) -> decltype(f(std::declval<CodeMemory&>())) {
    return Run([&](Store& store) -> decltype(f(std::declval<CodeMemory&>())) {
      std::lock_guard guard(memory_mu_);
      if (!memory_) {
        auto opened = CodeMemory::Open(store);
        if (!opened) return Err(opened.error());
        memory_ = std::move(*opened);
      }
      return f(*memory_);
    });
  }

  // Closes the index, the memory and the store, after the calls under way.
  void Close() {
    std::unique_lock lock(mu_);
    {
      std::lock_guard guard(search_mu_);
      search_.reset();
    }
    {
      std::lock_guard guard(memory_mu_);
      memory_.reset();
    }
    store_.reset();
  }

  const std::string& location() const { return location_; }

 private:
  Status Closed() const {
    return Status::FailedPrecondition("the store at " + location_ + " is closed");
  }

  const std::string location_;
  std::shared_mutex mu_;
  std::unique_ptr<Store> store_;
  std::mutex search_mu_;
  std::unique_ptr<SearchIndex> search_;
  std::mutex memory_mu_;
  std::unique_ptr<CodeMemory> memory_;
};

}  // namespace sessiondb::node
