#include "store/sqlite/cached_bm25.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace sessiondb::sqlite {
namespace {

// bm25()'s constants (sqlite/ext/fts5/fts5_aux.c); the scores must be its.
constexpr double kK1 = 1.2;
constexpr double kB = 0.75;
// Distinct queries whose counts are kept, and the bytes of their
// expressions; past either the cache starts over, so a stream of distinct
// (or huge) queries cannot grow it without bound.
constexpr size_t kMaxKeys = 4096;
constexpr size_t kMaxKeyBytes = size_t{4} << 20;

// Docsize ids past this many are not kept (32 MiB of lengths); their
// lengths are read from FTS5 on every row, as bm25() does.
constexpr int64_t kMaxKeptLengths = int64_t{16} << 20;

// Once a query's rows not yet kept come this close together (a word in most
// documents), their lengths are read a block of ids at a time, below the
// row, as the ranking walks newest first: a range of the docsize table costs
// about 0.05 µs a row against 1–1.5 µs for xColumnSize's lookup of one, so
// the first query of a word in every message reads the 20,000 lengths it
// ranks in about 1 ms instead of 20–30. Sparser rows are looked up one by one.
constexpr int64_t kCloseMisses = 4;
constexpr int64_t kLengthBlock = 1024;

// What the ranking keeps between queries on one connection, about the index
// with `rows` rows, `tokens` tokens and no docsize id above `last_id`:
//  - the documents holding each phrase of each query seen;
//  - each document's length in tokens, by id (0: not read yet), read from
//    FTS5's docsize table on a row's first match. Ids are never reused
//    (search_docs is AUTOINCREMENT) and a document's text changes only by a
//    delete and insert under its id, so the lengths stay right while the
//    index only grows; anything else empties them (Revalidate).
struct IndexStatistics {
  sqlite3* db = nullptr;
  int64_t rows = -1;
  int64_t tokens = -1;
  int64_t last_id = 0;
  std::unordered_map<std::string, std::vector<int64_t>> counts_by_key;
  size_t key_bytes = 0;
  std::vector<uint16_t> lengths;
};

// What one query weighs every row with, kept as the query's aux data.
struct QueryWeights {
  std::vector<double> idf;
  std::vector<double> frequency;  // scratch, per row
  double average_length = 0;
  int64_t last_miss = 0;  // the last row whose length was not kept
};

int CountRow(const Fts5ExtensionApi*, Fts5Context*, void* user) {
  ++*static_cast<int64_t*>(user);
  return SQLITE_OK;
}

int CountDocuments(const Fts5ExtensionApi* api, Fts5Context* fts, int phrases,
                   std::vector<int64_t>* counts) {
  counts->assign(static_cast<size_t>(phrases), 0);
  for (int i = 0; i < phrases; ++i) {
    const int rc = api->xQueryPhrase(fts, i, &(*counts)[static_cast<size_t>(i)], CountRow);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

// The sum of the FTS5 varints (SQLite's form) in `p`: a docsize row's
// token counts, one per column.
int64_t SumOfVarints(const unsigned char* p, int n) {
  int64_t sum = 0;
  int i = 0;
  while (i < n) {
    uint64_t v = 0;
    for (int k = 0; i < n; ++k) {
      const unsigned char b = p[i++];
      if (k == 8) {
        v = (v << 8) | b;
        break;
      }
      v = (v << 7) | (b & 0x7f);
      if ((b & 0x80) == 0) break;
    }
    sum += static_cast<int64_t>(v);
  }
  return sum;
}

// Brings `stats` to the index that now has `rows` rows and `tokens` tokens.
// The phrase counts go at any change; the lengths stay when the index only
// grew: the rows above `last_id` are the new ones and hold every new token.
int Revalidate(IndexStatistics* stats, int64_t rows, int64_t tokens) {
  if (rows == stats->rows && tokens == stats->tokens) return SQLITE_OK;
  // Before the first query nothing is kept: only the last id is needed (a
  // scan of the new rows would read them all).
  const bool first = stats->rows < 0;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(stats->db,
                              first ? "SELECT max(id), NULL FROM search_fts_docsize"
                                    : "SELECT id, sz FROM search_fts_docsize WHERE id > ?1",
                              -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return rc;
  if (!first) sqlite3_bind_int64(stmt, 1, stats->last_id);
  int64_t added = 0;
  int64_t added_tokens = 0;
  int64_t last_id = stats->last_id;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    ++added;
    added_tokens += SumOfVarints(static_cast<const unsigned char*>(sqlite3_column_blob(stmt, 1)),
                                 sqlite3_column_bytes(stmt, 1));
    last_id = std::max<int64_t>(last_id, sqlite3_column_int64(stmt, 0));
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return rc;
  const bool only_grew =
      !first && added == rows - stats->rows && added_tokens == tokens - stats->tokens;
  if (!only_grew) stats->lengths.clear();
  stats->counts_by_key.clear();
  stats->key_bytes = 0;
  stats->rows = rows;
  stats->tokens = tokens;
  stats->last_id = last_id;
  return SQLITE_OK;
}

// The weights of the query `fts` runs, from the cache when the index is the
// one the counts were taken on.
int MakeWeights(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_value* key_value,
                QueryWeights* out) {
  auto* cache = static_cast<IndexStatistics*>(api->xUserData(fts));
  const int phrases = api->xPhraseCount(fts);
  sqlite3_int64 rows = 0;
  sqlite3_int64 tokens = 0;
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc != SQLITE_OK) return rc;
  rc = Revalidate(cache, rows, tokens);
  if (rc != SQLITE_OK) return rc;
  if (cache->counts_by_key.size() >= kMaxKeys || cache->key_bytes >= kMaxKeyBytes) {
    cache->counts_by_key.clear();
    cache->key_bytes = 0;
  }
  std::vector<int64_t> uncached;
  const std::vector<int64_t>* counts = &uncached;
  if (key_value != nullptr && sqlite3_value_type(key_value) == SQLITE_TEXT) {
    std::string key(reinterpret_cast<const char*>(sqlite3_value_text(key_value)),
                    static_cast<size_t>(sqlite3_value_bytes(key_value)));
    const size_t key_size = key.size();
    auto [at, inserted] = cache->counts_by_key.try_emplace(std::move(key));
    if (inserted) cache->key_bytes += key_size;
    std::vector<int64_t>& kept = at->second;
    if (kept.size() != static_cast<size_t>(phrases)) {
      rc = CountDocuments(api, fts, phrases, &kept);
      if (rc != SQLITE_OK) {
        kept.clear();
        return rc;
      }
    }
    counts = &kept;
  } else {
    rc = CountDocuments(api, fts, phrases, &uncached);
    if (rc != SQLITE_OK) return rc;
  }
  out->average_length = static_cast<double>(tokens) / static_cast<double>(rows);
  out->idf.resize(static_cast<size_t>(phrases));
  out->frequency.resize(static_cast<size_t>(phrases));
  for (size_t i = 0; i < out->idf.size(); ++i) {
    const double hits = static_cast<double>((*counts)[i]);
    const double idf = std::log((static_cast<double>(rows) - hits + 0.5) / (hits + 0.5));
    out->idf[i] = idf <= 0.0 ? 1e-6 : idf;
  }
  return SQLITE_OK;
}

void DeleteWeights(void* p) { delete static_cast<QueryWeights*>(p); }
void DeleteStatistics(void* p) { delete static_cast<IndexStatistics*>(p); }

// Keeps `length` as document `id`'s when it fits the kept lengths.
void KeepLength(IndexStatistics* stats, int64_t id, int64_t length) {
  if (id <= 0 || id >= kMaxKeptLengths || length <= 0 || length >= 0xffff) return;
  if (static_cast<size_t>(id) >= stats->lengths.size()) {
    stats->lengths.resize(
        std::max<size_t>(static_cast<size_t>(id) + 1, stats->lengths.size() * 3 / 2));
  }
  stats->lengths[id] = static_cast<uint16_t>(length);
}

// Keeps the length of every document with an id in [first, last], read from
// FTS5's docsize table in one range (on the query's own read transaction, so
// they are the lengths xColumnSize would answer). The statement is finalized
// before returning: one kept past the query would make the connection's
// sqlite3_close fail (SQLITE_BUSY) and leave the database open.
int KeepLengthBlock(IndexStatistics* stats, int64_t first, int64_t last) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(stats->db,
                              "SELECT id, sz FROM search_fts_docsize WHERE id BETWEEN ?1 AND ?2",
                              -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return rc;
  sqlite3_bind_int64(stmt, 1, first);
  sqlite3_bind_int64(stmt, 2, last);
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    KeepLength(stats, sqlite3_column_int64(stmt, 0),
               SumOfVarints(static_cast<const unsigned char*>(sqlite3_column_blob(stmt, 1)),
                            sqlite3_column_bytes(stmt, 1)));
  }
  sqlite3_finalize(stmt);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

// The row's length in tokens, every column: xColumnSize's answer, which
// reads FTS5's docsize table, or what it answered on an earlier match.
int RowLength(const Fts5ExtensionApi* api, Fts5Context* fts, QueryWeights* weights, int* length) {
  auto* stats = static_cast<IndexStatistics*>(api->xUserData(fts));
  const int64_t id = api->xRowid(fts);
  const auto kept = [stats, id]() -> int {
    if (id <= 0 || static_cast<size_t>(id) >= stats->lengths.size()) return 0;
    return stats->lengths[static_cast<size_t>(id)];
  };
  if (const int known = kept(); known != 0) {
    *length = known;
    return SQLITE_OK;
  }
  const bool close = weights->last_miss > id && weights->last_miss - id <= kCloseMisses;
  weights->last_miss = id;
  if (close && id < kMaxKeptLengths) {
    const int rc = KeepLengthBlock(stats, std::max<int64_t>(1, id - kLengthBlock + 1), id);
    if (rc != SQLITE_OK) return rc;
    if (const int known = kept(); known != 0) {
      *length = known;
      return SQLITE_OK;
    }
  }
  const int rc = api->xColumnSize(fts, -1, length);
  if (rc == SQLITE_OK) KeepLength(stats, id, *length);
  return rc;
}

void CachedBm25(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int argc,
                sqlite3_value** argv) {
  auto* weights = static_cast<QueryWeights*>(api->xGetAuxdata(fts, 0));
  if (weights == nullptr) {
    auto made = std::make_unique<QueryWeights>();
    int rc = MakeWeights(api, fts, argc > 0 ? argv[0] : nullptr, made.get());
    if (rc == SQLITE_OK) rc = api->xSetAuxdata(fts, made.get(), DeleteWeights);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    weights = made.release();
  }
  // As bm25(): each phrase's frequency in the row, then one length for the
  // whole row (every column). The instances are counted phrase by phrase
  // (the same instances xInst lists, without building its list of all of
  // them in order: a fifth of the function's time on a common word).
  int length = 0;
  for (size_t i = 0; i < weights->frequency.size(); ++i) {
    Fts5PhraseIter it;
    int column = 0;
    int offset = 0;
    int instances = 0;
    for (api->xPhraseFirst(fts, static_cast<int>(i), &it, &column, &offset); column >= 0;
         api->xPhraseNext(fts, &it, &column, &offset)) {
      ++instances;
    }
    weights->frequency[i] = instances;
  }
  int rc = RowLength(api, fts, weights, &length);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  const double normal = kK1 * (1 - kB + kB * static_cast<double>(length) / weights->average_length);
  double score = 0;
  for (size_t i = 0; i < weights->idf.size(); ++i) {
    const double f = weights->frequency[i];
    score += weights->idf[i] * ((f * (kK1 + 1.0)) / (f + normal));
  }
  sqlite3_result_double(ctx, -score);  // as bm25(): lower is better
}

fts5_api* Fts5Api(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, nullptr) != SQLITE_OK) return nullptr;
  sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
  (void)sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  return api;
}

}  // namespace

int RegisterCachedBm25Function(sqlite3* db) {
  fts5_api* api = Fts5Api(db);
  if (api == nullptr) return SQLITE_ERROR;
  auto stats = std::make_unique<IndexStatistics>();
  stats->db = db;
  const int rc =
      api->xCreateFunction(api, "sessiondb_bm25", stats.get(), CachedBm25, DeleteStatistics);
  // SQLite owns it now: DeleteStatistics frees it with the function.
  if (rc == SQLITE_OK) (void)stats.release();
  return rc;
}

}  // namespace sessiondb::sqlite
