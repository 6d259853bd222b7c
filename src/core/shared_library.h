// A shared library opened when a feature first needs it, not when the program
// starts. libpq, libcurl and libmicrohttpd bring 30 of the 41 libraries the
// `sessiondb` binary would otherwise load and relocate before main(), on every
// command, the Claude Code hook included (docs/benchmarks.md, "Issue 19").
// Each user (the PostgreSQL backend, the HTTP embedder, the HTTP server) keeps
// a table of the functions it calls in a LazyLibrary, bound once, and is
// never unloaded.
//
// Example:
//   constexpr LibrarySpec kLibPq = {
//       .soname = "libpq.so.5", .path_variable = "SESSIONDB_LIBPQ",
//       .feature = "PostgreSQL support", .package = "libpq5"};
//   Status BindLibPq(const SharedLibrary& lib, LibPq* table) {
//     return lib.Bind("PQconnectdb", &table->connectdb);
//   }
//   LazyLibrary<LibPq> libpq(kLibPq, BindLibPq);
//   ASSIGN_OR_RETURN(const LibPq* pq, libpq.Load());
//
// Thread-safety: Open and Bind may run on any thread (dlopen and dlsym are);
// a LazyLibrary's Load and Get may run on any thread, and bind its table once.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/mutex.h"
#include "sessiondb/status.h"

namespace sessiondb {

// What a feature says about the library it needs.
struct LibrarySpec {
  const char* soname;         // the file opened by default: "libpq.so.5"
  const char* path_variable;  // the environment variable that names another file
  const char* feature;        // what the user loses without it: "PostgreSQL support"
  const char* package;        // the Debian package that holds it: "libpq5"
};

class SharedLibrary {
 public:
  // Opens the file `$<path_variable>` names when it is set and not empty,
  // else `spec.soname` through the loader's search path. kFailedPrecondition
  // when it cannot be opened, saying what to install and the loader's reason:
  // "PostgreSQL support needs libpq5 (libpq.so.5): apt install libpq5 (...)".
  static Result<SharedLibrary> Open(const LibrarySpec& spec);

  // Sets *fn to the function `symbol`. kFailedPrecondition when the library
  // lacks it (an older release than the one the program was built with).
  template <typename Fn>
  Status Bind(const char* symbol, Fn** fn) const {
    void* address = nullptr;
    RETURN_IF_ERROR(Find(symbol, &address));
    *fn = reinterpret_cast<Fn*>(address);
    return Status::Ok();
  }

  // The file that was opened (the soname or the variable's value).
  const std::string& file() const { return file_; }

 private:
  SharedLibrary(void* handle, std::string file, const LibrarySpec& spec)
      : handle_(handle), file_(std::move(file)), spec_(spec) {}
  Status Find(const char* symbol, void** address) const;

  void* handle_;  // never closed: the bound functions live as long as the process
  std::string file_;
  LibrarySpec spec_;
};

// A library's table of functions (`Table`, plain function pointers), bound
// the first time it is asked for and then kept for the life of the process.
// `bind` sets the table's members from the opened library and may do the
// library's own one-time setup (libcurl's global init); it runs at most once
// successfully, under the lock. A failure is not remembered: a later Load
// tries again. Meant for an object of static storage duration.
template <typename Table>
class LazyLibrary {
 public:
  using BindFn = Status (*)(const SharedLibrary& library, Table* table);

  constexpr LazyLibrary(const LibrarySpec& spec, BindFn bind) : spec_(spec), bind_(bind) {}
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // The bound table, opening the library and binding it the first time.
  // kFailedPrecondition when the library or one of its functions is missing
  // (SharedLibrary::Open, Bind), or what `bind` returned.
  Result<const Table*> Load() EXCLUDES(mu_) {
    if (const Table* t = loaded_.load(std::memory_order_acquire)) return t;
    MutexLock lock(&mu_);
    if (const Table* t = loaded_.load(std::memory_order_relaxed)) return t;
    ASSIGN_OR_RETURN(SharedLibrary library, SharedLibrary::Open(spec_));
    Table bound;
    RETURN_IF_ERROR(bind_(library, &bound));
    table_ = bound;
    loaded_.store(&table_, std::memory_order_release);
    return &table_;
  }

  // The table Load bound. Only for code that runs after Load succeeded (a
  // connection or a daemon exists); aborts otherwise, a programming error.
  const Table& Get() const {
    const Table* t = loaded_.load(std::memory_order_acquire);
    if (t == nullptr) {
      std::fprintf(stderr, "sessiondb: %s used before it was loaded\n", spec_.soname);
      std::abort();
    }
    return *t;
  }

 private:
  const LibrarySpec spec_;
  const BindFn bind_;
  Mutex mu_;
  // Written once, under mu_, before loaded_; read through loaded_ after that.
  Table table_ GUARDED_BY(mu_){};
  std::atomic<const Table*> loaded_{nullptr};
};

}  // namespace sessiondb
