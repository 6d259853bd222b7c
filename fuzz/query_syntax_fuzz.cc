// Fuzz target: search syntax (src/search/query_syntax), what a person types
// into `sessiondb search`, the web page's box, GET /v1/search?q= and the MCP
// search tool. Its contract is that the query it makes "cannot fail to parse":
// the FTS5 expression the embedded backend renders of it
// (src/store/sqlite/fts5_query) is run against an in-memory FTS5 table with the
// store's tokenizer, and an FTS5 syntax error is a crash. The words it splits
// out, made into an any-of query, must parse too.

#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "fuzz_support.h"
#include "search/query_syntax.h"
#include "store/sqlite/fts5_query.h"

namespace {

// An empty FTS5 table tokenized like the store's search_fts
// (src/store/sqlite/schema.cc); a MATCH on it parses the whole expression.
sqlite3_stmt* MatchStatement() {
  static sqlite3_stmt* stmt = [] {
    sqlite3* db = nullptr;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "CREATE VIRTUAL TABLE t USING fts5(content, code, tokenize = "
                     "\"unicode61 remove_diacritics 2 tokenchars '_'\");"
                     "INSERT INTO t VALUES ('hello world foo_bar', 'int main() {}');",
                     nullptr, nullptr, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT count(*) FROM t WHERE t MATCH ?", -1, &s, nullptr) !=
            SQLITE_OK) {
      std::fprintf(stderr, "query_syntax fuzz: sqlite setup failed: %s\n", sqlite3_errmsg(db));
      std::abort();
    }
    return s;
  }();
  return stmt;
}

// Aborts when FTS5 refuses `match`.
void CheckParses(const std::string& match) {
  sqlite3_stmt* stmt = MatchStatement();
  sqlite3_reset(stmt);
  sqlite3_bind_text(stmt, 1, match.data(), static_cast<int>(match.size()), SQLITE_TRANSIENT);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
  }
  if (rc != SQLITE_DONE) {
    std::fprintf(stderr, "FTS5 refused the expression [%s]: %s\n", match.c_str(),
                 sqlite3_errmsg(sqlite3_db_handle(stmt)));
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  const std::string_view input = fuzz::AsView(data, size);
  search::ParsedQuery parsed = search::ParseUserQuery(input);
  const std::string match = sqlite::Fts5Expression(parsed.query);
  if (parsed.query.empty()) {
    FUZZ_CHECK(!parsed.note.empty());
    FUZZ_CHECK(match.empty());
  } else {
    FUZZ_CHECK(!match.empty());
    CheckParses(match);
  }
  const std::string any = sqlite::Fts5Expression(search::AnyOfWords(search::SplitWords(input)));
  if (!any.empty()) CheckParses(any);
  return 0;
}
