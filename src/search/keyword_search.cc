#include "search/keyword_search.h"

#include <algorithm>
#include <optional>

#include "search/query_syntax.h"

namespace sessiondb::search {
namespace {

using sqlite::Statement;

// The filter as SQL over search_docs d, events e, sessions s and code_writes
// c, with parameters ?2 .. ?10 (see BindFilter). Written once, so the
// statement is prepared once; an absent filter is a NULL parameter.
#define FILTER_JOINS                                                                 \
  " LEFT JOIN events e ON d.code_id IS NULL AND e.session_id = d.session_id"         \
  " AND e.seq = d.seq"                                                               \
  " LEFT JOIN sessions s ON d.code_id IS NULL AND s.id = d.session_id"               \
  " LEFT JOIN code_writes c ON c.id = d.code_id "
#define FILTER_WHERE                                                                 \
  " (d.code_id IS NOT NULL OR s.deleted = 0)"                                        \
  " AND (?2 IS NULL OR d.session_id = ?2)"                                           \
  " AND (?3 = 1 OR d.code_id IS NOT NULL)"                                           \
  " AND (?4 = 1 OR d.code_id IS NULL)"                                               \
  " AND (?5 IS NULL OR e.role = ?5)"                                                 \
  " AND (?6 IS NULL OR coalesce(e.ts_ms, c.created_ms) >= ?6)"                       \
  " AND (?7 IS NULL OR coalesce(e.ts_ms, c.created_ms) < ?7)"                        \
  " AND (?8 IS NULL OR d.code_id IS NOT NULL OR s.archived = ?8)"                    \
  " AND (?9 IS NULL OR substr(coalesce(c.project, s.metadata->>'project', ''), 1,"   \
  "      length(?9)) = ?9 OR substr(coalesce(c.file_path, s.metadata->>'cwd', ''),"  \
  "      1, length(?9)) = ?9)"

void BindFilter(Statement& s, const SearchFilter& f) {
  if (f.session_id.empty()) s.BindNull(2); else s.Bind(2, std::string_view(f.session_id));
  s.Bind(3, int64_t{f.events ? 1 : 0});
  s.Bind(4, int64_t{f.code_writes ? 1 : 0});
  if (f.role) s.Bind(5, RoleName(*f.role)); else s.BindNull(5);
  if (f.since_ms > 0) s.Bind(6, f.since_ms); else s.BindNull(6);
  if (f.until_ms > 0) s.Bind(7, f.until_ms); else s.BindNull(7);
  switch (f.archived) {
    case ArchivedFilter::kInclude: s.BindNull(8); break;
    case ArchivedFilter::kExclude: s.Bind(8, int64_t{0}); break;
    case ArchivedFilter::kOnly: s.Bind(8, int64_t{1}); break;
  }
  if (f.project.empty()) s.BindNull(9); else s.Bind(9, std::string_view(f.project));
}

bool FilterIsEmpty(const SearchFilter& f) {
  return f.session_id.empty() && f.events && f.code_writes && !f.role && f.since_ms <= 0 &&
         f.until_ms <= 0 && f.archived == ArchivedFilter::kInclude && f.project.empty();
}

// FTS5 marks matches with these bytes; they are removed from the snippet and
// become highlight ranges. Control characters never appear in indexed words.
constexpr char kOpen = '\x02';
constexpr char kClose = '\x03';

Snippet FromMarked(std::string_view marked) {
  Snippet out;
  size_t begin = 0;
  for (char ch : marked) {
    if (ch == kOpen) {
      begin = out.text.size();
    } else if (ch == kClose) {
      out.highlights.emplace_back(begin, out.text.size());
    } else {
      out.text += ch;
    }
  }
  return out;
}

// Newlines and runs of spaces make a snippet hard to read on one line.
std::string OneLine(std::string_view text) {
  std::string out;
  bool space = false;
  for (char ch : text) {
    if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += ch;
  }
  return out;
}

}  // namespace

Result<KeywordRanking> RankKeyword(sqlite::Database* db, std::string_view match,
                                   const SearchFilter& filter, int64_t max_candidates) {
  KeywordRanking ranking;
  if (match.empty()) return ranking;
  if (!filter.events && !filter.code_writes) return ranking;
  // One kind only: hold the expression to its column, so FTS5 never walks
  // the other kind's matches.
  std::string held;
  if (!filter.events) held = "code : (" + std::string(match) + ")";
  if (!filter.code_writes) held = "content : (" + std::string(match) + ")";
  if (!held.empty()) match = held;
  // The full-text table drives the join (CROSS JOIN fixes the order) and is
  // read newest first; the LIMIT bounds the work for a very common term.
  ASSIGN_OR_RETURN(Statement s,
                   db->Prepare("SELECT d.doc_id, bm25(search_fts) FROM search_fts"
                               " CROSS JOIN search_docs d ON d.doc_id = search_fts.rowid"
                               FILTER_JOINS
                               " WHERE search_fts MATCH ?1 AND" FILTER_WHERE
                               " ORDER BY search_fts.rowid DESC LIMIT ?10"));
  s.Bind(1, match);
  BindFilter(s, filter);
  s.Bind(10, max_candidates + 1);
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ranking.docs.push_back({s.ColumnInt(0), -s.ColumnDouble(1)});
  }
  if (static_cast<int64_t>(ranking.docs.size()) > max_candidates) {
    ranking.docs.pop_back();
    ranking.bounded = true;
  }
  ranking.matches = static_cast<int64_t>(ranking.docs.size());
  std::stable_sort(ranking.docs.begin(), ranking.docs.end(),
                   [](const RankedDoc& a, const RankedDoc& b) { return a.score > b.score; });
  return ranking;
}

Result<FilteredDocs> DocsPassingFilter(sqlite::Database* db, const SearchFilter& filter) {
  FilteredDocs out;
  if (FilterIsEmpty(filter)) {
    out.unfiltered = true;
    return out;
  }
  ASSIGN_OR_RETURN(Statement s, db->Prepare("SELECT d.doc_id FROM search_docs d" FILTER_JOINS
                                            " WHERE ?1 IS NULL AND" FILTER_WHERE
                                            " ORDER BY d.doc_id"));
  s.BindNull(1);
  BindFilter(s, filter);
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.doc_ids.push_back(s.ColumnInt(0));
  }
  return out;
}

Result<Snippet> MatchSnippet(sqlite::Database* db, std::string_view match, int64_t doc_id) {
  ASSIGN_OR_RETURN(Statement s,
                   db->Prepare("SELECT snippet(search_fts, -1, char(2), char(3), '…', 24)"
                               " FROM search_fts WHERE search_fts MATCH ?1 AND rowid = ?2"));
  s.Bind(1, match).Bind(2, doc_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Snippet{};
  return FromMarked(OneLine(s.ColumnText(0)));
}

Result<Snippet> LeadSnippet(sqlite::Database* db, int64_t doc_id,
                            const std::vector<std::string>& terms, size_t max_bytes) {
  ASSIGN_OR_RETURN(Statement s,
                   db->Prepare("SELECT content || code FROM search_content WHERE doc_id = ?1"));
  s.Bind(1, doc_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  Snippet out;
  if (!row) return out;
  std::string text = OneLine(s.ColumnText(0));
  if (text.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + " …";
  }
  // Whole-word, case-insensitive (ASCII) occurrences of the terms.
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    auto is_word = [&](size_t k) {
      auto c = static_cast<unsigned char>(text[k]);
      return c >= 0x80 || std::isalnum(c) || c == '_';
    };
    if (!is_word(i)) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_word(end)) ++end;
    std::vector<std::string> w = SplitWords(std::string_view(text).substr(i, end - i));
    if (w.size() == 1 && std::find(terms.begin(), terms.end(), w[0]) != terms.end()) {
      out.highlights.emplace_back(i, end);
    }
    i = end;
  }
  out.text = std::move(text);
  return out;
}

}  // namespace sessiondb::search
