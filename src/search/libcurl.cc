#include "search/libcurl.h"

#include "core/shared_library.h"

namespace sessiondb::search {
namespace {

constexpr LibrarySpec kLibCurlSpec = {.soname = "libcurl.so.4",
                                      .path_variable = "SESSIONDB_LIBCURL",
                                      .feature = "the HTTP embedder (SESSIONDB_EMBED_URL)",
                                      .package = "libcurl4"};

Status BindLibCurl(const SharedLibrary& lib, LibCurl* table) {
#define SESSIONDB_LIBCURL_BIND(name) RETURN_IF_ERROR(lib.Bind("curl_" #name, &table->name));
  SESSIONDB_LIBCURL_FUNCTIONS(SESSIONDB_LIBCURL_BIND)
#undef SESSIONDB_LIBCURL_BIND
  // libcurl's global state must be set up once, before any thread uses it;
  // under LazyLibrary's lock, before the table is handed out, it is.
  if (table->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Status::Internal("libcurl (" + lib.file() + ") did not initialise");
  }
  return Status::Ok();
}

LazyLibrary<LibCurl> libcurl(kLibCurlSpec, BindLibCurl);

}  // namespace

Result<const LibCurl*> LoadLibCurl() { return libcurl.Load(); }

}  // namespace sessiondb::search
