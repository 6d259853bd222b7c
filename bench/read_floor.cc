#include "read_floor.h"

#include <sqlite3.h>

#include <stdexcept>
#include <vector>

#include "stats.h"

namespace sessiondb::bench {
namespace {

// The columns and order of the store's own read of a history of messages
// (MESSAGE_COLUMNS in src/store/sqlite/sqlite_rows.h).
constexpr const char* kSelect =
    "SELECT seq, id, ts_ms, role, text, body, session_id FROM events "
    "WHERE session_id = ?1 AND type = 'message' ORDER BY seq";

void Check(int rc, sqlite3* db, const char* what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  throw std::runtime_error(std::string("read floor: ") + what + ": " +
                           (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

// One read of every row, each column looked at as the store does. Returns
// how many rows it stepped; `*sink` keeps the reads from being optimised out.
int64_t ReadOnce(sqlite3* db, sqlite3_stmt* stmt, uint64_t* sink) {
  int64_t rows = 0;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    ++rows;
    *sink += static_cast<uint64_t>(sqlite3_column_int64(stmt, 0) + sqlite3_column_int64(stmt, 2));
    for (int col : {1, 3, 4, 5, 6}) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
      const auto bytes = static_cast<size_t>(sqlite3_column_bytes(stmt, col));
      if (text != nullptr && bytes > 0) *sink += static_cast<unsigned char>(text[bytes - 1]);
    }
  }
  Check(rc, db, "step");
  Check(sqlite3_reset(stmt), db, "reset");
  return rows;
}

}  // namespace

ReadFloor MeasureMessageRowRead(const std::string& db_path, const std::string& session_id,
                                int repeats) {
  sqlite3* db = nullptr;
  Check(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr),
        db, "open");
  sqlite3_stmt* stmt = nullptr;
  ReadFloor floor;
  try {
    // The store's page cache (sqlite_store.cc), so neither reads more pages.
    Check(sqlite3_exec(db, "PRAGMA cache_size = -32768", nullptr, nullptr, nullptr), db, "pragma");
    Check(sqlite3_prepare_v2(db, kSelect, -1, &stmt, nullptr), db, "prepare");
    Check(sqlite3_bind_text(stmt, 1, session_id.data(), static_cast<int>(session_id.size()),
                            SQLITE_TRANSIENT),
          db, "bind");
    uint64_t sink = 0;
    floor.rows = ReadOnce(db, stmt, &sink);  // warms the page cache
    std::vector<int64_t> ns;
    for (int i = 0; i < repeats; ++i) {
      const int64_t t = NowNs();
      ReadOnce(db, stmt, &sink);
      ns.push_back(NowNs() - t);
    }
    volatile uint64_t keep = sink;
    (void)keep;
    floor.median_ms = MedianMs(ns);
  } catch (...) {
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    throw;
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return floor;
}

}  // namespace sessiondb::bench
