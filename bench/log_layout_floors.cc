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

// The sessions the rows are spread over, a batch each in turn.
constexpr int kSessions = 100;

void RemoveDatabase(const std::string& path) {
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

const Layout& LayoutNamed(const std::string& name) {
  for (const Layout& layout : kLayouts) {
    if (name == layout.name) return layout;
  }
  throw std::runtime_error("no log layout named " + name);
}

}  // namespace

struct LogLayoutWriter::State {
  std::string path;
  const std::vector<std::string>* texts = nullptr;
  int batch = 0;
  sqlite3* db = nullptr;
  sqlite3_stmt* insert = nullptr;
  sqlite3_stmt* documents = nullptr;
  std::vector<std::string> sessions;
};

LogLayoutWriter::LogLayoutWriter(const std::string& path, const std::string& layout,
                                 const std::vector<std::string>& texts, int batch)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  const Layout& named = LayoutNamed(layout);
  st.path = path;
  st.texts = &texts;
  st.batch = batch;
  RemoveDatabase(path);
  Check(sqlite3_open(path.c_str(), &st.db), st.db, "open");
  Exec(st.db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;");
  Exec(st.db, named.schema);
  Check(sqlite3_prepare_v2(st.db, named.insert, -1, &st.insert, nullptr), st.db, named.insert);
  if (named.documents) {
    Check(sqlite3_prepare_v2(st.db, named.documents, -1, &st.documents, nullptr), st.db,
          named.documents);
  }
  for (int s = 0; s < kSessions; ++s) {
    char id[40];
    std::snprintf(id, sizeof id, "0190a1b2-c3d4-7e5f-8a9b-%012d", s);
    st.sessions.emplace_back(id);
  }
}

LogLayoutWriter::~LogLayoutWriter() {
  State& st = *state_;
  sqlite3_finalize(st.insert);
  sqlite3_finalize(st.documents);
  sqlite3_close(st.db);
  RemoveDatabase(st.path);
}

int LogLayoutWriter::batches() const {
  return static_cast<int>(state_->texts->size()) / state_->batch;
}

int64_t LogLayoutWriter::WriteBatch(int b) {
  State& st = *state_;
  const auto start = std::chrono::steady_clock::now();
  const int batch = st.batch;
  const int s = b % kSessions;
  const int64_t first_seq = int64_t{b / kSessions} * batch + 1;
  const int64_t session_key = int64_t{s + 1} << 32;
  Exec(st.db, "BEGIN IMMEDIATE");
  for (int i = 0; i < batch; ++i) {
    const std::string& text = (*st.texts)[static_cast<size_t>(b * batch + i)];
    char id[48];
    std::snprintf(id, sizeof id, "0190a1b2-%04x-7e5f-8a9b-%012d", b, i);
    sqlite3_bind_text(st.insert, 1, st.sessions[s].data(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st.insert, 2, first_seq + i);
    sqlite3_bind_int64(st.insert, 3, session_key | (first_seq + i));
    sqlite3_bind_text(st.insert, 4, id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st.insert, 5, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    Check(sqlite3_step(st.insert), st.db, "insert");
    sqlite3_reset(st.insert);
  }
  if (st.documents) {
    sqlite3_bind_text(st.documents, 1, st.sessions[s].data(), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st.documents, 2, first_seq);
    sqlite3_bind_int64(st.documents, 3, first_seq + batch - 1);
    sqlite3_bind_int64(st.documents, 4, session_key | first_seq);
    sqlite3_bind_int64(st.documents, 5, session_key | (first_seq + batch - 1));
    Check(sqlite3_step(st.documents), st.db, "documents");
    sqlite3_reset(st.documents);
  }
  Exec(st.db, "COMMIT");
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
      .count();
}

std::vector<LogLayoutFloor> MeasureLogLayouts(const std::string& dir,
                                              const std::vector<std::string>& texts, int batch,
                                              const std::string& only) {
  std::vector<LogLayoutFloor> floors;
  for (const Layout& layout : kLayouts) {
    if (!only.empty() && only != layout.name) continue;
    LogLayoutWriter writer(dir + "/log_layout.db", layout.name, texts, batch);
    int64_t ns = 0;
    for (int b = 0; b < writer.batches(); ++b) ns += writer.WriteBatch(b);
    floors.push_back({layout.name, static_cast<double>(writer.batches()) * batch * 1e9 /
                                       static_cast<double>(ns)});
  }
  return floors;
}

}  // namespace sessiondb::bench
