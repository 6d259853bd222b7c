// libpq, opened when the first PostgreSQL store is (src/core/shared_library.h
// says why not at start): the functions pg_connection calls, bound once.
// libpq-fe.h still gives the types and constants; only the calls go through
// this table, so nothing in the program names a libpq symbol for the linker.
// Thread-safety: LoadLibPq may run on any thread; the table is immutable once
// loaded.
#pragma once

#include <libpq-fe.h>

#include "sessiondb/status.h"

namespace sessiondb::postgres {

// Every libpq function the backend calls; the member is the name without "PQ".
// clang-format off
#define SESSIONDB_LIBPQ_FUNCTIONS(X) \
  X(clear) \
  X(cmdTuples) \
  X(connectPoll) \
  X(connectStart) \
  X(conninfo) \
  X(conninfoFree) \
  X(errorMessage) \
  X(exec) \
  X(execParams) \
  X(execPrepared) \
  X(finish) \
  X(getisnull) \
  X(getlength) \
  X(getResult) \
  X(getvalue) \
  X(ntuples) \
  X(prepare) \
  X(resultErrorField) \
  X(resultErrorMessage) \
  X(resultStatus) \
  X(sendQueryParams) \
  X(sendQueryPrepared) \
  X(setNoticeProcessor) \
  X(socket) \
  X(status) \
  X(transactionStatus)
// clang-format on

struct LibPq {
#define SESSIONDB_LIBPQ_MEMBER(name) decltype(&::PQ##name) name = nullptr;
  SESSIONDB_LIBPQ_FUNCTIONS(SESSIONDB_LIBPQ_MEMBER)
#undef SESSIONDB_LIBPQ_MEMBER
};

// Opens libpq.so.5 (or $SESSIONDB_LIBPQ) the first time and binds the table;
// later calls return the same table. kFailedPrecondition when it cannot be
// loaded: "PostgreSQL support needs libpq5 (libpq.so.5): apt install libpq5 ...".
// A failure is not remembered: a later call tries again.
Result<const LibPq*> LoadLibPq();

// The table LoadLibPq bound. Only for code that runs after it succeeded (a
// connection or a result exists); aborts otherwise, a programming error.
const LibPq& Pq();

}  // namespace sessiondb::postgres
