// The built-in embedder: feature hashing of word and character n-grams.
//
// The feature strings and their hash are part of the vector space named
// "hash-384-v1": changing either (the tokeniser, the prefixes, the weights,
// the hash) changes every stored vector and needs a new model name.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "search/embedder.h"
#include "search/fnv.h"

namespace sessiondb::search {
namespace {

// Weights per feature kind: whole words say most; bigrams add word order;
// trigrams match inflections ("parse"/"parsing") at a lower weight, since
// unrelated words share trigrams too.
constexpr float kUnigramWeight = 1.0f;
constexpr float kBigramWeight = 0.5f;
constexpr float kTrigramWeight = 0.5f;
// English function words carry little meaning but are in most texts: left
// at full weight, "the" makes unrelated sentences look alike.
constexpr float kStopWordFactor = 0.1f;

// Sorted for binary search.
constexpr std::array<std::string_view, 32> kStopWords = {
    "a",    "an",   "and",  "are", "as",  "at", "be",   "but",  "by",   "for", "from",
    "has",  "have", "i",    "in",  "is",  "it", "its",  "of",   "on",   "or",  "so",
    "that", "the",  "this", "to",  "was", "we", "were", "will", "with", "you"};

bool IsStopWord(std::string_view word) {
  return std::binary_search(kStopWords.begin(), kStopWords.end(), word);
}

// FNV-1a's low bits mix poorly for short keys; a splitmix64 finaliser spreads
// every input bit over the bucket and sign bits.
uint64_t Mix(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c >= 0x80;  // UTF-8 letters of other scripts stay inside words
}

// Lower-cased (ASCII) tokens of word bytes, in order.
std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  for (unsigned char c : text) {
    if (IsWordByte(c)) {
      current.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a')
                                             : static_cast<char>(c));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

std::vector<float> EmbedOne(std::string_view text) {
  std::vector<float> v(kHashEmbedderDims, 0.0f);
  const std::vector<std::string> tokens = Tokenize(text);
  // Feature string -> (weight of its kind, term frequency). Ordered so the
  // float sums run in one order on every machine.
  std::map<std::string, std::pair<float, int>> features;
  auto count = [&features](std::string key, float weight) {
    auto [it, inserted] = features.try_emplace(std::move(key), weight, 0);
    // A trigram of a stop word and of another word counts at the higher
    // weight, whichever comes first.
    it->second.first = std::max(it->second.first, weight);
    ++it->second.second;
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const bool stop = IsStopWord(tokens[i]);
    const float factor = stop ? kStopWordFactor : 1.0f;
    count("w:" + tokens[i], kUnigramWeight * factor);
    if (i + 1 < tokens.size()) {
      const bool both_stop = stop && IsStopWord(tokens[i + 1]);
      count("b:" + tokens[i] + " " + tokens[i + 1],
            kBigramWeight * (both_stop ? kStopWordFactor : 1.0f));
    }
    const std::string marked = "<" + tokens[i] + ">";
    for (size_t j = 0; j + 3 <= marked.size(); ++j) {
      count("t:" + marked.substr(j, 3), kTrigramWeight * factor);
    }
  }
  for (const auto& [key, weight_tf] : features) {
    const uint64_t h = Mix(Fnv1a64(key));
    const size_t bucket = static_cast<size_t>(h % kHashEmbedderDims);
    const float sign = (h >> 63) != 0 ? -1.0f : 1.0f;
    const float weight = weight_tf.first * (1.0f + std::log(static_cast<float>(weight_tf.second)));
    v[bucket] += sign * weight;
  }
  NormalizeInPlace(v);
  return v;
}

class HashEmbedder final : public Embedder {
 public:
  bool KnowsMeaning() const override { return false; }
  std::string Model() const override { return "hash-384-v1"; }

  Result<std::vector<std::vector<float>>> Embed(std::span<const std::string> texts) override {
    std::vector<std::vector<float>> out;
    out.reserve(texts.size());
    for (const std::string& text : texts) out.push_back(EmbedOne(text));
    return out;
  }
};

}  // namespace

std::unique_ptr<Embedder> MakeHashEmbedder() { return std::make_unique<HashEmbedder>(); }

}  // namespace sessiondb::search
