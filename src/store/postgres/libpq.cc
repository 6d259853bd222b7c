#include "store/postgres/libpq.h"

#include "core/shared_library.h"

namespace sessiondb::postgres {
namespace {

constexpr LibrarySpec kLibPqSpec = {.soname = "libpq.so.5",
                                    .path_variable = "SESSIONDB_LIBPQ",
                                    .feature = "PostgreSQL support",
                                    .package = "libpq5"};

Status BindLibPq(const SharedLibrary& lib, LibPq* table) {
#define SESSIONDB_LIBPQ_BIND(name) RETURN_IF_ERROR(lib.Bind("PQ" #name, &table->name));
  SESSIONDB_LIBPQ_FUNCTIONS(SESSIONDB_LIBPQ_BIND)
#undef SESSIONDB_LIBPQ_BIND
  return Status::Ok();
}

LazyLibrary<LibPq> libpq(kLibPqSpec, BindLibPq);

}  // namespace

Result<const LibPq*> LoadLibPq() { return libpq.Load(); }

const LibPq& Pq() { return libpq.Get(); }

}  // namespace sessiondb::postgres
