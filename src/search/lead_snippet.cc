#include "search/lead_snippet.h"

#include <algorithm>
#include <cctype>

#include "core/text_rules.h"
#include "search/query_syntax.h"

namespace sessiondb::search {

store::Snippet LeadSnippet(std::string_view full_text, const std::vector<std::string>& terms,
                           size_t max_bytes) {
  store::Snippet out;
  std::string text = CollapseWhitespace(full_text);
  if (text.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + " …";
  }
  // Whole-word, case-insensitive (ASCII) occurrences of the terms.
  auto is_word = [&](size_t k) {
    auto c = static_cast<unsigned char>(text[k]);
    return c >= 0x80 || std::isalnum(c) || c == '_';
  };
  size_t i = 0;
  while (i < text.size()) {
    if (!is_word(i)) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_word(end)) ++end;
    std::vector<std::string> w = SplitWords(std::string_view(text).substr(i, end - i));
    if (w.size() == 1 && std::find(terms.begin(), terms.end(), w[0]) != terms.end()) {
      out.highlights.emplace_back(i, end);
    }
    i = end;
  }
  out.text = std::move(text);
  return out;
}

}  // namespace sessiondb::search
