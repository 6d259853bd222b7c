// Typo correction from the index's own vocabulary ("search that forgives",
// docs/search.md): a word of the query that no document holds is replaced by
// the nearest word the index does hold, so `deadlok` finds "deadlock".
//
// The rule: a word is a candidate for correction when it stands alone (not
// in quotes, not part of a phrase, not a prefix, not excluded), is 4 to 64
// characters long and matches no document. Its replacement is a vocabulary
// word within Damerau-Levenshtein distance 1 (a word of 4 to 7 characters)
// or 2 (8 or more): the one most documents hold; on a tie the nearer, then
// the first in byte order. The scan is bounded: words beginning with the
// typed word's first character, then (a dropped or swapped first letter)
// those beginning with its second and third, and its second and first, each
// of a length the distance allows, at most kMaxScannedWords of each; at most
// kMaxCorrectedWords words of a query are looked at. A first letter
// mistyped or left out is not corrected.
//
// Thread-safety: pure functions, over a backend used by one thread.
//
// Example:
//   ASSIGN_OR_RETURN(QueryCorrection c, CorrectQuery(backend, parsed.query));
//   if (!c.words.empty()) parsed.query = c.query;  // "deadlok" -> "deadlock"
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/status.h"
#include "store/index_backend.h"

namespace sessiondb::search {

// Words of one query looked at, at most: a pasted page costs 8 lookups.
inline constexpr size_t kMaxCorrectedWords = 8;
// Vocabulary words read per scan, at most (two scans per word).
inline constexpr int kMaxScannedWords = 20'000;
// Words shorter than this are never corrected: too many neighbours.
inline constexpr int kMinCorrectedLength = 4;
// Longer words are not corrected either: no one mistypes a hash.
inline constexpr int kMaxCorrectedLength = 64;

// The Damerau-Levenshtein distance (optimal string alignment: adjacent
// transpositions count 1) between `a` and `b`, over code points; any value
// above `max` is reported as max + 1 (and costs O(len * max) at most).
int EditDistance(std::string_view a, std::string_view b, int max);

struct QueryCorrection {
  store::TextQuery query;  // the query with each corrected word replaced
  // Each typed word and the vocabulary word used for it, in query order.
  std::vector<std::pair<std::string, std::string>> words;
};

// The correction of `query` against `backend`'s vocabulary: `words` is empty
// when no word needed one or none had a neighbour (then `query` is the input).
// Nothing is corrected when the backend keeps no vocabulary.
Result<QueryCorrection> CorrectQuery(store::IndexBackend& backend, const store::TextQuery& query);

// `typed` (what the person wrote) with each corrected word replaced, matched
// case-insensitively as a whole word: what SearchResults::corrected_query shows.
std::string RewriteQueryText(std::string_view typed,
                             const std::vector<std::pair<std::string, std::string>>& words);

}  // namespace sessiondb::search
