// A shared library opened when a feature first needs it, not when the program
// starts. libpq, libcurl and libmicrohttpd bring 30 of the 41 libraries the
// `sessiondb` binary would otherwise load and relocate before main(), on every
// command, the Claude Code hook included (docs/benchmarks.md, "Issue 19").
// Each user (the PostgreSQL backend, the HTTP embedder, the HTTP server) keeps
// a table of the functions it calls, bound here once, and is never unloaded.
//
// Example:
//   static constexpr LibrarySpec kLibPq = {
//       .soname = "libpq.so.5", .path_variable = "SESSIONDB_LIBPQ",
//       .feature = "PostgreSQL support", .package = "libpq5"};
//   ASSIGN_OR_RETURN(SharedLibrary lib, SharedLibrary::Open(kLibPq));
//   RETURN_IF_ERROR(lib.Bind("PQconnectdb", &table.connectdb));
//
// Thread-safety: Open and Bind may run on any thread (dlopen and dlsym are);
// callers make their tables once, under a lock of their own.
#pragma once

#include <string>

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

}  // namespace sessiondb
