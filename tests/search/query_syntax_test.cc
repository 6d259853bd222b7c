#include "search/query_syntax.h"

#include <gtest/gtest.h>

namespace sessiondb::search {
namespace {

TEST(QuerySyntax, WordsAreQuotedAndAnded) {
  ParsedQuery q = ParseUserQuery("Token  limit");
  EXPECT_EQ(q.match, "(\"token\" AND \"limit\")");
  EXPECT_EQ(q.terms, (std::vector<std::string>{"token", "limit"}));
  EXPECT_TRUE(q.note.empty());
}

TEST(QuerySyntax, PhrasesOrNotAndPrefix) {
  EXPECT_EQ(ParseUserQuery("\"token limit\"").match, "\"token limit\"");
  EXPECT_EQ(ParseUserQuery("cat OR dog fish").match, "((\"cat\" OR \"dog\") AND \"fish\")");
  // A word before an OR group: FTS5 refuses "x" ("y" OR "z") without the AND.
  EXPECT_EQ(ParseUserQuery("x y OR z").match, "(\"x\" AND (\"y\" OR \"z\"))");
  EXPECT_EQ(ParseUserQuery("cat -dog").match, "\"cat\" NOT \"dog\"");
  EXPECT_EQ(ParseUserQuery("cat NOT dog").match, "\"cat\" NOT \"dog\"");
  EXPECT_EQ(ParseUserQuery("pars*").match, "\"pars\"*");
}

TEST(QuerySyntax, CodeBecomesAPhraseOfItsWords) {
  EXPECT_EQ(ParseUserQuery("foo(bar)").match, "\"foo bar\"");
  EXPECT_EQ(ParseUserQuery("a->b").match, "\"a b\"");
  EXPECT_EQ(ParseUserQuery("parse_config_file").match, "\"parse_config_file\"");
  EXPECT_EQ(ParseUserQuery("std::vector<int>").match, "\"std vector int\"");
}

TEST(QuerySyntax, HostileInputNeverProducesOperatorsOfItsOwn) {
  // Whatever comes in, the expression holds only quoted words and our own
  // operators: no column filters, NEAR, carets or braces reach FTS5.
  for (const char* q : {"\"unterminated phrase", "NEAR(a b)", "col:term", "^start", "{a b} : c",
                        "a + b", "x\"y\"z", "'; DROP TABLE events; --", "\\\\", "OR", "AND OR NOT",
                        "-", "*", "***", "a*b*", "\"\"\"\""}) {
    ParsedQuery p = ParseUserQuery(q);
    for (char c : {':', '^', '{', '}', '+', '(', ';', '\\', '\''}) {
      std::string m = p.match;
      // Parentheses are ours only around groups: "(" directly before a quote.
      if (c == '(') {
        for (size_t i = 0; i < m.size(); ++i) {
          if (m[i] == '(') EXPECT_TRUE(i + 1 < m.size() && (m[i + 1] == '"' || m[i + 1] == '('))
              << q << " -> " << m;
        }
        continue;
      }
      EXPECT_EQ(m.find(c), std::string::npos) << q << " -> " << m;
    }
  }
}

TEST(QuerySyntax, NothingToSearchForGivesANoteNotAnError) {
  ParsedQuery punct = ParseUserQuery("-> () ;;");
  EXPECT_TRUE(punct.match.empty());
  EXPECT_EQ(punct.note, "the query has no words to search for");
  ParsedQuery only_not = ParseUserQuery("-cat");
  EXPECT_TRUE(only_not.match.empty());
  EXPECT_EQ(only_not.note, "the query only excludes words; add a word to look for");
}

TEST(QuerySyntax, AnyOfWords) {
  EXPECT_EQ(AnyOfWords({"alpha", "beta"}), "\"alpha\" OR \"beta\"");
  EXPECT_EQ(AnyOfWords({}), "");
}

}  // namespace
}  // namespace sessiondb::search
