#include "store/sqlite/fts5_query.h"

namespace sessiondb::sqlite {
namespace {

// Empty for a phrase without words: FTS5 has no empty phrase.
std::string Quote(const store::TextPhrase& phrase) {
  std::string out = "\"";
  bool any = false;
  for (const std::string& word : phrase.words) {
    if (word.empty()) continue;
    if (any) out += ' ';
    any = true;
    // SplitWords makes words of word bytes only; a word from elsewhere may
    // hold a quote, which FTS5 reads as itself when doubled.
    for (char c : word) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  if (!any) return "";
  out += '"';
  if (phrase.prefix) out += '*';
  return out;
}

}  // namespace

std::string Fts5Expression(const store::TextQuery& query) {
  std::string positive;
  for (const std::vector<store::TextPhrase>& group : query.all_of) {
    std::string either;
    int phrases = 0;
    for (const store::TextPhrase& phrase : group) {
      std::string quoted = Quote(phrase);
      if (quoted.empty()) continue;
      if (phrases++ > 0) either += " OR ";
      either += quoted;
    }
    if (phrases == 0) return "";  // a group nothing can satisfy
    if (!positive.empty()) positive += " AND ";
    positive += phrases > 1 ? "(" + either + ")" : either;
  }
  if (positive.empty()) return "";
  std::string out = query.all_of.size() > 1 ? "(" + positive + ")" : positive;
  for (const store::TextPhrase& phrase : query.none_of) {
    std::string quoted = Quote(phrase);
    if (!quoted.empty()) out += " NOT " + quoted;
  }
  return out;
}

}  // namespace sessiondb::sqlite
