// What a person types into a search box, made into a backend-neutral
// TextQuery that every backend can express (an FTS5 expression, a tsquery)
// without failing to parse. Supported: words (all must match), "a phrase",
// OR between two items, -word or NOT word to exclude, word* for a prefix.
// Anything else (punctuation, code like foo(bar) or a->b, stray quotes) is
// escaped: a run of characters without spaces becomes the phrase of its words.
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/index_backend.h"

namespace sessiondb::search {

struct ParsedQuery {
  store::TextQuery query;          // empty when nothing can match
  std::vector<std::string> terms;  // the words to look for (lower-cased), for highlights
  std::string note;                // why `query` is empty
};

ParsedQuery ParseUserQuery(std::string_view query);

// A query matching documents holding any of `words` (one group of one-word
// phrases), for "more like this" queries built from code. Empty when `words`
// has no non-empty word.
store::TextQuery AnyOfWords(const std::vector<std::string>& words);

// The words of `text` as the index splits them: runs of letters, digits and
// '_' (bytes >= 0x80 count as letters), lower-cased (ASCII).
std::vector<std::string> SplitWords(std::string_view text);

// True if `text`, split as the index splits it, holds any of `phrases`: its
// words in a row, the last a prefix when the phrase is one. What keeps a
// query's excluded words out of vector hits, which no full-text index filtered.
bool HoldsAnyPhrase(std::string_view text, std::span<const store::TextPhrase> phrases);

}  // namespace sessiondb::search
