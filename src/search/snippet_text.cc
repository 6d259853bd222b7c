#include "search/snippet_text.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace sessiondb::search {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDelimiter(char c) { return c == '*' || c == '_' || c == '~'; }
bool IsAlnum(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Which bytes of a snippet are Markdown markers. One pass per kind, each
// skipping what an earlier one claimed.
class Markers {
 public:
  explicit Markers(std::string_view text)
      : text_(text), drop_(text.size(), false), code_(text.size(), false) {}

  std::vector<bool> Find(const std::vector<std::pair<size_t, size_t>>& highlights) {
    CodeSpans();
    Links();
    Headings();
    Emphasis();
    // A run left next to a match (an emphasis the snippet cut in half) would
    // stand beside the face's own marker.
    for (const auto& [b, e] : highlights) {
      if (b > 0 && b <= text_.size()) DropRunEndingAt(b);
      if (e < text_.size()) DropRunStartingAt(e);
    }
    return drop_;
  }

 private:
  size_t RunEnd(size_t at) const {
    size_t end = at;
    while (end < text_.size() && text_[end] == text_[at]) ++end;
    return end;
  }
  void Drop(size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) drop_[i] = true;
  }

  // `code`: the backticks go, what they hold is left as it is.
  void CodeSpans() {
    size_t i = 0;
    while (i < text_.size()) {
      if (text_[i] != '`') {
        ++i;
        continue;
      }
      const size_t open_end = RunEnd(i);
      const size_t width = open_end - i;
      size_t j = open_end;
      size_t close = std::string_view::npos;
      while (j < text_.size()) {
        if (text_[j] != '`') {
          ++j;
          continue;
        }
        const size_t run_end = RunEnd(j);
        if (run_end - j == width) {
          close = j;
          break;
        }
        j = run_end;
      }
      if (close == std::string_view::npos) {
        i = open_end;
        continue;
      }
      Drop(i, open_end);
      Drop(close, close + width);
      for (size_t k = open_end; k < close; ++k) code_[k] = true;
      i = close + width;
    }
  }

  // [text](url) and ![alt](url): the text stays, the rest goes.
  void Links() {
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] != '[' || code_[i]) continue;
      const size_t close = text_.find("](", i + 1);
      if (close == std::string_view::npos) return;
      if (text_.substr(i + 1, close - i - 1).find_first_of("[]") != std::string_view::npos) {
        continue;
      }
      const size_t paren = text_.find(')', close + 2);
      if (paren == std::string_view::npos) return;
      if (text_.substr(close + 2, paren - close - 2).find(' ') != std::string_view::npos) continue;
      if (i > 0 && text_[i - 1] == '!' && !code_[i - 1]) drop_[i - 1] = true;
      drop_[i] = true;
      Drop(close, paren + 1);
      i = paren;
    }
  }

  // "## Title" at the start, or where a line began (snippets are one line:
  // a heading's hashes then follow a space).
  void Headings() {
    size_t i = 0;
    while (i < text_.size()) {
      const bool line_start = i == 0 || IsSpace(text_[i - 1]);
      if (text_[i] != '#' || code_[i] || !line_start) {
        ++i;
        continue;
      }
      const size_t end = RunEnd(i);
      if (end - i <= 6 && end < text_.size() && text_[end] == ' ') Drop(i, end + 1);
      i = end;
    }
  }

  // Runs of * _ ~. A run of two or more that touches a word is a marker,
  // paired or not (asterisks doubled are never meant as text); a single one
  // only when it opens a span that a later single one closes. Underscores
  // inside a word (snake_case) are text.
  void Emphasis() {
    struct Run {
      size_t begin, end;
      bool opens, closes;
    };
    std::vector<Run> runs;
    for (size_t i = 0; i < text_.size();) {
      if (!IsDelimiter(text_[i]) || code_[i] || drop_[i]) {
        ++i;
        continue;
      }
      const size_t end = RunEnd(i);
      const bool space_before = i == 0 || IsSpace(text_[i - 1]);
      const bool space_after = end == text_.size() || IsSpace(text_[end]);
      bool opens = !space_after;
      bool closes = !space_before;
      if (text_[i] == '_' && i > 0 && end < text_.size() && IsAlnum(text_[i - 1]) &&
          IsAlnum(text_[end])) {
        opens = closes = false;
      }
      if (text_[i] == '~' && end - i != 2) opens = closes = false;
      runs.push_back({i, end, opens, closes});
      i = end;
    }
    std::vector<bool> paired(runs.size(), false);
    for (size_t a = 0; a < runs.size(); ++a) {
      if (paired[a] || !runs[a].opens) continue;
      for (size_t b = a + 1; b < runs.size(); ++b) {
        if (paired[b] || !runs[b].closes) continue;
        if (text_[runs[b].begin] != text_[runs[a].begin]) continue;
        if (runs[b].end - runs[b].begin != runs[a].end - runs[a].begin) continue;
        paired[a] = paired[b] = true;
        break;
      }
    }
    for (size_t r = 0; r < runs.size(); ++r) {
      const bool doubled = runs[r].end - runs[r].begin >= 2 && (runs[r].opens || runs[r].closes);
      if (paired[r] || doubled) Drop(runs[r].begin, runs[r].end);
    }
  }

  // Asterisks and tildes only: an underscore beside a match is more often
  // part of a name (snake_case) than an emphasis.
  static bool IsStar(char c) { return c == '*' || c == '~'; }
  void DropRunEndingAt(size_t at) {
    size_t begin = at;
    while (begin > 0 && IsStar(text_[begin - 1]) && !code_[begin - 1]) --begin;
    Drop(begin, at);
  }
  void DropRunStartingAt(size_t at) {
    size_t end = at;
    while (end < text_.size() && IsStar(text_[end]) && !code_[end]) ++end;
    Drop(at, end);
  }

  std::string_view text_;
  std::vector<bool> drop_;
  std::vector<bool> code_;  // inside a code span
};

}  // namespace

store::Snippet PlainSnippet(const store::Snippet& snippet) {
  const std::string& text = snippet.text;
  std::vector<bool> drop = Markers(text).Find(snippet.highlights);
  // kept[i]: how many bytes before offset i remain.
  std::vector<size_t> kept(text.size() + 1, 0);
  store::Snippet out;
  out.text.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    kept[i] = out.text.size();
    if (!drop[i]) out.text += text[i];
  }
  kept[text.size()] = out.text.size();
  for (const auto& [b, e] : snippet.highlights) {
    if (b >= e || e > text.size()) continue;
    const size_t begin = kept[b];
    const size_t end = kept[e];
    if (end <= begin) continue;
    // Ranges that now touch become one: two markers side by side would read
    // as one doubled.
    if (!out.highlights.empty() && begin <= out.highlights.back().second &&
        begin >= out.highlights.back().first) {
      out.highlights.back().second = std::max(out.highlights.back().second, end);
    } else {
      out.highlights.emplace_back(begin, end);
    }
  }
  return out;
}

}  // namespace sessiondb::search
