// A TextQuery as an FTS5 MATCH expression: what the embedded backend runs and
// what SearchResults::match_expression shows on an embedded store.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "store/index_backend.h"

namespace sessiondb::sqlite {

// Each phrase quoted ("a b", with "*" after it for a prefix); the phrases of a
// group joined by OR (in parentheses when more than one); the groups joined
// by AND (in parentheses when more than one: FTS5 has no implicit AND before
// a parenthesized group); then " NOT phrase" for each excluded one. Empty
// when nothing can match (no group, or a group with no phrase). A quote
// inside a word is doubled, so the expression always parses.
std::string Fts5Expression(const store::TextQuery& query);

}  // namespace sessiondb::sqlite
