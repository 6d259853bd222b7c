// Ranking quality of keyword, vector and hybrid search on a labelled set
// (issue 20, item 12): a generated corpus of topics, each with messages that
// answer it (both of its words: grade 2), that touch it (one word: grade 1)
// and near misses (the words misspelt or inflected: grade 0, what an
// embedder of spelling finds), among filler; two queries a topic: its two
// words, and its first word alone. Prints nDCG@10 and MRR per mode, for the built-in embedder and,
// when SESSIONDB_EMBED_URL names one, the configured embedder, and hybrid fused by rank (the rule a
// model of meaning gets) beside the rule each embedder gets.
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
