// sessiondb_xapian_probe: Xapian beside FTS5 on the same documents, to decide
// by numbers whether keyword search at a million messages needs an engine
// that ranks top-k with weight bounds (issue 19, item 4). Not part of the
// product: it reads a store that `sessiondb_search_bench --keep` left, copies
// its message texts into a Xapian database (once; --reuse keeps it), then
// times the same queries both ways, in one run so that both see the same
// machine load:
//   fts5_newest_bm25: what sessiondb ranks today, the newest 20,001 matches
//                     scored by bm25 (no joins, no snippets: the FTS5 floor);
//   fts5_topk_bm25:   BM25 over every match, the best 20 (ORDER BY rank);
//   xapian_topk_bm25: BM25 over every match, the best 20, ties by recency
//                     (docid descending), k1 1.2 and b 0.75 as FTS5's bm25.
// Both indexes are warm (one untimed pass first). Prints one JSON object per
// measurement.
//
// Usage: sessiondb_xapian_probe --dir DIR [--queries N] [--reuse]
//   DIR is the --dir of sessiondb_search_bench (DIR/store holds the store).
#include <sqlite3.h>
#include <xapian.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "sessiondb_xapian_probe: " << what << "\n";
  std::exit(1);
}

double PercentileMs(std::vector<int64_t> ns, int p) {
  std::sort(ns.begin(), ns.end());
  size_t i = std::min(ns.size() - 1, ns.size() * static_cast<size_t>(p) / 100);
  return static_cast<double>(ns[i]) / 1e6;
}

void Emit(const std::string& measure, const std::string& terms, const std::vector<int64_t>& ns,
          size_t hits) {
  std::printf(
      "{\"measure\":\"%s\",\"terms\":\"%s\",\"n\":%zu,\"hits\":%zu,\"p50_ms\":%.3f,"
      "\"p99_ms\":%.3f}\n",
      measure.c_str(), terms.c_str(), ns.size(), hits, PercentileMs(ns, 50), PercentileMs(ns, 99));
  std::fflush(stdout);
}

// The bench's message texts are lower-case words separated by spaces (the
// planted terms included), so splitting on spaces makes FTS5's terms.
void BuildXapian(sqlite3* db, const std::string& path) {
  Xapian::WritableDatabase out(path, Xapian::DB_CREATE_OR_OVERWRITE);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db,
                         "SELECT d.doc_id, e.text FROM search_docs d JOIN events e"
                         " ON e.session_id = d.session_id AND e.seq = d.seq"
                         " WHERE d.code_id IS NULL ORDER BY d.doc_id",
                         -1, &s, nullptr) != SQLITE_OK) {
    Die(sqlite3_errmsg(db));
  }
  int64_t t = NowNs(), n = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const auto doc_id = static_cast<Xapian::docid>(sqlite3_column_int64(s, 0));
    std::string_view text(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)),
                          static_cast<size_t>(sqlite3_column_bytes(s, 1)));
    Xapian::Document doc;
    Xapian::termpos pos = 0;
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find(' ', begin);
      if (end == std::string_view::npos) end = text.size();
      if (end > begin) doc.add_posting(std::string(text.substr(begin, end - begin)), ++pos);
      begin = end + 1;
    }
    out.replace_document(doc_id, doc);
    if (++n % 100'000 == 0) std::cerr << "[xapian-probe]   " << n << " documents\n";
  }
  sqlite3_finalize(s);
  out.commit();
  std::printf("{\"measure\":\"xapian_build\",\"documents\":%lld,\"seconds\":%.1f}\n",
              static_cast<long long>(n), static_cast<double>(NowNs() - t) / 1e9);
}

std::vector<int64_t> TimeFts5(sqlite3* db, const char* sql, const std::vector<std::string>& terms,
                              size_t* hits) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) Die(sqlite3_errmsg(db));
  std::vector<int64_t> ns;
  for (int pass = 0; pass < 2; ++pass) {  // the first pass warms the cache
    for (const std::string& term : terms) {
      const std::string match = "content : (\"" + term + "\")";
      sqlite3_bind_text(s, 1, match.c_str(), -1, SQLITE_TRANSIENT);
      int64_t t = NowNs();
      *hits = 0;
      while (sqlite3_step(s) == SQLITE_ROW) ++*hits;
      if (pass == 1) ns.push_back(NowNs() - t);
      sqlite3_reset(s);
    }
  }
  sqlite3_finalize(s);
  return ns;
}

std::vector<int64_t> TimeXapian(const Xapian::Database& db, const std::vector<std::string>& terms,
                                size_t* hits) {
  std::vector<int64_t> ns;
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& term : terms) {
      int64_t t = NowNs();
      Xapian::Enquire enquire(db);
      enquire.set_query(Xapian::Query(term));
      // FTS5's bm25: k1 1.2, b 0.75, no query-term or length-normalising extras.
      enquire.set_weighting_scheme(Xapian::BM25Weight(1.2, 0, 1, 0.75, 0));
      enquire.set_docid_order(Xapian::Enquire::DESCENDING);  // ties: newest first
      Xapian::MSet mset = enquire.get_mset(0, 20);
      *hits = mset.size();
      for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) (void)*it;
      if (pass == 1) ns.push_back(NowNs() - t);
    }
  }
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir;
  int queries = 50;
  bool reuse = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--queries" && i + 1 < argc) {
      queries = std::stoi(argv[++i]);
    } else if (a == "--reuse") {
      reuse = true;
    } else {
      std::cerr << "Usage: sessiondb_xapian_probe --dir DIR [--queries N] [--reuse]\n";
      return a == "--help" ? 0 : 2;
    }
  }
  if (dir.empty()) Die("--dir is required");
  const fs::path store_db = dir / "store" / "sessiondb.db";
  if (!fs::exists(store_db)) Die("no store at " + store_db.string());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(store_db.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    Die("cannot open " + store_db.string());
  }
  sqlite3_exec(db, "PRAGMA cache_size = -65536", nullptr, nullptr, nullptr);
  const std::string xapian_path = (dir / "xapian").string();
  if (!reuse || !fs::exists(xapian_path)) BuildXapian(db, xapian_path);
  Xapian::Database xdb(xapian_path);

  // The terms of sessiondb_search_bench (search_bench.cc: RareTerm, MidTerm).
  std::vector<std::pair<std::string, std::vector<std::string>>> classes = {
      {"rare", {}}, {"mid", {}}, {"common", {}}};
  for (int q = 0; q < queries; ++q) {
    classes[0].second.push_back("zqrare" + std::to_string(q % 50) + "term");
    classes[1].second.push_back("midterm" + std::to_string(q % 10) + "x");
    classes[2].second.push_back("the");
  }
  for (const auto& [name, terms] : classes) {
    // Each timing before its Emit: the hit count is read after the run.
    size_t hits = 0;
    std::vector<int64_t> ns = TimeFts5(db,
                                       "SELECT rowid, bm25(search_fts) FROM search_fts"
                                       " WHERE search_fts MATCH ?1 ORDER BY rowid DESC LIMIT 20001",
                                       terms, &hits);
    Emit("fts5_newest_bm25", name, ns, hits);
    ns = TimeFts5(db,
                  "SELECT rowid FROM search_fts WHERE search_fts MATCH ?1"
                  " ORDER BY rank LIMIT 20",
                  terms, &hits);
    Emit("fts5_topk_bm25", name, ns, hits);
    ns = TimeXapian(xdb, terms, &hits);
    Emit("xapian_topk_bm25", name, ns, hits);
  }
  sqlite3_close(db);
  return 0;
}
