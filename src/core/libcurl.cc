#include "core/libcurl.h"

#include "core/shared_library.h"

namespace sessiondb {
namespace {

constexpr LibrarySpec kCurlSpec = {.soname = "libcurl.so.4",
                                   .path_variable = "SESSIONDB_LIBCURL",
                                   .feature = "blobs in object storage (SESSIONDB_S3_ENDPOINT)",
                                   .package = "libcurl4"};

Status BindCurlFunctions(const SharedLibrary& lib, CurlFunctions* table) {
#define SESSIONDB_CORE_LIBCURL_BIND(name) RETURN_IF_ERROR(lib.Bind("curl_" #name, &table->name));
  SESSIONDB_CORE_LIBCURL_FUNCTIONS(SESSIONDB_CORE_LIBCURL_BIND)
#undef SESSIONDB_CORE_LIBCURL_BIND
  // curl_global_init counts its callers (search's table may have run it
  // too); under LazyLibrary's lock, before the table is handed out.
  if (table->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Status::Internal("libcurl (" + lib.file() + ") did not initialise");
  }
  return Status::Ok();
}

LazyLibrary<CurlFunctions> curl_functions(kCurlSpec, BindCurlFunctions);

}  // namespace

Result<const CurlFunctions*> LoadCurlFunctions() { return curl_functions.Load(); }

}  // namespace sessiondb
