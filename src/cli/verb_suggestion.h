// What `sessiondb` says about a verb it does not know: the verbs a person
// most likely meant, as git suggests `status` for `stauts`.
//
// Example:
//   SimilarVerbs("lss", {"ls", "new", "show"})  // {"ls"}
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sessiondb::cli {

// The verbs of `verbs` closest to `typed`, best first: those at the smallest
// edit distance (insertions, deletions, substitutions and swaps of adjacent
// letters) when it is at most 2, a verb `typed` begins counting as distance 1.
// Empty when nothing is that close.
std::vector<std::string> SimilarVerbs(std::string_view typed,
                                      const std::vector<std::string>& verbs);

// The message for an unknown verb, git's wording: "'lss' is not a sessiondb
// command. See 'sessiondb --help'." and, when there are any, the similar verbs
// on lines of their own.
std::string UnknownVerbMessage(std::string_view typed, const std::vector<std::string>& similar);

}  // namespace sessiondb::cli
