#include "store/postgres/libpq.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/shared_library.h"

namespace sessiondb::postgres {
namespace {

constexpr LibrarySpec kLibPqSpec = {.soname = "libpq.so.5",
                                    .path_variable = "SESSIONDB_LIBPQ",
                                    .feature = "PostgreSQL support",
                                    .package = "libpq5"};

std::mutex load_mu;
LibPq table;  // written once, under load_mu, before `loaded`
std::atomic<const LibPq*> loaded{nullptr};

}  // namespace

Result<const LibPq*> LoadLibPq() {
  if (const LibPq* t = loaded.load(std::memory_order_acquire)) return t;
  std::lock_guard lock(load_mu);
  if (const LibPq* t = loaded.load(std::memory_order_relaxed)) return t;
  ASSIGN_OR_RETURN(SharedLibrary lib, SharedLibrary::Open(kLibPqSpec));
  LibPq bound;
#define SESSIONDB_LIBPQ_BIND(name) RETURN_IF_ERROR(lib.Bind("PQ" #name, &bound.name));
  SESSIONDB_LIBPQ_FUNCTIONS(SESSIONDB_LIBPQ_BIND)
#undef SESSIONDB_LIBPQ_BIND
  table = bound;
  loaded.store(&table, std::memory_order_release);
  return &table;
}

const LibPq& Pq() {
  const LibPq* t = loaded.load(std::memory_order_acquire);
  if (t == nullptr) {
    std::fputs("sessiondb: libpq used before LoadLibPq succeeded\n", stderr);
    std::abort();
  }
  return *t;
}

}  // namespace sessiondb::postgres
