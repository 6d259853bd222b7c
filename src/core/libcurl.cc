#include "core/libcurl.h"

#include "core/shared_library.h"

namespace sessiondb {
namespace {

constexpr LibrarySpec kCurlSpec = {
    .soname = "libcurl.so.4",
    .path_variable = "SESSIONDB_LIBCURL",
    .feature =
        "HTTP (the embedder of SESSIONDB_EMBED_URL, object storage of SESSIONDB_S3_ENDPOINT)",
    .package = "libcurl4"};

Status BindCurlFunctions(const SharedLibrary& lib, CurlFunctions* table) {
#define SESSIONDB_CORE_LIBCURL_BIND(name) RETURN_IF_ERROR(lib.Bind("curl_" #name, &table->name));
  SESSIONDB_CORE_LIBCURL_FUNCTIONS(SESSIONDB_CORE_LIBCURL_BIND)
#undef SESSIONDB_CORE_LIBCURL_BIND
  // libcurl's global state must be set up once, before any thread uses it;
  // under LazyLibrary's lock, before the table is handed out, it is.
  if (table->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Status::Internal("libcurl (" + lib.file() + ") did not initialise");
  }
  return Status::Ok();
}

LazyLibrary<CurlFunctions> curl_functions(kCurlSpec, BindCurlFunctions);

}  // namespace

Result<const CurlFunctions*> LoadCurlFunctions() { return curl_functions.Load(); }

}  // namespace sessiondb
