// Session ids people and agents can type: the whole id, any unique prefix of
// it (at least kMinPrefixChars long, as git takes a short hash), or `-` / `@`
// for the active session. Every face resolves what it was given here: the
// CLI for each SESSION argument (cli/session_ref.h, CliContext::SessionId),
// the MCP tools for each argument that names a session, so a prefix that
// works on the command line works for an agent too.
//
// Example:
//   ASSIGN_OR_RETURN(std::string id, ResolveSessionRef(store, "0192f3a1"));
//   // id == "0192f3a1-7c1e-7..."
//
// Thread-safety: as the Store's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sessiondb/store.h"

namespace sessiondb {

// Shorter prefixes are not looked up: a two-letter slip should not pick a
// session, least of all for `rm`.
inline constexpr size_t kMinPrefixChars = 4;
// An ambiguous prefix lists at most this many of the sessions it matches.
inline constexpr size_t kMaxCandidatesListed = 10;

// The full id `typed` stands for. `-` and `@` are the active session
// (kNotFound when none is set). An id that exists is itself, found with one
// lookup. Otherwise the sessions, archived ones too, are paged through
// (ListSessions, 1000 at a time: the Store has no prefix lookup) for ids that
// begin with `typed`: one is the answer; several are kInvalidArgument naming
// up to kMaxCandidatesListed of them with their titles, one per line
// ("session id prefix 'ab12' is ambiguous; it matches:\n  ID  TITLE..."); none
// (or a prefix shorter than kMinPrefixChars) is the Store's kNotFound for
// `typed`.
Result<std::string> ResolveSessionRef(Store& store, std::string_view typed);

}  // namespace sessiondb
