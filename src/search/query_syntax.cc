#include "search/query_syntax.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace sessiondb::search {
namespace {

// More terms than this are dropped: a pasted page is not a query.
constexpr size_t kMaxItems = 64;

bool IsWordByte(unsigned char c) { return c >= 0x80 || std::isalnum(c) || c == '_'; }

// One item of the query: a term, a phrase or a prefix, possibly excluded.
struct Item {
  store::TextPhrase phrase;
  bool excluded = false;
  bool or_before = false;  // joined to the previous item by OR
};

// Words that begin a question in English.
constexpr std::array<std::string_view, 18> kQuestionWords = {
    "how",  "what", "why", "when", "where", "who", "which", "whose",  "did",
    "does", "do",   "is",  "are",  "was",   "can", "could", "should", "would"};

// English words too common to require in a question: "how did I fix the
// docker cache" asks for documents about fixing a docker cache, which rarely
// hold "how", "did" or "I". Sorted, for binary search.
constexpr std::array<std::string_view, 76> kStopWords = {
    "a",     "about", "all",   "am",    "an",    "and",    "any",   "are",   "as",   "at",
    "be",    "been",  "being", "but",   "by",    "can",    "could", "did",   "do",   "does",
    "doing", "for",   "from",  "had",   "has",   "have",   "he",    "her",   "him",  "his",
    "how",   "i",     "if",    "in",    "into",  "is",     "it",    "its",   "me",   "my",
    "of",    "on",    "or",    "our",   "she",   "should", "so",    "some",  "that", "the",
    "their", "them",  "then",  "there", "these", "they",   "this",  "those", "to",   "us",
    "was",   "we",    "were",  "what",  "when",  "where",  "which", "who",   "whom", "whose",
    "why",   "will",  "with",  "would", "you",   "your"};

bool IsStopWord(std::string_view word) {
  return std::binary_search(kStopWords.begin(), kStopWords.end(), word);
}

// A question typed as a person asks it: no quotes, OR, exclusions or
// prefixes, beginning with a question word or ending in '?'.
bool IsQuestion(std::string_view query, const std::vector<Item>& items) {
  if (items.size() < 2) return false;
  for (const Item& item : items) {
    if (item.excluded || item.or_before || item.phrase.prefix) return false;
  }
  if (query.find('"') != std::string_view::npos) return false;
  const std::string_view first = items.front().phrase.words.front();
  const size_t last = query.find_last_not_of(" \t\r\n");
  return std::find(kQuestionWords.begin(), kQuestionWords.end(), first) != kQuestionWords.end() ||
         (last != std::string_view::npos && query[last] == '?');
}

// A question's stop words are not required (nor highlighted), unless it has
// no other word. Code such as foo.bar stays whole (a phrase of its words).
void DropStopWords(std::vector<Item>* items, std::vector<std::string>* terms) {
  const auto stop = [](const Item& item) {
    return item.phrase.words.size() == 1 && IsStopWord(item.phrase.words.front());
  };
  if (std::all_of(items->begin(), items->end(), stop)) return;
  std::erase_if(*items, stop);
  std::erase_if(*terms, [](const std::string& w) { return IsStopWord(w); });
}

}  // namespace

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsWordByte(c)) {
      current += static_cast<char>(c < 0x80 ? std::tolower(c) : c);
    } else if (!current.empty()) {
      words.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

bool HoldsAnyPhrase(std::string_view text, std::span<const store::TextPhrase> phrases) {
  if (phrases.empty()) return false;
  const std::vector<std::string> words = SplitWords(text);
  for (const store::TextPhrase& phrase : phrases) {
    const size_t n = phrase.words.size();
    if (n == 0 || n > words.size()) continue;
    for (size_t start = 0; start + n <= words.size(); ++start) {
      bool held = true;
      for (size_t k = 0; k < n && held; ++k) {
        const std::string& want = phrase.words[k];
        const std::string& have = words[start + k];
        held = (phrase.prefix && k + 1 == n) ? have.starts_with(want) : have == want;
      }
      if (held) return true;
    }
  }
  return false;
}

store::TextQuery AnyOfWords(const std::vector<std::string>& words) {
  std::vector<store::TextPhrase> any;
  for (const std::string& w : words) {
    if (!w.empty()) any.push_back({.words = {w}});
  }
  store::TextQuery out;
  if (!any.empty()) out.all_of.push_back(std::move(any));
  return out;
}

ParsedQuery ParseUserQuery(std::string_view query) {
  ParsedQuery parsed;
  std::vector<Item> items;
  bool pending_or = false;
  bool pending_not = false;
  size_t i = 0;
  while (i < query.size() && items.size() < kMaxItems) {
    const char c = query[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    bool excluded = pending_not;
    pending_not = false;
    std::string_view chunk;
    bool phrase = false;
    if (c == '"') {
      // A phrase up to the closing quote, or to the end when it is missing.
      size_t end = query.find('"', i + 1);
      if (end == std::string_view::npos) end = query.size();
      chunk = query.substr(i + 1, end - i - 1);
      i = end + 1;
      phrase = true;
    } else {
      size_t end = i;
      while (end < query.size() && !std::isspace(static_cast<unsigned char>(query[end]))) ++end;
      chunk = query.substr(i, end - i);
      i = end;
      if (chunk == "OR") {
        pending_or = !items.empty();
        continue;
      }
      if (chunk == "AND") continue;
      if (chunk == "NOT") {
        pending_not = true;
        continue;
      }
      if (chunk.size() > 1 && chunk[0] == '-' && IsWordByte(static_cast<unsigned char>(chunk[1]))) {
        excluded = true;
        chunk.remove_prefix(1);
      }
    }
    std::vector<std::string> words = SplitWords(chunk);
    if (words.empty()) continue;  // punctuation alone: nothing to look for
    Item item;
    // word* (one word, nothing but the star after it) is a prefix.
    item.phrase.prefix = !phrase && words.size() == 1 && chunk.size() > 1 && chunk.back() == '*' &&
                         IsWordByte(static_cast<unsigned char>(chunk[chunk.size() - 2]));
    item.phrase.quoted = phrase;
    item.excluded = excluded;
    item.or_before = pending_or && !excluded && !items.empty() && !items.back().excluded;
    pending_or = false;
    if (!excluded) parsed.terms.insert(parsed.terms.end(), words.begin(), words.end());
    item.phrase.words = std::move(words);
    items.push_back(std::move(item));
  }

  if (IsQuestion(query, items)) DropStopWords(&items, &parsed.terms);

  // Positive items: OR chains become groups, the groups ANDed.
  store::TextQuery& q = parsed.query;
  for (Item& item : items) {
    if (item.excluded) {
      q.none_of.push_back(std::move(item.phrase));
    } else if (item.or_before && !q.all_of.empty()) {
      q.all_of.back().push_back(std::move(item.phrase));
    } else {
      q.all_of.push_back({std::move(item.phrase)});
    }
  }
  if (q.all_of.empty()) {
    parsed.note = items.empty() ? "the query has no words to search for"
                                : "the query only excludes words; add a word to look for";
    parsed.terms.clear();
    q.none_of.clear();
  }
  return parsed;
}

}  // namespace sessiondb::search
