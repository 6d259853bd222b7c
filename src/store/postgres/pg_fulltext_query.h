// The PostgreSQL side of a backend-neutral TextQuery: the tsquery text that
// expresses it over the index's words (pg_search_docs.h), and the snippet of
// a matching document, made in the process the way ts_headline makes one.
//
// Example: groups [["ship", "boat"*]], none_of ["red herring"] become
//   ('ship' | 'boat':*) & !('red' <-> 'herring')
// for to_tsquery('simple', ...). A word with '_' is the phrase of its parts,
// as the index splits it ("snake_case": 'snake' <-> 'case').
//
// In an encrypted namespace every lexeme is the word's keyed token
// (PgSealer::Term), so the query matches the tokens the index holds. A
// prefix ("boat*") cannot be: a keyed token says nothing of the words that
// start like it. There a prefix is searched as the whole word ("boat"), and
// Expression shows it so; an excluded prefix ("-boat*") is checked on the
// opened text of what the index found (HoldsPrefixPhrase), so what the
// person excluded never comes back. Snippets are made in the process on
// every namespace (KeyedHeadline, from the opened text), so the server
// runs no text function on a page's documents.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "store/index_backend.h"
#include "store/postgres/pg_sealer.h"

namespace sessiondb::postgres {

// The tsquery text of `query`; empty when it is empty, or when one of its
// groups holds no phrase with a word the index can hold (then nothing can
// match). Every lexeme is quoted, so no word is read as an operator.
// With an encrypted `sealer`, lexemes are keyed tokens and prefixes whole words.
std::string RenderTsQuery(const store::TextQuery& query, const PgSealer& sealer);

// `query` with every prefix phrase made a whole-word one: what an encrypted
// namespace searches for.
store::TextQuery WithoutPrefixes(store::TextQuery query);

// The separators of a headline (KeyedHeadline): control bytes, which
// IndexableText never leaves in a text.
inline constexpr char kHeadlineStart = '\x02';
inline constexpr char kHeadlineStop = '\x03';
inline constexpr char kHeadlineFragments = '\x04';

// True when `text` holds one of the prefix phrases of `phrases` ("build*",
// "red light*"), split as the index splits it. An encrypted namespace's index
// cannot exclude a prefix, so its excluded prefixes are checked with this on
// the opened text of what the index found.
bool HoldsPrefixPhrase(std::string_view text, const std::vector<store::TextPhrase>& phrases);

// What ts_headline would give (MaxFragments=2, MaxWords=24, these
// separators) for `indexable` (IndexableText of a document) and `query`,
// made in the process: at most two
// fragments of at most 24 words, in document order, around the first words
// that a phrase of the query's all_of holds (whole words; for a prefix
// phrase, its last word also as the start of a word), those words between
// kHeadlineStart and kHeadlineStop. For SnippetFromHeadline. Every page of
// hits is made with it (PgIndex::LoadPage), so the server runs no
// ts_headline per hit.
// With `stemmed` (a plaintext namespace, whose index stems English words),
// a word also matches when it folds to the same stem as a query word does
// ("fails", "failed" for "fail"): a light suffix stripper of our own, close
// to Snowball's for the common endings, used for the highlights alone; the
// server decided which documents match.
std::string KeyedHeadline(std::string_view indexable, const store::TextQuery& query,
                          bool stemmed = false);

// The stem of a lower-case word under that light stripper: "failing",
// "fails" and "failed" give "fail", "parsing" and "parse" give "pars".
std::string LightStem(std::string_view word);

// The snippet of a document from the headline `headline` (KeyedHeadline) over
// `indexable` (IndexableText of the document): each fragment is found in it
// and taken from `original` (IndexedPart of the document, the same length)
// so the snippet keeps its punctuation; fragments are joined with " … ",
// whitespace is folded to single spaces, and the highlights follow.
store::Snippet SnippetFromHeadline(std::string_view headline, std::string_view indexable,
                                   std::string_view original);

}  // namespace sessiondb::postgres
