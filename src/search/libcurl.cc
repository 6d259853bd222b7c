#include "search/libcurl.h"

#include <mutex>

#include "core/shared_library.h"

namespace sessiondb::search {
namespace {

constexpr LibrarySpec kLibCurlSpec = {.soname = "libcurl.so.4",
                                      .path_variable = "SESSIONDB_LIBCURL",
                                      .feature = "the HTTP embedder (SESSIONDB_EMBED_URL)",
                                      .package = "libcurl4"};

std::mutex load_mu;
LibCurl table;        // written once, under load_mu
bool loaded = false;  // under load_mu

}  // namespace

Result<const LibCurl*> LoadLibCurl() {
  // A lock on every call: embedders are made once per index, not per request.
  std::lock_guard lock(load_mu);
  if (loaded) return &table;
  ASSIGN_OR_RETURN(SharedLibrary lib, SharedLibrary::Open(kLibCurlSpec));
  LibCurl bound;
#define SESSIONDB_LIBCURL_BIND(name) RETURN_IF_ERROR(lib.Bind("curl_" #name, &bound.name));
  SESSIONDB_LIBCURL_FUNCTIONS(SESSIONDB_LIBCURL_BIND)
#undef SESSIONDB_LIBCURL_BIND
  // libcurl's global state must be set up once, before any thread uses it;
  // under this lock, before the table is handed out, it is.
  if (bound.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    return Err(Status::Internal("libcurl (" + lib.file() + ") did not initialise"));
  }
  table = bound;
  loaded = true;
  return &table;
}

}  // namespace sessiondb::search
