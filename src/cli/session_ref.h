// Session ids on the command line: what SESSION arguments resolve through
// (api/session_ref.h: the whole id, a unique prefix, `-` / `@`, shared with
// the MCP tools), how --help describes them and, the other way round, how
// much of the ids `ls` prints (AbbreviationLength).
//
// Example:
//   auto id = ResolveSessionRef(store, "0192f3a1");  // "0192f3a1-7c1e-7..."
//   size_t shown = AbbreviationLength(ids);          // 8 unless two ids share 8
//
// Thread-safety: as the Store's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "api/session_ref.h"

namespace sessiondb::cli {

// `ls` never prints fewer characters of an id than this (git's default).
inline constexpr size_t kMinAbbreviationChars = 8;
// How every SESSION argument is described in --help.
inline constexpr char kSessionArgHelp[] =
    "Session id, a unique prefix of one, or - for the active one";

// The characters of each id `ls` prints: the fewest, and at least
// kMinAbbreviationChars, that tell the ids of `ids` apart from each other.
// (An id shorter than that is printed whole.)
size_t AbbreviationLength(const std::vector<std::string>& ids);

}  // namespace sessiondb::cli
