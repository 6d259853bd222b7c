#include "cli/session_ref.h"

#include <algorithm>

namespace sessiondb::cli {

size_t AbbreviationLength(const std::vector<std::string>& ids) {
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  size_t length = kMinAbbreviationChars;
  // Neighbours in sorted order share the longest prefixes; one character past
  // the longest shared prefix tells every pair apart.
  for (size_t i = 1; i < sorted.size(); ++i) {
    const std::string& a = sorted[i - 1];
    const std::string& b = sorted[i];
    const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
    length = std::max(length, static_cast<size_t>(ia - a.begin()) + 1);
  }
  return length;
}

}  // namespace sessiondb::cli
