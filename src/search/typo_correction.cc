#include "search/typo_correction.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace sessiondb::search {
namespace {

// The code points of `text` (a byte that starts no valid sequence counts as
// one code point of its own: distances stay defined on any bytes).
std::u32string CodePoints(std::string_view text) {
  std::u32string out;
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    const int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
    if (extra == 0 || i + static_cast<size_t>(extra) >= text.size()) {
      out += static_cast<char32_t>(b);
      ++i;
      continue;
    }
    char32_t cp = b & (0x3F >> extra);
    bool valid = true;
    for (int k = 1; k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
      if ((c & 0xC0) != 0x80) valid = false;
      cp = cp << 6 | (c & 0x3F);
    }
    if (!valid) {
      out += static_cast<char32_t>(b);
      ++i;
      continue;
    }
    out += cp;
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

// The distance a word of `length` characters may be corrected across.
int AllowedDistance(size_t length) { return length >= 8 ? 2 : 1; }

// The first UTF-8 character of `word` at or after byte `from`.
std::string_view CharacterAt(std::string_view word, size_t from) {
  if (from >= word.size()) return {};
  size_t end = from + 1;
  while (end < word.size() && (static_cast<unsigned char>(word[end]) & 0xC0) == 0x80) ++end;
  return word.substr(from, end - from);
}

struct Candidate {
  std::string word;
  int64_t documents = 0;
  int distance = 0;
};

// True when `a` is the better replacement.
bool IsBetterCandidate(const Candidate& a, const Candidate& b) {
  if (a.documents != b.documents) return a.documents > b.documents;
  if (a.distance != b.distance) return a.distance < b.distance;
  return a.word < b.word;
}

// The vocabulary's nearest word to `typed`, or empty.
Result<std::string> NearestWord(store::IndexBackend& backend, const std::string& typed) {
  const std::u32string points = CodePoints(typed);
  const int length = static_cast<int>(points.size());
  const int max = AllowedDistance(points.size());
  // Words that keep the first character; then, for a first character
  // dropped or swapped with the second, words that begin with the second
  // and the third, or the second and the first.
  const std::string_view first = CharacterAt(typed, 0);
  const std::string_view second = CharacterAt(typed, first.size());
  const std::string_view third = CharacterAt(typed, first.size() + second.size());
  std::vector<std::string> prefixes = {std::string(first)};
  if (!second.empty() && second != first) {
    prefixes.push_back(std::string(second) + std::string(third));
    if (third != first) prefixes.push_back(std::string(second) + std::string(first));
  }
  std::optional<Candidate> best;
  for (const std::string& prefix : prefixes) {
    ASSIGN_OR_RETURN(std::vector<store::VocabularyWord> words,
                     backend.VocabularyWords(prefix, length - max, length + max, kMaxScannedWords));
    for (store::VocabularyWord& w : words) {
      if (w.documents <= 0) continue;
      const int d = EditDistance(typed, w.word, max);
      if (d == 0 || d > max) continue;
      Candidate c{.word = std::move(w.word), .documents = w.documents, .distance = d};
      if (!best || IsBetterCandidate(c, *best)) best = std::move(c);
    }
  }
  return best ? best->word : std::string();
}

bool IsTypedWordByte(unsigned char c) { return c >= 0x80 || std::isalnum(c) || c == '_'; }

}  // namespace

int EditDistance(std::string_view a_bytes, std::string_view b_bytes, int max) {
  const std::u32string a = CodePoints(a_bytes);
  const std::u32string b = CodePoints(b_bytes);
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > static_cast<size_t>(max)) return max + 1;
  // Three rows of the optimal string alignment table.
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    int row_min = current[0];
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int d = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d = std::min(d, before[j - 2] + 1);
      }
      current[j] = d;
      row_min = std::min(row_min, d);
    }
    if (row_min > max) return max + 1;
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return std::min(previous[m], max + 1);
}

Result<QueryCorrection> CorrectQuery(store::IndexBackend& backend, const store::TextQuery& query) {
  QueryCorrection out{.query = query};
  if (!backend.HasVocabulary()) return out;
  size_t looked_at = 0;
  for (std::vector<store::TextPhrase>& group : out.query.all_of) {
    for (store::TextPhrase& phrase : group) {
      if (phrase.words.size() != 1 || phrase.prefix || phrase.quoted) continue;
      std::string& word = phrase.words.front();
      const size_t length = CodePoints(word).size();
      if (length < static_cast<size_t>(kMinCorrectedLength) ||
          length > static_cast<size_t>(kMaxCorrectedLength)) {
        continue;
      }
      // A word typed twice is looked up once.
      const auto done = std::find_if(out.words.begin(), out.words.end(),
                                     [&word](const auto& c) { return c.first == word; });
      if (done != out.words.end()) {
        word = done->second;
        continue;
      }
      if (looked_at++ == kMaxCorrectedWords) return out;
      ASSIGN_OR_RETURN(bool matches, backend.HoldsWord(word));
      if (matches) continue;
      ASSIGN_OR_RETURN(std::string nearest, NearestWord(backend, word));
      if (nearest.empty()) continue;
      out.words.emplace_back(word, nearest);
      word = std::move(nearest);
    }
  }
  return out;
}

std::string RewriteQueryText(std::string_view typed,
                             const std::vector<std::pair<std::string, std::string>>& words) {
  std::string out;
  size_t i = 0;
  while (i < typed.size()) {
    if (!IsTypedWordByte(static_cast<unsigned char>(typed[i]))) {
      out += typed[i++];
      continue;
    }
    size_t end = i;
    std::string lower;
    while (end < typed.size() && IsTypedWordByte(static_cast<unsigned char>(typed[end]))) {
      const auto c = static_cast<unsigned char>(typed[end++]);
      lower += static_cast<char>(c < 0x80 ? std::tolower(c) : c);
    }
    const auto found = std::find_if(words.begin(), words.end(),
                                    [&lower](const auto& c) { return c.first == lower; });
    if (found != words.end()) {
      out += found->second;
    } else {
      out += typed.substr(i, end - i);
    }
    i = end;
  }
  return out;
}

}  // namespace sessiondb::search
