#include "read_floor.h"

#include <sqlite3.h>

#include <stdexcept>
#include <string_view>
#include <vector>

#include "sessiondb/types.h"
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

std::string_view Text(sqlite3_stmt* stmt, int col) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(stmt, col))};
}

// One read of every row into `*out` (reserved for `rows`), each row built
// into a Message with no more than its type requires.
void BuildOnce(sqlite3* db, sqlite3_stmt* stmt, int64_t rows, std::vector<Message>* out) {
  out->reserve(static_cast<size_t>(rows));
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (sqlite3_column_type(stmt, 5) != SQLITE_NULL) {
      throw std::runtime_error("read floor: a message row has a JSON body; W1 writes none");
    }
    Message& m = out->emplace_back();
    m.seq = sqlite3_column_int64(stmt, 0);
    m.id.assign(Text(stmt, 1));
    m.ts_ms = sqlite3_column_int64(stmt, 2);
    Result<Role> role = ParseRole(Text(stmt, 3));
    if (!role) throw std::runtime_error("read floor: " + role.error().message());
    m.role = *role;
    m.parts.emplace_back().text.assign(Text(stmt, 4));
    m.session_id.assign(Text(stmt, 6));
  }
  Check(rc, db, "step");
  Check(sqlite3_reset(stmt), db, "reset");
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
    std::vector<int64_t> ns, cpu;
    for (int i = 0; i < repeats; ++i) {
      const int64_t t = NowNs();
      const int64_t c = ThreadCpuNs();
      ReadOnce(db, stmt, &sink);
      cpu.push_back(ThreadCpuNs() - c);
      ns.push_back(NowNs() - t);
    }
    volatile uint64_t keep = sink;
    (void)keep;
    floor.median_ms = MedianMs(ns);
    floor.cpu_median_ms = MedianMs(cpu);
    ns.clear();
    cpu.clear();
    for (int i = 0; i < repeats; ++i) {
      std::vector<Message> messages;
      const int64_t t = NowNs();
      const int64_t c = ThreadCpuNs();
      BuildOnce(db, stmt, floor.rows, &messages);
      cpu.push_back(ThreadCpuNs() - c);
      ns.push_back(NowNs() - t);
      if (static_cast<int64_t>(messages.size()) != floor.rows) {
        throw std::runtime_error("read floor: the build read a different row count");
      }
    }
    floor.build_median_ms = MedianMs(ns);
    floor.build_cpu_median_ms = MedianMs(cpu);
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
