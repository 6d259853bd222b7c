#include "core/prefix_prefilter.h"

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sessiondb {
namespace {

// Prefixes like the secret scan's: more first bytes than buckets, and first
// bytes whose nibbles combine into others.
const std::vector<std::string> kPrefixes = {"AKI", "Sha", "ghp", "npm", "pyp",         "sk-", "rk_",
                                            "xox", "hoo", "dis", "---", "eyJ",         "://", "Pas",
                                            "pas", "pAs", "sec", "SEC", "\xe2\x80\x9c"};

PrefixPrefilter Filter() {
  PrefixPrefilter f;
  for (const std::string& p : kPrefixes) {
    f.Add(static_cast<unsigned char>(p[0]), static_cast<unsigned char>(p[1]),
          static_cast<unsigned char>(p[2]));
  }
  return f;
}

std::string RandomText(std::mt19937& rng, size_t n) {
  std::string t(n, '\0');
  for (char& c : t) c = static_cast<char>(rng() & 0xff);
  return t;
}

// Every candidate position of `text` by walking Next.
std::set<size_t> Candidates(const PrefixPrefilter& f, const std::string& text) {
  std::set<size_t> out;
  for (size_t i = f.Next(text, 0); i < text.size(); i = f.Next(text, i + 1)) out.insert(i);
  return out;
}

TEST(PrefixPrefilter, EveryAddedPrefixIsACandidateWhereverItStands) {
  const PrefixPrefilter f = Filter();
  std::mt19937 rng(7);
  // Lengths around the block size, so prefixes fall in whole blocks, across
  // a block's last bytes and in the tail the blocks leave.
  for (size_t n = 3; n < 70; ++n) {
    for (size_t at = 0; at + 2 < n; ++at) {
      std::string text = RandomText(rng, n);
      text.replace(at, 3, kPrefixes[rng() % kPrefixes.size()]);
      EXPECT_TRUE(Candidates(f, text).contains(at)) << "n " << n << " at " << at;
    }
  }
}

TEST(PrefixPrefilter, SixteenAtATimeAgreesWithOneAtATime) {
  const PrefixPrefilter f = Filter();
  std::mt19937 rng(11);
  for (int round = 0; round < 400; ++round) {
    const std::string text = RandomText(rng, rng() % 200);
    for (size_t from = 0; from <= text.size() + 1; ++from) {
      ASSERT_EQ(f.Next(text, from), f.NextScalar(text, from))
          << "round " << round << " from " << from << " of " << text.size();
    }
  }
}

TEST(PrefixPrefilter, TextWithoutThePrefixesBytesHasNoCandidate) {
  const PrefixPrefilter f = Filter();
  // Neither 'z' nor a digit begins a prefix (nor do their nibbles).
  const std::string text(1000, 'z');
  EXPECT_EQ(f.Next(text, 0), text.size());
  std::string digits;
  for (int i = 0; i < 500; ++i) digits += static_cast<char>('0' + i % 10);
  EXPECT_EQ(f.Next(digits, 0), digits.size());
  // Nor ordinary prose, whose bytes combine into many of the buckets'
  // nibbles (the candidates the loop checks exactly and passes over).
  std::string prose;
  while (prose.size() < 4000) prose += "the quick brown fox jumps over the lazy dog, twice. ";
  EXPECT_TRUE(Candidates(f, prose).empty());
}

TEST(PrefixPrefilter, OnlyTheAddedPrefixesAreFound) {
  const PrefixPrefilter f = Filter();
  std::mt19937 rng(13);
  // Random bytes with prefixes planted, and bytes drawn from the prefixes'
  // own, which the nibble tables take for candidates far more often.
  std::string alphabet;
  for (const std::string& p : kPrefixes) alphabet += p;
  for (int round = 0; round < 300; ++round) {
    std::string text = RandomText(rng, 40 + rng() % 200);
    if (round % 2 == 1) {
      for (char& c : text) c = alphabet[rng() % alphabet.size()];
    }
    for (int k = 0; k < 3; ++k) {
      text.replace(rng() % (text.size() - 3), 3, kPrefixes[rng() % kPrefixes.size()]);
    }
    std::set<size_t> expected;
    for (size_t i = 0; i + 2 < text.size(); ++i) {
      if (std::find(kPrefixes.begin(), kPrefixes.end(), text.substr(i, 3)) != kPrefixes.end()) {
        expected.insert(i);
      }
    }
    ASSERT_EQ(Candidates(f, text), expected) << "round " << round;
  }
}

TEST(PrefixPrefilter, ShortAndEmptyTextsHaveNoCandidateBeyondTheirEnd) {
  const PrefixPrefilter f = Filter();
  EXPECT_EQ(f.Next("", 0), 0u);
  EXPECT_EQ(f.Next("AK", 0), 2u);
  EXPECT_EQ(f.Next("AKI", 0), 0u);
  EXPECT_EQ(f.Next("AKI", 1), 3u);
  EXPECT_EQ(f.Next("AKI", 5), 3u);
}

}  // namespace
}  // namespace sessiondb
