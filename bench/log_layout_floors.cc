#include "log_layout_floors.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace sessiondb::bench {
namespace {

struct Layout {
  const char* name;
  const char* schema;
  const char* insert;     // ?1 session id, ?2 seq, ?3 key, ?4 id, ?5 text
  const char* documents;  // ?1 session id, ?2 first seq, ?3 last seq, ?4 first key, ?5 last key
};

// search_docs as the store has it: doc ids never reused, one per event.
#define SEARCH_DOCS                                                                          \
  "CREATE TABLE search_docs (doc_id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT "     \
  "NOT NULL, seq INTEGER NOT NULL, code_id INTEGER);"                                        \
  "CREATE UNIQUE INDEX search_docs_by_event ON search_docs (session_id, seq) WHERE code_id " \
  "IS NULL;"

#define TEXT_KEY_EVENTS                                                                         \
  "CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, "     \
  "ts_ms INTEGER NOT NULL, type TEXT NOT NULL, role TEXT, text TEXT NOT NULL DEFAULT '', body " \
  "TEXT, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;"                                         \
  "CREATE UNIQUE INDEX events_by_id ON events (id);"                                            \
  "CREATE INDEX events_not_messages ON events (session_id, seq) WHERE type <> 'message';"

#define TEXT_KEY_INSERT                                                                          \
  "INSERT INTO events (session_id, seq, id, ts_ms, type, role, text, body) VALUES (?1, ?2, ?4, " \
  "1, 'message', 'user', ?5, NULL)"

#define TEXT_KEY_DOCUMENTS                                                              \
  "INSERT INTO search_docs (session_id, seq) SELECT session_id, seq FROM events WHERE " \
  "session_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq"

const Layout kLayouts[] = {
    {"rows_only",
     "CREATE TABLE events (key INTEGER PRIMARY KEY, id TEXT, ts_ms INTEGER, type TEXT, role "
     "TEXT, text TEXT, body TEXT);",
     "INSERT INTO events VALUES (?3, ?4, 1, 'message', 'user', ?5, NULL)", nullptr},
    {"integer_key_batch_docs",
     "CREATE TABLE events (key INTEGER PRIMARY KEY, id TEXT NOT NULL, ts_ms INTEGER NOT NULL, "
     "type TEXT NOT NULL, role TEXT, text TEXT NOT NULL DEFAULT '', body TEXT);"
     "CREATE UNIQUE INDEX events_by_id ON events (id);"
     "CREATE INDEX events_not_messages ON events (key) WHERE type <> 'message';" SEARCH_DOCS,
     "INSERT INTO events VALUES (?3, ?4, 1, 'message', 'user', ?5, NULL)",
     "INSERT INTO search_docs (session_id, seq) SELECT ?1, key & 4294967295 FROM events "
     "WHERE key BETWEEN ?4 AND ?5 ORDER BY key"},
    {"text_key_batch_docs", TEXT_KEY_EVENTS SEARCH_DOCS, TEXT_KEY_INSERT, TEXT_KEY_DOCUMENTS},
    {"text_key_trigger",
     TEXT_KEY_EVENTS SEARCH_DOCS
     "CREATE TRIGGER search_event_added AFTER INSERT ON events BEGIN INSERT INTO search_docs "
     "(session_id, seq) VALUES (NEW.session_id, NEW.seq); END;",
     TEXT_KEY_INSERT, nullptr},
};

void Check(int rc, sqlite3* db, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw std::runtime_error(std::string(what) + ": " + sqlite3_errmsg(db));
  }
}

void Exec(sqlite3* db, const char* sql) {
  Check(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), db, sql);
}

double Measure(const std::string& path, const Layout& layout, const std::vector<std::string>& texts,
               int batch) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  sqlite3* db = nullptr;
  Check(sqlite3_open(path.c_str(), &db), db, "open");
  Exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;");
  Exec(db, layout.schema);
  sqlite3_stmt* insert = nullptr;
  sqlite3_stmt* documents = nullptr;
  Check(sqlite3_prepare_v2(db, layout.insert, -1, &insert, nullptr), db, layout.insert);
  if (layout.documents) {
    Check(sqlite3_prepare_v2(db, layout.documents, -1, &documents, nullptr), db, layout.documents);
  }
  constexpr int kSessions = 100;
  std::vector<std::string> sessions;
  for (int s = 0; s < kSessions; ++s) {
    char id[40];
    std::snprintf(id, sizeof id, "0190a1b2-c3d4-7e5f-8a9b-%012d", s);
    sessions.emplace_back(id);
  }
  const auto start = std::chrono::steady_clock::now();
  const int batches = static_cast<int>(texts.size()) / batch;
  for (int b = 0; b < batches; ++b) {
    const int s = b % kSessions;
    const int64_t first_seq = int64_t{b / kSessions} * batch + 1;
    const int64_t session_key = int64_t{s + 1} << 32;
    Exec(db, "BEGIN IMMEDIATE");
    for (int i = 0; i < batch; ++i) {
      const std::string& text = texts[static_cast<size_t>(b * batch + i)];
      char id[48];
      std::snprintf(id, sizeof id, "0190a1b2-%04x-7e5f-8a9b-%012d", b, i);
      sqlite3_bind_text(insert, 1, sessions[s].data(), -1, SQLITE_STATIC);
      sqlite3_bind_int64(insert, 2, first_seq + i);
      sqlite3_bind_int64(insert, 3, session_key | (first_seq + i));
      sqlite3_bind_text(insert, 4, id, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert, 5, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
      Check(sqlite3_step(insert), db, "insert");
      sqlite3_reset(insert);
    }
    if (documents) {
      sqlite3_bind_text(documents, 1, sessions[s].data(), -1, SQLITE_STATIC);
      sqlite3_bind_int64(documents, 2, first_seq);
      sqlite3_bind_int64(documents, 3, first_seq + batch - 1);
      sqlite3_bind_int64(documents, 4, session_key | first_seq);
      sqlite3_bind_int64(documents, 5, session_key | (first_seq + batch - 1));
      Check(sqlite3_step(documents), db, "documents");
      sqlite3_reset(documents);
    }
    Exec(db, "COMMIT");
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sqlite3_finalize(insert);
  sqlite3_finalize(documents);
  sqlite3_close(db);
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return static_cast<double>(batches) * batch / seconds;
}

}  // namespace

std::vector<LogLayoutFloor> MeasureLogLayouts(const std::string& dir,
                                              const std::vector<std::string>& texts, int batch,
                                              const std::string& only) {
  std::vector<LogLayoutFloor> floors;
  for (const Layout& layout : kLayouts) {
    if (!only.empty() && only != layout.name) continue;
    floors.push_back({layout.name, Measure(dir + "/log_layout.db", layout, texts, batch)});
  }
  return floors;
}

}  // namespace sessiondb::bench
