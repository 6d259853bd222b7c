// What `sessiondb` says about a verb or an option it does not know: the names
// a person most likely meant, as git suggests `status` for `stauts`.
//
// Example:
//   SimilarNames("lss", {"ls", "new", "show"})          // {"ls"}
//   SimilarNames("--limt", {"--limit", "--all"})        // {"--limit"}
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sessiondb::cli {

// The names of `names` (verbs, or options with their dashes) closest to
// `typed`, best first: those at the smallest edit distance (insertions,
// deletions, substitutions and swaps of adjacent letters) when it is at most
// 2, a name `typed` begins counting as distance 1. Empty when nothing is that
// close.
std::vector<std::string> SimilarNames(std::string_view typed,
                                      const std::vector<std::string>& names);

// The paragraph that lists `similar`, git's wording: "\nThe most similar
// command is\n\tls\n" (`noun` "command"), or "...commands are\n" and a line
// each; empty when `similar` is.
std::string MostSimilar(std::string_view noun, const std::vector<std::string>& similar);

// The message for an unknown verb, git's wording: "'lss' is not a sessiondb
// command. See 'sessiondb --help'." and, when there are any, the similar verbs
// on lines of their own.
std::string UnknownVerbMessage(std::string_view typed, const std::vector<std::string>& similar);

}  // namespace sessiondb::cli
