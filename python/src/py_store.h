// PyStore: the Store behind sessiondb.Store. Every call that reaches the
// engine runs with the GIL released (Run), so Python threads proceed while
// one waits on the disk or the database server; close() waits for calls
// under way (a shared lock each, exclusive to close). The store's
// SearchIndex and CodeMemory are opened on first use and kept, each behind a
// mutex of its own (neither is thread-safe), and closed before the Store.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "support.h"

namespace sessiondb::python {

class PyStore {
 public:
  PyStore(std::string location, std::unique_ptr<Store> store)
      : location_(std::move(location)), store_(std::move(store)) {}
  ~PyStore() { Close(); }

  const std::string& location() const { return location_; }

  // Calls f(Store&) with the GIL released; sessiondb.FailedPrecondition once closed.
  template <typename F>
  auto Run(F&& f) {
    py::gil_scoped_release release;
    std::shared_lock lock(mu_);
    if (!store_)
      throw StatusError{Status::FailedPrecondition("the store at " + location_ + " is closed")};
    return f(*store_);
  }

  // Calls f(SearchIndex&) with the GIL released, opening the index once.
  template <typename F>
  auto RunSearch(F&& f) {
    return Run([&](Store& store) {
      std::lock_guard guard(search_mu_);
      if (!search_) search_ = Unwrap(SearchIndex::Open(store));
      return f(*search_);
    });
  }

  // Calls f(CodeMemory&) with the GIL released, opening the memory once.
  template <typename F>
  auto RunMemory(F&& f) {
    return Run([&](Store& store) {
      std::lock_guard guard(memory_mu_);
      if (!memory_) memory_ = Unwrap(CodeMemory::Open(store));
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

  bool closed() {
    std::shared_lock lock(mu_);
    return store_ == nullptr;
  }

 private:
  std::string location_;
  std::shared_mutex mu_;
  std::unique_ptr<Store> store_;
  std::mutex search_mu_;
  std::unique_ptr<SearchIndex> search_;
  std::mutex memory_mu_;
  std::unique_ptr<CodeMemory> memory_;
};

void BindSearch(py::class_<PyStore>& cls);
void BindInterop(py::class_<PyStore>& cls);
void BindForget(py::class_<PyStore>& cls);

}  // namespace sessiondb::python
