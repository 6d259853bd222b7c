// SqliteIndexBackend's full text: BM25 ranking over search_fts with the
// search filter, the documents passing a filter, FTS5 snippets, and the
// index rebuilt from the log.
#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/text_rules.h"
#include "store/sqlite/fts5_query.h"
#include "store/sqlite/sqlite_index.h"

namespace sessiondb::sqlite {
namespace {

// The filter as SQL over search_docs d, events e, sessions s and code_writes
// c, with parameters ?2 .. ?9 (see BindFilter). Written once, so the
// statement is prepared once; an absent filter is a NULL parameter. The
// events join is the costly one (a lookup into the largest table per
// document), so it has its own macros, left out when the filter names no
// role and no time.
#define SESSION_JOINS                                                  \
  " LEFT JOIN sessions s ON d.code_id IS NULL AND s.id = d.session_id" \
  " LEFT JOIN code_writes c ON c.id = d.code_id "
#define EVENT_JOIN \
  " LEFT JOIN events e ON d.code_id IS NULL AND e.session_id = d.session_id AND e.seq = d.seq"
#define SESSION_WHERE                                                                  \
  " (CASE WHEN d.code_id IS NULL THEN s.deleted = 0 ELSE NOT EXISTS (SELECT 1"         \
  "  FROM sessions t WHERE t.id = c.session_id AND t.trashed_ms IS NOT NULL) END)"     \
  " AND (?2 IS NULL OR d.session_id = ?2)"                                             \
  " AND (?3 = 1 OR d.code_id IS NOT NULL)"                                             \
  " AND (?4 = 1 OR d.code_id IS NULL)"                                                 \
  " AND (?8 IS NULL OR d.code_id IS NOT NULL OR s.archived = ?8)"                      \
  " AND (?9 IS NULL OR substr(coalesce(c.project, s.metadata->>'project', '') || '/'," \
  "      1, length(?9)) = ?9 OR substr(coalesce(c.file_path, s.metadata->>'cwd', '')"  \
  "      || '/', 1, length(?9)) = ?9)"
#define EVENT_WHERE                                            \
  " AND (?5 IS NULL OR e.role = ?5)"                           \
  " AND (?6 IS NULL OR coalesce(e.ts_ms, c.created_ms) >= ?6)" \
  " AND (?7 IS NULL OR coalesce(e.ts_ms, c.created_ms) < ?7)"
#define FILTER_JOINS EVENT_JOIN SESSION_JOINS
#define FILTER_WHERE SESSION_WHERE EVENT_WHERE

// True when `filter` reads a column of the document's event (role, time).
bool FilterReadsEvents(const SearchFilter& f) {
  return f.role.has_value() || f.since_ms > 0 || f.until_ms > 0;
}

void BindFilter(Statement& s, const SearchFilter& f) {
  if (f.session_id.empty())
    s.BindNull(2);
  else
    s.Bind(2, std::string_view(f.session_id));
  s.Bind(3, int64_t{f.events ? 1 : 0});
  s.Bind(4, int64_t{f.code_writes ? 1 : 0});
  if (f.role)
    s.Bind(5, RoleName(*f.role));
  else
    s.BindNull(5);
  if (f.since_ms > 0)
    s.Bind(6, f.since_ms);
  else
    s.BindNull(6);
  if (f.until_ms > 0)
    s.Bind(7, f.until_ms);
  else
    s.BindNull(7);
  switch (f.archived) {
    case ArchiveFilter::kAll:
      s.BindNull(8);
      break;
    case ArchiveFilter::kActive:
      s.Bind(8, int64_t{0});
      break;
    case ArchiveFilter::kArchived:
      s.Bind(8, int64_t{1});
      break;
  }
  if (f.project.empty())
    s.BindNull(9);
  else
    s.Bind(9, std::string_view(f.project));
}

// FTS5 marks matches with these bytes; they are removed from the snippet and
// become highlight ranges. Control characters never appear in indexed words.
constexpr char kOpen = '\x02';
constexpr char kClose = '\x03';

// A page's snippets are read in one walk of the query's matches, newest
// first, from its newest hit to its oldest: FTS5 answers `rowid = X` by
// looking the words up in every segment again (~170 µs a snippet for a word
// in 1 % of a million documents, 20 snippets a page), while the walk costs
// about 0.1 µs a match passed. A walk that passes this many matches without
// reaching the next hit stops there and looks that hit up afresh, so a page
// spread thin over a very common word's matches costs about what a lookup
// per hit did.
constexpr int64_t kMatchesWalkedBetweenSnippets = 1000;

store::Snippet FromMarked(std::string_view marked) {
  store::Snippet out;
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

}  // namespace

Result<bool> SqliteIndexBackend::EveryMatchPassesFilter(const SearchFilter& filter) {
  if (!filter.session_id.empty() || FilterReadsEvents(filter) ||
      filter.archived != ArchiveFilter::kAll || !filter.project.empty()) {
    return false;
  }
  // The kinds are held by the MATCH's column (RankKeyword); what is left is
  // that events of a deleted session are hidden. Deleted sessions are rare
  // (kept only while forks read them), so one look at the sessions table
  // usually spares a join per match.
  // Code writes of a trashed session are hidden too (trashing sets deleted).
  ASSIGN_OR_RETURN(std::optional<int64_t> version, db_->QueryInt("PRAGMA data_version"));
  const int64_t data_version = version.value_or(0);
  const int64_t own_changes = db_->TotalChanges();
  if (data_version != deleted_sessions_.data_version ||
      own_changes != deleted_sessions_.own_changes) {
    ASSIGN_OR_RETURN(std::optional<int64_t> deleted,
                     db_->QueryInt("SELECT EXISTS (SELECT 1 FROM sessions WHERE deleted <> 0)"));
    deleted_sessions_ = {data_version, own_changes, deleted.value_or(0) != 0};
  }
  return !deleted_sessions_.any;
}

Result<store::KeywordRanking> SqliteIndexBackend::RankKeyword(const store::TextQuery& query,
                                                              const SearchFilter& filter,
                                                              int64_t max_candidates) {
  store::KeywordRanking ranking;
  std::string match = Fts5Expression(query);
  if (match.empty()) return ranking;
  if (!filter.events && !filter.code_writes) return ranking;
  // One kind only: hold the expression to its column, so FTS5 never walks
  // the other kind's matches. An event's document has an empty code column
  // and a code write's an empty content column, so this is the kind filter.
  if (!filter.events) match = "code : (" + match + ")";
  if (!filter.code_writes) match = "content : (" + match + ")";
  // The full-text table drives (CROSS JOIN fixes the order) and is read
  // newest first; the LIMIT bounds the work for a very common term. When
  // the filter cannot reject a match, FTS5 answers alone: no join per
  // match, only per hit shown (LoadHitDetails). Otherwise only the joins
  // the filter reads.
  ASSIGN_OR_RETURN(const bool fts_alone, EveryMatchPassesFilter(filter));
  const char* sql = fts_alone ? "SELECT rowid, sessiondb_bm25(search_fts, ?1) FROM search_fts"
                                " WHERE search_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?10"
                    : FilterReadsEvents(filter)
                        ? "SELECT d.doc_id, sessiondb_bm25(search_fts, ?1) FROM search_fts"
                          " CROSS JOIN search_docs d ON d.doc_id = search_fts.rowid" FILTER_JOINS
                          " WHERE search_fts MATCH ?1 AND" FILTER_WHERE
                          " ORDER BY search_fts.rowid DESC LIMIT ?10"
                        : "SELECT d.doc_id, sessiondb_bm25(search_fts, ?1) FROM search_fts"
                          " CROSS JOIN search_docs d ON d.doc_id = search_fts.rowid" SESSION_JOINS
                          " WHERE search_fts MATCH ?1 AND" SESSION_WHERE
                          " ORDER BY search_fts.rowid DESC LIMIT ?10";
  ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql));
  s.Bind(1, std::string_view(match));
  BindFilter(s, filter);
  s.Bind(10, max_candidates + 1);
  // Room for the bound at once (pages are touched only as rows come): grown
  // row by row, a common word's 20,000 candidates were copied five times.
  ranking.docs.reserve(static_cast<size_t>(std::clamp<int64_t>(max_candidates + 1, 0, 1 << 16)));
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ranking.docs.push_back({s.ColumnInt(0), -s.ColumnDouble(1)});
  }
  store::FinishRanking(max_candidates, &ranking);
  return ranking;
}

Result<bool> SqliteIndexBackend::HoldsWord(const std::string& word) {
  ASSIGN_OR_RETURN(const bool fts_alone, EveryMatchPassesFilter(SearchFilter{}));
  if (!fts_alone) return IndexBackend::HoldsWord(word);  // a deleted session's words do not count
  store::TextQuery one;
  one.all_of.push_back({store::TextPhrase{.words = {word}}});
  const std::string match = Fts5Expression(one);
  if (match.empty()) return false;
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT 1 FROM search_fts WHERE search_fts MATCH ?1 LIMIT 1"));
  s.Bind(1, std::string_view(match));
  return s.Step();
}

Result<store::FilteredDocs> SqliteIndexBackend::DocsPassingFilter(const SearchFilter& filter) {
  store::FilteredDocs out;
  if (store::FilterIsEmpty(filter)) {
    out.unfiltered = true;
    return out;
  }
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT d.doc_id FROM search_docs d" FILTER_JOINS
                                " WHERE ?1 IS NULL AND" FILTER_WHERE " ORDER BY d.doc_id"));
  s.BindNull(1);
  BindFilter(s, filter);
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.doc_ids.push_back(s.ColumnInt(0));
  }
  return out;
}

Result<std::vector<int64_t>> SqliteIndexBackend::CandidatesPassingFilter(
    const SearchFilter& filter, std::span<const int64_t> candidates) {
  std::vector<int64_t> out;
  if (candidates.empty()) return out;
  // The candidates as a JSON array (?10), which drives the statement: each
  // is looked up by its key, then the filter is checked on it alone.
  const std::string ids = nlohmann::json(candidates).dump();
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT d.doc_id FROM json_each(?10) j"
                                " CROSS JOIN search_docs d ON d.doc_id = j.value" FILTER_JOINS
                                " WHERE ?1 IS NULL AND" FILTER_WHERE " ORDER BY d.doc_id"));
  s.BindNull(1);
  BindFilter(s, filter);
  s.Bind(10, std::string_view(ids));
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(s.ColumnInt(0));
  }
  out.erase(std::unique(out.begin(), out.end()), out.end());  // a candidate named twice
  return out;
}

Result<store::Snippet> SqliteIndexBackend::MatchSnippet(const store::TextQuery& query,
                                                        int64_t doc_id) {
  const std::string match = Fts5Expression(query);
  if (match.empty()) return store::Snippet{};
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT snippet(search_fts, -1, char(2), char(3), '…', 24)"
                                " FROM search_fts WHERE search_fts MATCH ?1 AND rowid = ?2"));
  s.Bind(1, std::string_view(match)).Bind(2, doc_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return store::Snippet{};
  // Newlines and runs of spaces make a snippet hard to read on one line.
  return FromMarked(CollapseWhitespace(s.ColumnText(0)));
}

Result<std::vector<store::IndexBackend::PageDocument>> SqliteIndexBackend::LoadPage(
    const store::TextQuery& query, std::span<const PageRequest> docs) {
  std::vector<PageDocument> out(docs.size());
  std::vector<int64_t> keyword_hits;
  for (size_t i = 0; i < docs.size(); ++i) {
    PageDocument& d = out[i];
    ASSIGN_OR_RETURN(d.present, LoadHitDetails(docs[i].doc_id, &d.hit));
    if (!d.present) continue;
    if (docs[i].keyword) {
      keyword_hits.push_back(docs[i].doc_id);
    } else {
      ASSIGN_OR_RETURN(d.text, ReadDocumentText(docs[i].doc_id));
    }
  }
  ASSIGN_OR_RETURN(auto snippets, MatchSnippets(query, std::move(keyword_hits)));
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!out[i].present || !docs[i].keyword) continue;
    // Copied: a document may be asked for twice.
    if (auto it = snippets.find(docs[i].doc_id); it != snippets.end()) out[i].snippet = it->second;
  }
  return out;
}

Result<std::unordered_map<int64_t, store::Snippet>> SqliteIndexBackend::MatchSnippets(
    const store::TextQuery& query, std::vector<int64_t> doc_ids) {
  std::unordered_map<int64_t, store::Snippet> out;
  const std::string match = Fts5Expression(query);
  if (match.empty() || doc_ids.empty()) return out;
  // Newest first, as the walk goes.
  std::sort(doc_ids.begin(), doc_ids.end(), std::greater<>());
  doc_ids.erase(std::unique(doc_ids.begin(), doc_ids.end()), doc_ids.end());
  const std::string wanted = nlohmann::json(doc_ids).dump();
  size_t next = 0;  // doc_ids[next]: the newest document not reached yet
  while (next < doc_ids.size()) {
    // From the next document down to the oldest: snippet() is called for
    // the wanted rows alone, the others only pass by.
    ASSIGN_OR_RETURN(
        Statement s,
        db_->Prepare("SELECT rowid, CASE WHEN rowid IN (SELECT value FROM json_each(?4))"
                     " THEN snippet(search_fts, -1, char(2), char(3), '…', 24) END"
                     " FROM search_fts WHERE search_fts MATCH ?1 AND rowid <= ?2 AND rowid >= ?3"
                     " ORDER BY rowid DESC"));
    s.Bind(1, std::string_view(match))
        .Bind(2, doc_ids[next])
        .Bind(3, doc_ids.back())
        .Bind(4, std::string_view(wanted));
    int64_t passed = 0;  // matches walked since the last wanted one
    bool walked_to_the_end = true;
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      const int64_t id = s.ColumnInt(0);
      // A wanted document newer than this row does not match (any more).
      while (next < doc_ids.size() && doc_ids[next] > id) ++next;
      if (next < doc_ids.size() && doc_ids[next] == id) {
        out[id] = FromMarked(CollapseWhitespace(s.ColumnText(1)));
        ++next;
        passed = 0;
        if (next == doc_ids.size()) break;
      } else if (++passed > kMatchesWalkedBetweenSnippets) {
        walked_to_the_end = false;
        break;
      }
    }
    if (walked_to_the_end) break;  // the rest of the wanted do not match
  }
  return out;
}

Result<std::vector<store::VocabularyWord>> SqliteIndexBackend::VocabularyWords(
    std::string_view prefix, int min_length, int max_length, int limit) {
  // fts5vocab seeks to the first term of the range and stops past its end;
  // it reads the postings of each term in between to count its documents.
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT term, doc FROM search_vocab"
                                             " WHERE term >= ?1 AND term < ?2"
                                             " AND length(term) BETWEEN ?3 AND ?4 LIMIT ?5"));
  std::string end = store::PrefixEnd(prefix);
  if (end.empty()) end = "\xff\xff\xff\xff\xff";  // past every UTF-8 term
  s.Bind(1, prefix)
      .Bind(2, std::string_view(end))
      .Bind(3, int64_t{min_length})
      .Bind(4, int64_t{max_length})
      .Bind(5, int64_t{limit});
  std::vector<store::VocabularyWord> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({.word = std::string(s.ColumnText(0)), .documents = s.ColumnInt(1)});
  }
  return out;
}

Status SqliteIndexBackend::RebuildKeywordIndex() {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_));
  // Documents for events and writes the index lost, none for those gone.
  RETURN_IF_ERROR(db_->Exec(
      "DELETE FROM search_docs WHERE (code_id IS NULL AND NOT EXISTS (SELECT 1 FROM events e"
      " WHERE e.session_id = search_docs.session_id AND e.seq = search_docs.seq))"
      " OR (code_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM code_writes c"
      " WHERE c.id = search_docs.code_id));"
      "INSERT INTO search_docs (session_id, seq) SELECT e.session_id, e.seq FROM events e"
      " WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.code_id IS NULL"
      " AND d.session_id = e.session_id AND d.seq = e.seq);"
      "INSERT INTO search_docs (session_id, seq, code_id) SELECT c.session_id, 0, c.id"
      " FROM code_writes c WHERE NOT EXISTS (SELECT 1 FROM search_docs d"
      " WHERE d.code_id = c.id);"
      // Every document is indexed by the rebuild, so the watermark moves to the last.
      "UPDATE search_progress SET fts_through = (SELECT coalesce(max(doc_id), 0) FROM search_docs);"
      "INSERT INTO search_fts (search_fts) VALUES ('rebuild');"));
  return txn.Commit();
}

}  // namespace sessiondb::sqlite
