// The query syntax builds a backend-neutral TextQuery; these tests assert
// its structure and, through the embedded backend's renderer, the FTS5
// expression SearchResults::match_expression shows.
#include "search/query_syntax.h"

#include <gtest/gtest.h>

#include "store/sqlite/fts5_query.h"

namespace sessiondb::search {
namespace {

// The FTS5 expression `text` becomes on an embedded store.
std::string Fts5(std::string_view text) {
  return sqlite::Fts5Expression(ParseUserQuery(text).query);
}

// A phrase's words, for comparing structures in one line.
std::vector<std::vector<std::vector<std::string>>> Groups(const store::TextQuery& q) {
  std::vector<std::vector<std::vector<std::string>>> out;
  for (const auto& group : q.all_of) {
    out.emplace_back();
    for (const store::TextPhrase& p : group) out.back().push_back(p.words);
  }
  return out;
}

TEST(QuerySyntax, WordsAreQuotedAndAnded) {
  ParsedQuery q = ParseUserQuery("Token  limit");
  EXPECT_EQ(Groups(q.query),
            (std::vector<std::vector<std::vector<std::string>>>{{{"token"}}, {{"limit"}}}));
  EXPECT_TRUE(q.query.none_of.empty());
  EXPECT_EQ(sqlite::Fts5Expression(q.query), "(\"token\" AND \"limit\")");
  EXPECT_EQ(q.terms, (std::vector<std::string>{"token", "limit"}));
  EXPECT_TRUE(q.note.empty());
}

TEST(QuerySyntax, PhrasesOrNotAndPrefixHaveTheirStructure) {
  ParsedQuery phrase = ParseUserQuery("\"token limit\"");
  EXPECT_EQ(Groups(phrase.query),
            (std::vector<std::vector<std::vector<std::string>>>{{{"token", "limit"}}}));
  EXPECT_FALSE(phrase.query.all_of[0][0].prefix);
  ParsedQuery either = ParseUserQuery("x y OR z");
  EXPECT_EQ(Groups(either.query),
            (std::vector<std::vector<std::vector<std::string>>>{{{"x"}}, {{"y"}, {"z"}}}));
  ParsedQuery excluded = ParseUserQuery("cat -dog NOT \"big fish\"");
  EXPECT_EQ(Groups(excluded.query),
            (std::vector<std::vector<std::vector<std::string>>>{{{"cat"}}}));
  ASSERT_EQ(excluded.query.none_of.size(), 2u);
  EXPECT_EQ(excluded.query.none_of[0].words, (std::vector<std::string>{"dog"}));
  EXPECT_EQ(excluded.query.none_of[1].words, (std::vector<std::string>{"big", "fish"}));
  EXPECT_EQ(excluded.terms, (std::vector<std::string>{"cat"}));
  ParsedQuery prefix = ParseUserQuery("pars* a*b*");
  ASSERT_EQ(prefix.query.all_of.size(), 2u);
  EXPECT_TRUE(prefix.query.all_of[0][0].prefix);
  EXPECT_FALSE(prefix.query.all_of[1][0].prefix);  // two words: a phrase, no prefix
}

TEST(QuerySyntax, PhrasesOrNotAndPrefixRenderAsFts5) {
  EXPECT_EQ(Fts5("\"token limit\""), "\"token limit\"");
  EXPECT_EQ(Fts5("cat OR dog fish"), "((\"cat\" OR \"dog\") AND \"fish\")");
  // A word before an OR group: FTS5 refuses "x" ("y" OR "z") without the AND.
  EXPECT_EQ(Fts5("x y OR z"), "(\"x\" AND (\"y\" OR \"z\"))");
  EXPECT_EQ(Fts5("cat -dog"), "\"cat\" NOT \"dog\"");
  EXPECT_EQ(Fts5("cat NOT dog"), "\"cat\" NOT \"dog\"");
  EXPECT_EQ(Fts5("pars*"), "\"pars\"*");
}

TEST(QuerySyntax, CodeBecomesAPhraseOfItsWords) {
  EXPECT_EQ(Fts5("foo(bar)"), "\"foo bar\"");
  EXPECT_EQ(Fts5("a->b"), "\"a b\"");
  EXPECT_EQ(Fts5("parse_config_file"), "\"parse_config_file\"");
  EXPECT_EQ(Fts5("std::vector<int>"), "\"std vector int\"");
}

TEST(QuerySyntax, HostileInputNeverProducesOperatorsOfItsOwn) {
  // Whatever comes in, the expression holds only quoted words and our own
  // operators: no column filters, NEAR, carets or braces reach FTS5.
  for (const char* q : {"\"unterminated phrase", "NEAR(a b)", "col:term", "^start", "{a b} : c",
                        "a + b", "x\"y\"z", "'; DROP TABLE events; --", "\\\\", "OR", "AND OR NOT",
                        "-", "*", "***", "a*b*", "\"\"\"\""}) {
    const std::string m = Fts5(q);
    for (char c : {':', '^', '{', '}', '+', '(', ';', '\\', '\''}) {
      // Parentheses are ours only around groups: "(" directly before a quote.
      if (c == '(') {
        for (size_t i = 0; i < m.size(); ++i) {
          if (m[i] == '(') {
            EXPECT_TRUE(i + 1 < m.size() && (m[i + 1] == '"' || m[i + 1] == '('))
                << q << " -> " << m;
          }
        }
        continue;
      }
      EXPECT_EQ(m.find(c), std::string::npos) << q << " -> " << m;
    }
  }
}

// A question as a person types it finds what it asks about: its stop words
// ("how", "did", "I", "the") are not required, nor highlighted.
TEST(QuerySyntax, AQuestionDoesNotRequireItsStopWords) {
  using Structure = std::vector<std::vector<std::vector<std::string>>>;
  ParsedQuery q = ParseUserQuery("how did I fix the docker cache");
  EXPECT_EQ(Groups(q.query), (Structure{{{"fix"}}, {{"docker"}}, {{"cache"}}}));
  EXPECT_EQ(q.terms, (std::vector<std::string>{"fix", "docker", "cache"}));
  // A question mark makes one too; code in it stays a phrase of its words.
  EXPECT_EQ(Groups(ParseUserQuery("the build of foo.bar fails in CI?").query),
            (Structure{{{"build"}}, {{"foo", "bar"}}, {{"fails"}}, {{"ci"}}}));
  // A question of stop words alone keeps them: something must match.
  EXPECT_EQ(Groups(ParseUserQuery("what is it").query),
            (Structure{{{"what"}}, {{"is"}}, {{"it"}}}));
}

// Anything else keeps every word required: a statement, a query with quotes,
// OR, exclusions or prefixes says exactly what it wants.
TEST(QuerySyntax, OnlyAPlainQuestionDropsStopWords) {
  using Structure = std::vector<std::vector<std::vector<std::string>>>;
  EXPECT_EQ(Groups(ParseUserQuery("fix the docker cache").query),
            (Structure{{{"fix"}}, {{"the"}}, {{"docker"}}, {{"cache"}}}));
  EXPECT_EQ(Groups(ParseUserQuery("how \"to the\" cache").query),
            (Structure{{{"how"}}, {{"to", "the"}}, {{"cache"}}}));
  EXPECT_EQ(Groups(ParseUserQuery("how did it OR cache").query),
            (Structure{{{"how"}}, {{"did"}}, {{"it"}, {"cache"}}}));
  EXPECT_EQ(Groups(ParseUserQuery("why the cach*").query),
            (Structure{{{"why"}}, {{"the"}}, {{"cach"}}}));
  ParsedQuery excluded = ParseUserQuery("how is the cache -docker");
  EXPECT_EQ(Groups(excluded.query), (Structure{{{"how"}}, {{"is"}}, {{"the"}}, {{"cache"}}}));
  EXPECT_EQ(excluded.query.none_of.size(), 1u);
}

TEST(QuerySyntax, NothingToSearchForGivesANoteNotAnError) {
  ParsedQuery punct = ParseUserQuery("-> () ;;");
  EXPECT_TRUE(punct.query.empty());
  EXPECT_EQ(sqlite::Fts5Expression(punct.query), "");
  EXPECT_EQ(punct.note, "the query has no words to search for");
  ParsedQuery only_not = ParseUserQuery("-cat");
  EXPECT_TRUE(only_not.query.empty());
  EXPECT_TRUE(only_not.query.none_of.empty());
  EXPECT_TRUE(only_not.terms.empty());
  EXPECT_EQ(sqlite::Fts5Expression(only_not.query), "");
  EXPECT_EQ(only_not.note, "the query only excludes words; add a word to look for");
}

TEST(QuerySyntax, AnyOfWordsIsOneGroupOfOneWordPhrases) {
  store::TextQuery any = AnyOfWords({"alpha", "", "beta"});
  EXPECT_EQ(Groups(any),
            (std::vector<std::vector<std::vector<std::string>>>{{{"alpha"}, {"beta"}}}));
  EXPECT_TRUE(any.none_of.empty());
  // One group of several phrases is parenthesized, as a typed "alpha OR beta"
  // always was (before, AnyOfWords rendered it without the parentheses).
  EXPECT_EQ(sqlite::Fts5Expression(any), "(\"alpha\" OR \"beta\")");
  EXPECT_EQ(sqlite::Fts5Expression(AnyOfWords({"alpha"})), "\"alpha\"");
  EXPECT_TRUE(AnyOfWords({}).empty());
  EXPECT_TRUE(AnyOfWords({""}).empty());
}

TEST(QuerySyntax, HoldsAnyPhraseSplitsAsTheIndexDoes) {
  const store::TextQuery q = ParseUserQuery("tests -builds NOT \"red light\" -deploy*").query;
  ASSERT_EQ(q.none_of.size(), 3u);
  EXPECT_TRUE(HoldsAnyPhrase("Nightly BUILDS are slow", q.none_of));
  EXPECT_FALSE(HoldsAnyPhrase("the build is slow", q.none_of));  // a word, not a prefix
  EXPECT_TRUE(HoldsAnyPhrase("stopped at a red-light", q.none_of));
  EXPECT_FALSE(HoldsAnyPhrase("red lights and a light red", q.none_of));
  EXPECT_TRUE(HoldsAnyPhrase("we deployed it", q.none_of));  // deploy* is a prefix
  EXPECT_FALSE(HoldsAnyPhrase("", q.none_of));
  EXPECT_FALSE(HoldsAnyPhrase("anything at all", {}));
}

}  // namespace
}  // namespace sessiondb::search
