// BM25 ranking over the full-text index, with filters, and snippets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/search.h"
#include "sessiondb/status.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::search {

struct RankedDoc {
  int64_t doc_id = 0;
  double score = 0;  // higher is better (BM25 negated, as FTS5 gives it negative)
};

struct KeywordRanking {
  std::vector<RankedDoc> docs;  // best first
  int64_t matches = 0;          // that passed the filter (the cap, when bounded)
  bool bounded = false;
};

// Documents matching `match` (an FTS5 expression) and `filter`. Only the
// newest `max_candidates` matches are ranked, so a term in every message costs
// a bounded amount of work; `bounded` says when that cut anything.
Result<KeywordRanking> RankKeyword(sqlite::Database* db, std::string_view match,
                                   const SearchFilter& filter, int64_t max_candidates);

// The documents that pass `filter`, for filtering vector hits; all of them
// when the filter is empty (then `unfiltered` is set and the list is empty).
struct FilteredDocs {
  bool unfiltered = false;
  std::vector<int64_t> doc_ids;  // ascending
};
Result<FilteredDocs> DocsPassingFilter(sqlite::Database* db, const SearchFilter& filter);

// An excerpt of the document around the matches, with their byte ranges.
struct Snippet {
  std::string text;
  std::vector<std::pair<size_t, size_t>> highlights;
};
Result<Snippet> MatchSnippet(sqlite::Database* db, std::string_view match, int64_t doc_id);

// The first `max_bytes` of the document's text (cut on a character boundary),
// with `terms` highlighted where they occur as whole words.
Result<Snippet> LeadSnippet(sqlite::Database* db, int64_t doc_id,
                            const std::vector<std::string>& terms, size_t max_bytes = 200);

}  // namespace sessiondb::search
