#include "server/libmicrohttpd.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/shared_library.h"

namespace sessiondb::server {
namespace {

constexpr LibrarySpec kLibMicrohttpdSpec = {.soname = "libmicrohttpd.so.12",
                                            .path_variable = "SESSIONDB_LIBMICROHTTPD",
                                            .feature = "the HTTP server (sessiondb serve)",
                                            .package = "libmicrohttpd12"};

std::mutex load_mu;
LibMicrohttpd table;  // written once, under load_mu, before `loaded`
std::atomic<const LibMicrohttpd*> loaded{nullptr};

}  // namespace

Result<const LibMicrohttpd*> LoadLibMicrohttpd() {
  if (const LibMicrohttpd* t = loaded.load(std::memory_order_acquire)) return t;
  std::lock_guard lock(load_mu);
  if (const LibMicrohttpd* t = loaded.load(std::memory_order_relaxed)) return t;
  ASSIGN_OR_RETURN(SharedLibrary lib, SharedLibrary::Open(kLibMicrohttpdSpec));
  LibMicrohttpd bound;
#define SESSIONDB_LIBMICROHTTPD_BIND(name) RETURN_IF_ERROR(lib.Bind("MHD_" #name, &bound.name));
  SESSIONDB_LIBMICROHTTPD_FUNCTIONS(SESSIONDB_LIBMICROHTTPD_BIND)
#undef SESSIONDB_LIBMICROHTTPD_BIND
  table = bound;
  loaded.store(&table, std::memory_order_release);
  return &table;
}

const LibMicrohttpd& Mhd() {
  const LibMicrohttpd* t = loaded.load(std::memory_order_acquire);
  if (t == nullptr) {
    std::fputs("sessiondb: libmicrohttpd used before LoadLibMicrohttpd succeeded\n", stderr);
    std::abort();
  }
  return *t;
}

}  // namespace sessiondb::server
