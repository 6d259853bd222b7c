// The PostgreSQL side of a backend-neutral TextQuery: the tsquery text that
// expresses it over the index's words (pg_search_docs.h), and the snippet made
// of ts_headline's output.
//
// Example: groups [["ship", "boat"*]], none_of ["red herring"] become
//   ('ship' | 'boat':*) & !('red' <-> 'herring')
// for to_tsquery('simple', ...). A word with '_' is the phrase of its parts,
// as the index splits it ("snake_case": 'snake' <-> 'case').
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "store/index_backend.h"

namespace sessiondb::postgres {

// The tsquery text of `query`; empty when it is empty, or when one of its
// groups holds no phrase with a word the index can hold (then nothing can
// match). Every lexeme is quoted, so no word is read as an operator.
std::string RenderTsQuery(const store::TextQuery& query);

// The separators RenderHeadline asks ts_headline for: control bytes, which
// IndexableText never leaves in a text.
inline constexpr char kHeadlineStart = '\x02';
inline constexpr char kHeadlineStop = '\x03';
inline constexpr char kHeadlineFragments = '\x04';
// The ts_headline options that use them.
std::string HeadlineOptions();

// The snippet of a document from ts_headline's output `headline` over
// `indexable` (IndexableText of the document): each fragment is found in it
// and taken from `original` (IndexedPart of the document, the same length)
// so the snippet keeps its punctuation; fragments are joined with " … ",
// whitespace is folded to single spaces, and the highlights follow.
store::Snippet SnippetFromHeadline(std::string_view headline, std::string_view indexable,
                                   std::string_view original);

}  // namespace sessiondb::postgres
