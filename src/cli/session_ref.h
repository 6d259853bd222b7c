// Session ids people can type: the whole id, any unique prefix of it (at
// least kMinPrefixChars long, as git takes a short hash), or `-` / `@` for
// the active session. Every verb that takes a session id resolves it here,
// through CliContext::SessionId. The other way round, AbbreviationLength says
// how much of the ids `ls` prints.
//
// Example:
//   auto id = ResolveSessionRef(store, "0192f3a1");  // "0192f3a1-7c1e-7..."
//
// Thread-safety: as the Store's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/store.h"

namespace sessiondb::cli {

// Shorter prefixes are not looked up: a two-letter slip should not pick a
// session, least of all for `rm`.
inline constexpr size_t kMinPrefixChars = 4;
// `ls` never prints fewer characters of an id than this (git's default).
inline constexpr size_t kMinAbbreviationChars = 8;
// How every SESSION argument is described in --help.
inline constexpr char kSessionArgHelp[] =
    "Session id, a unique prefix of one, or - for the active one";
// An ambiguous prefix lists at most this many of the sessions it matches.
inline constexpr size_t kMaxCandidatesListed = 10;

// The full id `typed` stands for. `-` and `@` are the active session
// (kNotFound when none is set). An id that exists is itself, found with one
// lookup. Otherwise the sessions, archived ones too, are paged through
// (ListSessions, 1000 at a time: the Store has no prefix lookup) for ids that
// begin with `typed`: one is the answer; several are kInvalidArgument naming
// up to kMaxCandidatesListed of them with their titles; none (or a prefix
// shorter than kMinPrefixChars) is the Store's kNotFound for `typed`.
Result<std::string> ResolveSessionRef(Store& store, std::string_view typed);

// The characters of each id `ls` prints: the fewest, and at least
// kMinAbbreviationChars, that tell the ids of `ids` apart from each other.
// (An id shorter than that is printed whole.)
size_t AbbreviationLength(const std::vector<std::string>& ids);

}  // namespace sessiondb::cli
