#include "server/libmicrohttpd.h"

#include "core/shared_library.h"

namespace sessiondb::server {
namespace {

constexpr LibrarySpec kLibMicrohttpdSpec = {.soname = "libmicrohttpd.so.12",
                                            .path_variable = "SESSIONDB_LIBMICROHTTPD",
                                            .feature = "the HTTP server (sessiondb serve)",
                                            .package = "libmicrohttpd12"};

Status BindLibMicrohttpd(const SharedLibrary& lib, LibMicrohttpd* table) {
#define SESSIONDB_LIBMICROHTTPD_BIND(name) RETURN_IF_ERROR(lib.Bind("MHD_" #name, &table->name));
  SESSIONDB_LIBMICROHTTPD_FUNCTIONS(SESSIONDB_LIBMICROHTTPD_BIND)
#undef SESSIONDB_LIBMICROHTTPD_BIND
  return Status::Ok();
}

LazyLibrary<LibMicrohttpd> libmicrohttpd(kLibMicrohttpdSpec, BindLibMicrohttpd);

}  // namespace

Result<const LibMicrohttpd*> LoadLibMicrohttpd() { return libmicrohttpd.Load(); }

const LibMicrohttpd& Mhd() { return libmicrohttpd.Get(); }

}  // namespace sessiondb::server
