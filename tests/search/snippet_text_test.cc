// PlainSnippet: Markdown markers out of a search snippet, its highlights moved
// with the text, and never a highlight beside a leftover `*` (which a face's
// own ** would double).
#include "search/snippet_text.h"

#include <gtest/gtest.h>

namespace sessiondb::search {
namespace {

using Ranges = std::vector<std::pair<size_t, size_t>>;

// The highlighted words, for messages that read.
std::vector<std::string> Marked(const store::Snippet& s) {
  std::vector<std::string> out;
  for (const auto& [b, e] : s.highlights) out.push_back(s.text.substr(b, e - b));
  return out;
}

TEST(PlainSnippet, BoldAroundAMatchGoesAndTheMatchStaysHighlighted) {
  const store::Snippet in{"the **parser** fails", {{6, 12}}};
  const store::Snippet out = PlainSnippet(in);
  EXPECT_EQ(out.text, "the parser fails");
  EXPECT_EQ(out.highlights, (Ranges{{4, 10}}));
}

TEST(PlainSnippet, EmphasisCutInHalfBySnippetEdgesLeavesNoAsterisksBesideAMatch) {
  // FTS5 cut the snippet inside **very important**.
  const store::Snippet in{"…important** thing", {{3, 12}}};
  const store::Snippet out = PlainSnippet(in);
  EXPECT_EQ(out.text, "…important thing");
  EXPECT_EQ(Marked(out), (std::vector<std::string>{"important"}));
  const store::Snippet single{"a *word", {{3, 7}}};
  EXPECT_EQ(PlainSnippet(single).text, "a word");
}

TEST(PlainSnippet, CodeLinksHeadingsAndStrikethroughBecomeText) {
  const std::string text =
      "## Setup run `make **all**` then [the docs](https://x.example/a) ~~old~~";
  const store::Snippet out = PlainSnippet({text,
                                           {{text.find("docs"), text.find("docs") + 4},
                                            {text.find("x.example"), text.find("x.example") + 9}}});
  EXPECT_EQ(out.text, "Setup run make **all** then the docs old");
  // The match inside the URL went with it.
  EXPECT_EQ(Marked(out), (std::vector<std::string>{"docs"}));
}

TEST(PlainSnippet, TextThatOnlyLooksLikeMarkersStays) {
  for (const std::string text :
       {"2 * 3 = 6", "snake_case_name here", "a ~ b", "issue #12", "price: $5"}) {
    EXPECT_EQ(PlainSnippet({text, {}}).text, text);
  }
  // A snake_case match keeps its underscores.
  const store::Snippet out = PlainSnippet({"my_word", {{3, 7}}});
  EXPECT_EQ(out.text, "my_word");
  EXPECT_EQ(Marked(out), (std::vector<std::string>{"word"}));
}

TEST(PlainSnippet, RangesThatTouchAfterwardsMergeAndBadRangesAreDropped) {
  const store::Snippet out = PlainSnippet({"**ab**cd", {{2, 4}, {6, 8}, {5, 99}, {3, 3}}});
  EXPECT_EQ(out.text, "abcd");
  EXPECT_EQ(out.highlights, (Ranges{{0, 4}}));
}

TEST(PlainSnippet, MultiByteTextKeepsItsBytes) {
  const std::string text = "café **crème** brûlée";
  const size_t b = text.find("crème");
  const store::Snippet out = PlainSnippet({text, {{b, b + std::string("crème").size()}}});
  EXPECT_EQ(out.text, "café crème brûlée");
  EXPECT_EQ(Marked(out), (std::vector<std::string>{"crème"}));
}

}  // namespace
}  // namespace sessiondb::search
