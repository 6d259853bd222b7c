#include "store/sqlite/search_text.h"

namespace sessiondb::sqlite {
namespace {

void SearchTextFunction(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto column = [&](int i) -> std::string_view {
    if (i >= argc || sqlite3_value_type(argv[i]) == SQLITE_NULL) return {};
    const auto* p = reinterpret_cast<const char*>(sqlite3_value_text(argv[i]));
    return p ? std::string_view(p, static_cast<size_t>(sqlite3_value_bytes(argv[i])))
             : std::string_view();
  };
  const std::string out = SearchText(column(0), column(1));
  sqlite3_result_text64(ctx, out.data(), out.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

}  // namespace

int RegisterSearchTextFunction(sqlite3* db) {
  return sqlite3_create_function_v2(db, "sessiondb_search_text", 2,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                                    SearchTextFunction, nullptr, nullptr, nullptr);
}

}  // namespace sessiondb::sqlite
