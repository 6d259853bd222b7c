// libcurl, opened when the first feature that speaks HTTP needs it (src/core/
// shared_library.h says why not at start): the HTTP embedder
// (search/http_embedder) and the object-storage tier of a PostgreSQL store
// (blob/s3_object_store). The functions they call, bound once; curl/curl.h
// still gives the types and constants. In core, so both share one table.
// Thread-safety: LoadCurlFunctions may run on any thread; the table is immutable
// once loaded.
#pragma once

#include <curl/curl.h>

#include "sessiondb/status.h"

namespace sessiondb {

// Every libcurl function the callers use; the member is the name without
// "curl_" (which also keeps curl's type-checking macros, named after the
// functions, off the calls).
// clang-format off
#define SESSIONDB_CORE_LIBCURL_FUNCTIONS(X) \
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

struct CurlFunctions {
#define SESSIONDB_CORE_LIBCURL_MEMBER(name) decltype(&::curl_##name) name = nullptr;
  SESSIONDB_CORE_LIBCURL_FUNCTIONS(SESSIONDB_CORE_LIBCURL_MEMBER)
#undef SESSIONDB_CORE_LIBCURL_MEMBER
};

// Opens libcurl.so.4 (or $SESSIONDB_LIBCURL) the first time, binds the table
// and runs curl_global_init once; later calls return the same table.
// kFailedPrecondition when it cannot be loaded, saying what to install. A
// failure is not remembered: a later call tries again.
Result<const CurlFunctions*> LoadCurlFunctions();

}  // namespace sessiondb
