// libmicrohttpd, opened when `sessiondb serve` starts its daemon (src/core/
// shared_library.h says why not at start: it brings GnuTLS and eight more
// libraries): the functions http_daemon calls, bound once. microhttpd.h
// still gives the types and constants.
// Thread-safety: LoadLibMicrohttpd may run on any thread; the table is
// immutable once loaded.
#pragma once

#include <microhttpd.h>

#include "sessiondb/status.h"

namespace sessiondb::server {

// Every libmicrohttpd function the daemon calls; the member is the name
// without "MHD_".
// clang-format off
#define SESSIONDB_LIBMICROHTTPD_FUNCTIONS(X) \
  X(add_response_header) \
  X(create_post_processor) \
  X(create_response_from_buffer_with_free_callback_cls) \
  X(create_response_from_callback) \
  X(destroy_post_processor) \
  X(destroy_response) \
  X(get_connection_info) \
  X(get_connection_values) \
  X(post_process) \
  X(queue_response) \
  X(start_daemon) \
  X(stop_daemon)
// clang-format on

struct LibMicrohttpd {
#define SESSIONDB_LIBMICROHTTPD_MEMBER(name) decltype(&::MHD_##name) name = nullptr;
  SESSIONDB_LIBMICROHTTPD_FUNCTIONS(SESSIONDB_LIBMICROHTTPD_MEMBER)
#undef SESSIONDB_LIBMICROHTTPD_MEMBER
};

// Opens libmicrohttpd.so.12 (or $SESSIONDB_LIBMICROHTTPD) the first time and
// binds the table; later calls return the same table. kFailedPrecondition
// when it cannot be loaded: "the HTTP server needs libmicrohttpd12
// (libmicrohttpd.so.12): apt install libmicrohttpd12 ...". A failure is not
// remembered: a later call tries again.
Result<const LibMicrohttpd*> LoadLibMicrohttpd();

// The table LoadLibMicrohttpd bound. Only for code that runs after it
// succeeded (a daemon exists); aborts otherwise, a programming error.
const LibMicrohttpd& Mhd();

}  // namespace sessiondb::server
