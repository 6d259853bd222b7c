// Ranking quality of keyword, vector and hybrid search on a labelled set
// (issue 20, item 12; query classes: issue 38, item 5): a generated corpus of
// topics, each with messages that answer it (both of its words), that touch
// it (one word) and that answer it in other forms (both words inflected:
// -s, -ing, -ed), among filler. A message's grade for a query is the topic's,
// whatever the query's spelling: 2 for both words in any form, 1 for one of
// the words the query is about. Five classes of queries, two a topic each:
//   exact       the topic's words ("a b"), its first word alone
//   typo        a word misspelt by one edit (dropped, replaced, doubled)
//   inflection  the words inflected ("a-ing b-ing", "a-ed")
//   question    a wh-word and stop words around the words, with or without
//               a verb no message holds ("how did I fix the a b")
//   paraphrase  a word replaced by a synonym nothing in the corpus spells
//               like it (an embedder of spelling cannot know it)
// Prints one JSON line per class (and "all") and mode: nDCG@10, MRR, and how
// many queries the mode ranks worse than keyword; modes keyword, vector,
// hybrid, and hybrid fused by rank (the rule a model of meaning gets), for
// the built-in embedder and, when SESSIONDB_EMBED_URL names one, the
// configured embedder.
#pragma once

#include <filesystem>
#include <string>

namespace sessiondb::bench {

// Builds the corpus in a store under `dir` (replaced), or at `location` when
// set (a fresh PostgreSQL namespace), measures, prints one JSON object per
// measurement on stdout.
void MeasureSearchQuality(const std::filesystem::path& dir, int topics,
                          const std::string& location = "");

}  // namespace sessiondb::bench
