#include "search_quality.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "search/fusion.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int kFillerVocabulary = 5000;
constexpr int kFillerMessages = 3000;
constexpr int kAnswersPerTopic = 4;  // grade 2
constexpr int kTouchesPerTopic = 2;  // grade 1
constexpr int kNearMissesPerTopic = 3;
constexpr int kMessagesPerSession = 100;
constexpr int kPage = 10;

[[noreturn]] void Fail(const std::string& what) {
  std::cerr << "search quality: " << what << "\n";
  std::exit(1);
}

// A pronounceable pseudo-word per index, distinct for distinct indexes.
std::string PseudoWord(int i, const char* tail) {
  static const char* kSyllables[] = {"ka", "lo", "mi", "ru", "te", "vo", "shi", "da",
                                     "ne", "po", "gu", "ri", "sa", "zo", "be",  "fa"};
  std::string w;
  int n = i;
  do {
    w += kSyllables[n % 16];
    n /= 16;
  } while (n > 0);
  return w + tail;
}

std::string TopicWord(int topic, int which) {
  return PseudoWord(topic * 2 + which, which == 0 ? "quor" : "vesk");
}

// The misspellings and inflections an embedder of character n-grams finds
// close to `word`, none of them the word itself.
std::string NearMiss(const std::string& word, int variant) {
  switch (variant % 3) {
    case 0:
      return word + "s";
    case 1:
      return word + "ing";
    default: {
      std::string w = word;
      std::swap(w[1], w[2]);  // a transposition typo
      return w == word ? word + "x" : w;
    }
  }
}

struct Doc {
  std::string text;
  int topic = -1;
  int grade = 0;           // for the topic's two-word query
  int one_word_grade = 0;  // for its one-word query (the first word)
};

class Labelled {
 public:
  Labelled(int topics) : topics_(topics), rng_(20261127) {}

  std::vector<Doc> Build() {
    std::vector<Doc> docs;
    for (int t = 0; t < topics_; ++t) {
      const std::string a = TopicWord(t, 0), b = TopicWord(t, 1);
      for (int i = 0; i < kAnswersPerTopic; ++i) docs.push_back({Mix({a, b}), t, 2, 2});
      for (int i = 0; i < kTouchesPerTopic; ++i) {
        docs.push_back({Mix({i == 0 ? a : b}), t, 1, i == 0 ? 1 : 0});
      }
      for (int i = 0; i < kNearMissesPerTopic; ++i) {
        docs.push_back({Mix({NearMiss(a, i), NearMiss(b, i + 1), NearMiss(a, i + 2)}), t, 0, 0});
      }
    }
    for (int i = 0; i < kFillerMessages; ++i) docs.push_back({Mix({}), -1, 0});
    std::shuffle(docs.begin(), docs.end(), rng_);
    return docs;
  }

 private:
  // 12 to 30 filler words (Zipf-like) with `planted` at random places.
  std::string Mix(const std::vector<std::string>& planted) {
    std::uniform_int_distribution<int> length(12, 30);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<std::string> words;
    const int n = length(rng_);
    for (int i = 0; i < n; ++i) {
      const int rank = static_cast<int>(std::pow(kFillerVocabulary, u(rng_)));  // ~1/rank
      words.push_back(PseudoWord(100000 + rank, "a"));
    }
    for (const std::string& p : planted) {
      std::uniform_int_distribution<size_t> at(0, words.size());
      words.insert(words.begin() + static_cast<std::ptrdiff_t>(at(rng_)), p);
    }
    std::string text;
    for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
    return text;
  }

  int topics_;
  std::mt19937 rng_;
};

using Place = std::pair<std::string, int64_t>;  // session, seq

struct Scores {
  double ndcg = 0;
  double mrr = 0;
};

// nDCG@10 (gain 2^grade - 1) and reciprocal rank of the first graded hit.
Scores Score(const std::vector<Place>& ranked, const std::map<Place, int>& grades) {
  std::vector<int> ideal;
  for (const auto& [place, grade] : grades) ideal.push_back(grade);
  std::sort(ideal.rbegin(), ideal.rend());
  double dcg = 0, idcg = 0;
  Scores s;
  for (size_t i = 0; i < static_cast<size_t>(kPage); ++i) {
    const double discount = 1.0 / std::log2(static_cast<double>(i) + 2);
    if (i < ideal.size()) idcg += (std::pow(2, ideal[i]) - 1) * discount;
    if (i >= ranked.size()) continue;
    auto it = grades.find(ranked[i]);
    const int grade = it == grades.end() ? 0 : it->second;
    dcg += (std::pow(2, grade) - 1) * discount;
    if (grade > 0 && s.mrr == 0) s.mrr = 1.0 / static_cast<double>(i + 1);
  }
  s.ndcg = idcg > 0 ? dcg / idcg : 0;
  return s;
}

std::vector<Place> Places(const SearchResults& r) {
  std::vector<Place> out;
  for (const SearchHit& h : r.hits) out.emplace_back(h.session_id, h.seq);
  return out;
}

// Hybrid fused by rank from the two lists, as SearchIndex fuses them for a
// model of meaning: what the built-in embedder's results were before.
std::vector<Place> FusedByRank(const SearchResults& keyword, const SearchResults& vector) {
  std::map<Place, int64_t> ids;
  std::vector<Place> by_id;
  auto id = [&](const Place& p) {
    auto [it, added] = ids.emplace(p, static_cast<int64_t>(by_id.size()));
    if (added) by_id.push_back(p);
    return it->second;
  };
  std::vector<search::ListEntry> k, v;
  for (const SearchHit& h : keyword.hits) k.push_back({id({h.session_id, h.seq}), h.keyword_score});
  for (const SearchHit& h : vector.hits) v.push_back({id({h.session_id, h.seq}), h.vector_score});
  std::vector<Place> out;
  for (const search::FusedEntry& f : search::FuseRankings(k, v)) out.push_back(by_id[f.doc_id]);
  return out;
}

// One labelled query: its text and the grade of each message that answers it.
struct Query {
  std::string text;
  std::map<Place, int> grades;
};

void Measure(Store& store, const std::vector<Query>& labels, bool configured,
             const std::string& backend) {
  SearchOptions options;
  options.embedder.from_environment = configured;
  auto opened = SearchIndex::Open(store, options);
  if (!opened) Fail("open the index: " + opened.error().message());
  SearchIndex& index = **opened;
  auto embedded = index.Embed();
  if (!embedded) Fail("embed: " + embedded.error().message());
  const std::string model = embedded->model;

  std::map<std::string, Scores> sums;
  for (const Query& labelled : labels) {
    const std::string& query = labelled.text;
    std::map<std::string, SearchResults> by_mode;
    for (auto [name, mode] :
         {std::pair{"keyword", SearchMode::kKeyword}, std::pair{"vector", SearchMode::kVector},
          std::pair{"hybrid", SearchMode::kHybrid}}) {
      // The lists fused by rank below need more than a page of each.
      auto r = index.Search({.query = query, .mode = mode, .limit = 100});
      if (!r) Fail(query + ": " + r.error().message());
      by_mode[name] = std::move(*r);
    }
    for (const auto& [name, results] : by_mode) {
      Scores s = Score(Places(results), labelled.grades);
      sums[name].ndcg += s.ndcg;
      sums[name].mrr += s.mrr;
    }
    Scores fused = Score(FusedByRank(by_mode["keyword"], by_mode["vector"]), labelled.grades);
    sums["hybrid_by_rank"].ndcg += fused.ndcg;
    sums["hybrid_by_rank"].mrr += fused.mrr;
  }
  const double n = static_cast<double>(labels.size());
  for (const auto& [name, s] : sums) {
    std::cout << json{{"measure", "search_quality"},
                      {"backend", backend},
                      {"embedder", model},
                      {"mode", name},
                      {"queries", labels.size()},
                      {"ndcg_at_10", s.ndcg / n},
                      {"mrr", s.mrr / n}}
                     .dump()
              << std::endl;
  }
}

}  // namespace

void MeasureSearchQuality(const fs::path& dir, int topics, const std::string& location) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto opened = Store::Open(location.empty() ? dir.string() : location,
                            {.durability = Durability::kProcessCrashSafe});
  if (!opened) Fail("open the store: " + opened.error().message());
  Store& store = **opened;
  const std::vector<Doc> docs = Labelled(topics).Build();
  // Per topic, its two words, then its first word alone.
  std::vector<Query> labels(static_cast<size_t>(topics) * 2);
  for (int t = 0; t < topics; ++t) {
    labels[static_cast<size_t>(t) * 2].text = TopicWord(t, 0) + " " + TopicWord(t, 1);
    labels[static_cast<size_t>(t) * 2 + 1].text = TopicWord(t, 0);
  }
  std::vector<Message> batch;
  std::string session;
  auto flush = [&] {
    if (batch.empty()) return;
    auto appended = store.AppendBatch(session, batch);
    if (!appended) Fail("append: " + appended.error().message());
    batch.clear();
  };
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i % kMessagesPerSession == 0) {
      flush();
      auto created = store.CreateSession({});
      if (!created) Fail("create a session: " + created.error().message());
      session = created->id;
    }
    if (docs[i].topic >= 0) {
      const Place place = {session, static_cast<int64_t>(i % kMessagesPerSession) + 1};
      const size_t two_words = static_cast<size_t>(docs[i].topic) * 2;
      if (docs[i].grade > 0) labels[two_words].grades[place] = docs[i].grade;
      if (docs[i].one_word_grade > 0) labels[two_words + 1].grades[place] = docs[i].one_word_grade;
    }
    Message m;
    m.role = Role::kUser;
    m.parts = {Part::Text(docs[i].text)};
    batch.push_back(std::move(m));
  }
  flush();
  const std::string backend(StoreKindName(StoreKindOf(location)));
  Measure(store, labels, /*configured=*/false, backend);
  const char* url = std::getenv("SESSIONDB_EMBED_URL");
  if (url != nullptr && *url != '\0') Measure(store, labels, /*configured=*/true, backend);
}

}  // namespace sessiondb::bench
