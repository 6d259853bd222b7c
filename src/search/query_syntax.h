// What a person types into a search box, made into a full-text expression
// that cannot fail to parse. Supported: words (all must match), "a phrase",
// OR between two items, -word or NOT word to exclude, word* for a prefix.
// Anything else (punctuation, code like foo(bar) or a->b, stray quotes) is
// escaped: a run of characters without spaces becomes the phrase of its words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sessiondb::search {

struct ParsedQuery {
  std::string match;               // FTS5 expression; empty when nothing can match
  std::vector<std::string> terms;  // the words to look for (lower-cased), for highlights
  std::string note;                // why `match` is empty
};

ParsedQuery ParseUserQuery(std::string_view query);

// An expression matching documents holding any of `words` (each quoted), for
// "more like this" queries built from code. Empty when `words` is.
std::string AnyOfWords(const std::vector<std::string>& words);

// The words of `text` as the index splits them: runs of letters, digits and
// '_' (bytes >= 0x80 count as letters), lower-cased (ASCII).
std::vector<std::string> SplitWords(std::string_view text);

}  // namespace sessiondb::search
