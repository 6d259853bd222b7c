#include "store/postgres/pg_fulltext_query.h"

#include <algorithm>
#include <set>
#include <vector>

#include "store/postgres/pg_search_docs.h"

namespace sessiondb::postgres {
namespace {

// The parts of a query word the index holds as words (IndexableText splits
// where it splits): "snake_case" -> snake, case. Over-long parts, which the
// index leaves out, are left out here too.
std::vector<std::string> IndexWords(const std::string& word) {
  std::vector<std::string> out;
  std::string indexable = IndexableText(word);
  size_t i = 0;
  while (i < indexable.size()) {
    if (indexable[i] == ' ') {
      ++i;
      continue;
    }
    size_t end = indexable.find(' ', i);
    if (end == std::string::npos) end = indexable.size();
    out.push_back(word.substr(i, end - i));
    i = end;
  }
  return out;
}

// 'it''s' with backslashes doubled: a lexeme tsquery takes as it is.
std::string QuoteLexeme(std::string_view word) {
  std::string out = "'";
  for (char ch : word) {
    if (ch == '\'' || ch == '\\') out += ch;
    out += ch;
  }
  return out + "'";
}

// The terms of a phrase as the index holds them, in order.
std::vector<std::string> PhraseTerms(const store::TextPhrase& phrase) {
  std::vector<std::string> terms;
  for (const std::string& w : phrase.words) {
    for (const IndexedWord& part : WordsOf(IndexableText(w))) terms.push_back(part.term);
  }
  return terms;
}

// A phrase as tsquery: its words in order; empty when it has none.
std::string RenderPhrase(const store::TextPhrase& phrase, const PgSealer& sealer) {
  if (sealer.encrypted()) {
    // Keyed tokens of the terms (lower-cased as the index's are); no prefix.
    std::vector<std::string> terms = PhraseTerms(phrase);
    std::string out;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (i) out += " <-> ";
      out += QuoteLexeme(sealer.Term(terms[i]));
    }
    return terms.size() > 1 ? "(" + out + ")" : out;
  }
  std::vector<std::string> words;
  for (const std::string& w : phrase.words) {
    for (std::string& part : IndexWords(w)) words.push_back(std::move(part));
  }
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += " <-> ";
    out += QuoteLexeme(words[i]);
    if (phrase.prefix && i + 1 == words.size()) out += ":*";
  }
  return words.size() > 1 ? "(" + out + ")" : out;
}

// Phrases ORed; empty when none has a word.
std::string RenderAnyOf(const std::vector<store::TextPhrase>& phrases, const PgSealer& sealer) {
  std::string out;
  int count = 0;
  for (const store::TextPhrase& p : phrases) {
    std::string rendered = RenderPhrase(p, sealer);
    if (rendered.empty()) continue;
    if (count++) out += " | ";
    out += rendered;
  }
  return count > 1 ? "(" + out + ")" : out;
}

// Whitespace folded to one space, with `highlights` moved along.
store::Snippet OneLine(std::string_view text, const std::vector<std::pair<size_t, size_t>>& marks) {
  store::Snippet out;
  std::vector<size_t> at(text.size() + 1);
  bool space = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
      at[i] = out.text.size();
      space = !out.text.empty();
      continue;
    }
    if (space) out.text += ' ';
    space = false;
    at[i] = out.text.size();
    out.text += ch;
  }
  at[text.size()] = out.text.size();
  for (const auto& [b, e] : marks) {
    if (b < e && e <= text.size()) out.highlights.emplace_back(at[b], at[e - 1] + 1);
  }
  return out;
}

}  // namespace

std::string RenderTsQuery(const store::TextQuery& query, const PgSealer& sealer) {
  if (query.empty()) return "";
  std::string out;
  for (const std::vector<store::TextPhrase>& group : query.all_of) {
    std::string any = RenderAnyOf(group, sealer);
    if (any.empty()) return "";  // this group can match nothing, so neither can the query
    if (!out.empty()) out += " & ";
    out += any;
  }
  for (const store::TextPhrase& phrase : query.none_of) {
    std::string rendered = RenderPhrase(phrase, sealer);
    if (!rendered.empty()) out += " & !" + rendered;
  }
  return out;
}

store::TextQuery WithoutPrefixes(store::TextQuery query) {
  for (std::vector<store::TextPhrase>& group : query.all_of) {
    for (store::TextPhrase& p : group) p.prefix = false;
  }
  for (store::TextPhrase& p : query.none_of) p.prefix = false;
  return query;
}

bool HoldsPrefixPhrase(std::string_view text, const std::vector<store::TextPhrase>& phrases) {
  std::vector<std::string> words;
  for (IndexedWord& w : WordsOf(IndexableText(text))) words.push_back(std::move(w.term));
  for (const store::TextPhrase& phrase : phrases) {
    if (!phrase.prefix) continue;
    const std::vector<std::string> terms = PhraseTerms(phrase);
    const size_t n = terms.size();
    for (size_t start = 0; n > 0 && start + n <= words.size(); ++start) {
      bool held = true;
      for (size_t k = 0; k < n && held; ++k) {
        held = k + 1 == n ? words[start + k].starts_with(terms[k]) : words[start + k] == terms[k];
      }
      if (held) return true;
    }
  }
  return false;
}

std::string LightStem(std::string_view word) {
  std::string s(word);
  // A suffix only comes off a word that keeps three letters before it.
  const auto ends = [&s](std::string_view suffix) {
    return s.size() >= suffix.size() + 3 && s.ends_with(suffix);
  };
  const auto is_vowel = [](char c) {
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
  };
  bool verb_ending = false;
  if (ends("ies")) {
    s.resize(s.size() - 3);
    s += 'y';
  } else if (ends("sses") ||
             (ends("es") && std::string_view("sxzh").find(s[s.size() - 3]) != std::string::npos)) {
    s.resize(s.size() - 2);  // "classes" -> "class", "boxes" -> "box"
  } else if (ends("ing")) {
    s.resize(s.size() - 3);
    verb_ending = true;
  } else if (ends("ed")) {
    s.resize(s.size() - 2);
    verb_ending = true;
  } else if (ends("s") && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is")) {
    s.pop_back();
  }
  // "running" -> "runn" -> "run"; "falling" keeps its "ll".
  if (verb_ending && s.size() >= 3 && s.back() == s[s.size() - 2] && !is_vowel(s.back()) &&
      std::string_view("lsz").find(s.back()) == std::string::npos) {
    s.pop_back();
  }
  if (s.size() > 3 && s.back() == 'e') s.pop_back();
  if (s.size() >= 3 && s.back() == 'y') s.back() = 'i';
  return s;
}

std::string KeyedHeadline(std::string_view indexable, const store::TextQuery& query, bool stemmed) {
  constexpr size_t kMaxWords = 24;     // ts_headline's MaxWords
  constexpr size_t kMaxFragments = 2;  // and MaxFragments
  constexpr size_t kLeadWords = 6;     // words shown before a fragment's first match
  std::set<std::string> wanted;
  std::vector<std::string> prefixes;  // the last word of a prefix phrase ("build*")
  for (const std::vector<store::TextPhrase>& group : query.all_of) {
    for (const store::TextPhrase& p : group) {
      std::vector<std::string> terms = PhraseTerms(p);
      if (p.prefix && !terms.empty()) {
        prefixes.push_back(std::move(terms.back()));
        terms.pop_back();
      }
      for (std::string& term : terms) wanted.insert(std::move(term));
    }
  }
  std::set<std::string> wanted_stems;
  if (stemmed) {
    for (const std::string& term : wanted) wanted_stems.insert(LightStem(term));
  }
  const std::vector<IndexedWord> words = WordsOf(indexable);
  std::vector<bool> hit(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& term = words[i].term;
    hit[i] = wanted.contains(term) || (stemmed && wanted_stems.contains(LightStem(term))) ||
             std::any_of(prefixes.begin(), prefixes.end(),
                         [&](const std::string& prefix) { return term.starts_with(prefix); });
  }
  // Fragments [begin, end) of words, each opening a little before a match
  // that the fragments before it did not show.
  std::vector<std::pair<size_t, size_t>> fragments;
  size_t from = 0;
  while (fragments.size() < kMaxFragments) {
    auto match = std::find(hit.begin() + static_cast<std::ptrdiff_t>(from), hit.end(), true);
    if (match == hit.end()) break;
    const size_t at = static_cast<size_t>(match - hit.begin());
    const size_t begin = std::max(from, at >= kLeadWords ? at - kLeadWords : 0);
    const size_t end = std::min(words.size(), begin + kMaxWords);
    fragments.emplace_back(begin, end);
    from = end;
  }
  // No match (a word past kMaxKeyedTerms): the start, as ts_headline gives.
  if (fragments.empty() && !words.empty()) {
    fragments.emplace_back(0, std::min(words.size(), kMaxWords));
  }
  std::string out;
  for (const auto& [begin, end] : fragments) {
    if (!out.empty()) out += kHeadlineFragments;
    for (size_t i = begin; i < end; ++i) {
      if (i > begin) out += indexable.substr(words[i - 1].end, words[i].begin - words[i - 1].end);
      const std::string_view word = indexable.substr(words[i].begin, words[i].end - words[i].begin);
      if (hit[i]) {
        out += kHeadlineStart;
        out += word;
        out += kHeadlineStop;
      } else {
        out += word;
      }
    }
  }
  return out;
}

store::Snippet SnippetFromHeadline(std::string_view headline, std::string_view indexable,
                                   std::string_view original) {
  std::string joined;
  std::vector<std::pair<size_t, size_t>> marks;
  size_t search_from = 0;
  size_t start = 0;
  while (start <= headline.size()) {
    size_t end = headline.find(kHeadlineFragments, start);
    if (end == std::string_view::npos) end = headline.size();
    // The fragment without its markers, and where they were.
    std::string plain;
    std::vector<std::pair<size_t, size_t>> own;
    size_t open = 0;
    for (char ch : headline.substr(start, end - start)) {
      if (ch == kHeadlineStart) {
        open = plain.size();
      } else if (ch == kHeadlineStop) {
        own.emplace_back(open, plain.size());
      } else {
        plain += ch;
      }
    }
    // ts_headline copies the text it was given, so the fragment is a piece
    // of `indexable`, and at the same offsets of `original`.
    size_t at = indexable.find(plain, search_from);
    if (at == std::string_view::npos) at = indexable.find(plain);
    std::string piece = plain;
    if (at != std::string_view::npos && at + plain.size() <= original.size()) {
      piece = std::string(original.substr(at, plain.size()));
      search_from = at + plain.size();
    }
    if (!plain.empty()) {
      if (!joined.empty() || (at != std::string_view::npos && at > 0)) joined += " … ";
      for (const auto& [b, e] : own) marks.emplace_back(joined.size() + b, joined.size() + e);
      joined += piece;
      if (end == headline.size() && at != std::string_view::npos &&
          at + plain.size() < original.size()) {
        joined += " …";
      }
    }
    if (end == headline.size()) break;
    start = end + 1;
  }
  return OneLine(joined, marks);
}

}  // namespace sessiondb::postgres
