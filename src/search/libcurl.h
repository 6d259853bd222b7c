// libcurl, opened when the first HTTP embedder is made (src/core/
// shared_library.h says why not at start): the functions http_embedder
// calls, bound once. curl/curl.h still gives the types and constants.
// Thread-safety: LoadLibCurl may run on any thread; the table is immutable
// once loaded.
#pragma once

#include <curl/curl.h>

#include "sessiondb/status.h"

namespace sessiondb::search {

// Every libcurl function the embedder calls; the member is the name without
// "curl_" (which also keeps curl's type-checking macros, named after the
// functions, off the calls).
// clang-format off
#define SESSIONDB_LIBCURL_FUNCTIONS(X) \
  X(easy_cleanup) \
  X(easy_getinfo) \
  X(easy_init) \
  X(easy_perform) \
  X(easy_setopt) \
  X(easy_strerror) \
  X(global_init) \
  X(slist_append) \
  X(slist_free_all)
// clang-format on

struct LibCurl {
#define SESSIONDB_LIBCURL_MEMBER(name) decltype(&::curl_##name) name = nullptr;
  SESSIONDB_LIBCURL_FUNCTIONS(SESSIONDB_LIBCURL_MEMBER)
#undef SESSIONDB_LIBCURL_MEMBER
};

// Opens libcurl.so.4 (or $SESSIONDB_LIBCURL) the first time, binds the table
// and runs curl_global_init once; later calls return the same table.
// kFailedPrecondition when it cannot be loaded: "the HTTP embedder needs
// libcurl4 (libcurl.so.4): apt install libcurl4 ...". A failure is not
// remembered: a later call tries again.
Result<const LibCurl*> LoadLibCurl();

}  // namespace sessiondb::search
