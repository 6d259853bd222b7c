#include "cli/verb_suggestion.h"

#include <algorithm>
#include <utility>

namespace sessiondb::cli {
namespace {

// Farther than this, a suggestion is a guess that helps nobody.
constexpr size_t kMaxDistance = 2;

// Optimal string alignment distance: Levenshtein plus the swap of two
// adjacent letters, the commonest slip of the fingers ("shwo").
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::vector<std::string> SimilarNames(std::string_view typed,
                                      const std::vector<std::string>& names) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& name : names) {
    size_t distance = EditDistance(typed, name);
    if (typed.size() >= 2 && name.starts_with(typed)) distance = std::min<size_t>(distance, 1);
    if (distance <= kMaxDistance) scored.emplace_back(distance, name);
  }
  std::sort(scored.begin(), scored.end());
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  std::vector<std::string> best;
  for (const auto& [distance, name] : scored) {
    if (distance != scored.front().first) break;
    best.push_back(name);
  }
  return best;
}

std::string MostSimilar(std::string_view noun, const std::vector<std::string>& similar) {
  if (similar.empty()) return "";
  std::string out =
      "\nThe most similar " + std::string(noun) + (similar.size() == 1 ? " is\n" : "s are\n");
  for (const std::string& name : similar) out += "\t" + name + "\n";
  return out;
}

std::string UnknownVerbMessage(std::string_view typed, const std::vector<std::string>& similar) {
  std::string out = "sessiondb: '" + std::string(typed) +
                    "' is not a sessiondb command. See 'sessiondb --help'.\n";
  return out + MostSimilar("command", similar);
}

}  // namespace sessiondb::cli
