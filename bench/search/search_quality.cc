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
constexpr int kAnswersPerTopic = 4;
constexpr int kInflectedPerTopic = 3;
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

// An English inflection of `word` (variant 0, 1, 2: -s, -ing, -ed), which a
// stemmer takes back to `word` (the pseudo-words end in a consonant after a
// vowel, so Porter's and Snowball's rules strip the suffix alone).
std::string Inflect(const std::string& word, int variant) {
  static const char* kSuffixes[] = {"s", "ing", "ed"};
  return word + kSuffixes[variant % 3];
}

// `word` misspelt by one edit (variant 0, 1, 2: a letter dropped, a letter
// replaced, a letter doubled), none of them a word of the corpus: topic
// words end in "quor" or "vesk", fillers in "a".
std::string Typo(const std::string& word, int variant) {
  std::string w = word;
  const size_t n = w.size();
  switch (variant % 3) {
    case 0:
      w.erase(n - 2, 1);  // kaloquor -> kaloqur
      break;
    case 1:
      w[n - 1] = w[n - 1] == 'r' ? 't' : 'j';  // kaloquor -> kaloquot
      break;
    default:
      w.insert(n - 2, 1, w[n - 2]);  // kaloquor -> kaloquoor
  }
  return w;
}

// A word of the same meaning as topic word `which` of `topic` in the corpus's
// made-up language, spelt with other syllables: nothing in the corpus holds
// it, and an embedder of spelling sees no likeness (a model of meaning would).
std::string Synonym(int topic, int which) {
  return PseudoWord(50'000 + topic * 2 + which, which == 0 ? "trel" : "gonz");
}

struct Doc {
  std::string text;
  int topic = -1;
  bool has_a = false;  // holds the topic's first word, as it is or inflected
  bool has_b = false;  // and its second
};

// Per topic (words a and b): 4 answers holding both words, 2 touches holding
// one, 3 messages holding both inflected (a's -s with b's -ing, and so on);
// then filler.
class Labelled {
 public:
  Labelled(int topics) : topics_(topics), rng_(20261127) {}

  std::vector<Doc> Build() {
    std::vector<Doc> docs;
    for (int t = 0; t < topics_; ++t) {
      const std::string a = TopicWord(t, 0), b = TopicWord(t, 1);
      for (int i = 0; i < kAnswersPerTopic; ++i) docs.push_back({Mix({a, b}), t, true, true});
      docs.push_back({Mix({a}), t, true, false});
      docs.push_back({Mix({b}), t, false, true});
      for (int i = 0; i < kInflectedPerTopic; ++i) {
        docs.push_back({Mix({Inflect(a, i), Inflect(b, i + 1)}), t, true, true});
      }
    }
    for (int i = 0; i < kFillerMessages; ++i) docs.push_back({Mix({}), -1});
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

// The query classes, each with its own queries of every topic.
constexpr const char* kClasses[] = {"exact", "typo", "inflection", "question", "paraphrase"};

// One labelled query: its class, its text, the topic words it is about, and
// the grade of each message that answers it.
struct Query {
  std::string query_class;
  std::string text;
  int topic = 0;
  bool about_a = false;
  bool about_b = false;
  std::map<Place, int> grades;
};

// The queries of topic `t` (words a and b), two a class:
//   exact       "a b", "a" (the set's queries before the classes)
//   typo        "a b" with a misspelt by one edit; b alone, misspelt
//   inflection  "a-ing b-ing" (no message holds that pair as it is spelt),
//               "a-ed" (one message holds it as it is spelt)
//   question    a wh-word and stop words around "a b"; then a question with
//               a verb no message holds ("how did I fix the a b")
//   paraphrase  "a b" with a's synonym; with b's
std::vector<Query> QueriesOf(int t) {
  const std::string a = TopicWord(t, 0), b = TopicWord(t, 1);
  static const char* kStopWordQuestions[] = {"how do I {a} the {b}", "what was the {a} {b}?",
                                             "where is the {a} {b}"};
  static const char* kVerbQuestions[] = {"how did I fix the {a} {b}", "why did the {a} {b} fail",
                                         "when did we change the {a} {b}?"};
  auto fill = [&](std::string text) {
    text.replace(text.find("{a}"), 3, a);
    text.replace(text.find("{b}"), 3, b);
    return text;
  };
  return {
      {"exact", a + " " + b, t, true, true},
      {"exact", a, t, true, false},
      {"typo", Typo(a, t) + " " + b, t, true, true},
      {"typo", Typo(b, t + 1), t, false, true},
      {"inflection", Inflect(a, 1) + " " + Inflect(b, 1), t, true, true},
      {"inflection", Inflect(a, 2), t, true, false},
      {"question", fill(kStopWordQuestions[t % 3]), t, true, true},
      {"question", fill(kVerbQuestions[t % 3]), t, true, true},
      {"paraphrase", Synonym(t, 0) + " " + b, t, true, true},
      {"paraphrase", a + " " + Synonym(t, 1), t, true, true},
  };
}

// What a message of the query's topic is worth to it: nothing unless it
// holds a word the query is about (in any spelling: a stemmer and a typo
// corrector bring it back, a model of meaning knows the synonym); 2 when it
// holds both topic words, else 1. Relevance is the topic's, whatever the
// query's spelling: a misspelt, inflected, question or paraphrase query wants
// the same messages as the exact one.
int Grade(const Query& q, const Doc& d) {
  if (d.topic != q.topic) return 0;
  if (!((q.about_a && d.has_a) || (q.about_b && d.has_b))) return 0;
  return d.has_a && d.has_b ? 2 : 1;
}

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

  struct Sums {
    Scores scores;
    int queries = 0;
    int below_keyword = 0;  // queries this mode ranks worse than keyword (nDCG@10)
  };
  std::map<std::pair<std::string, std::string>, Sums> sums;  // (class, mode)
  auto add = [&sums](const std::string& query_class, const std::string& mode, const Scores& s,
                     double keyword_ndcg) {
    for (const std::string& c : {query_class, std::string("all")}) {
      Sums& sum = sums[{c, mode}];
      sum.scores.ndcg += s.ndcg;
      sum.scores.mrr += s.mrr;
      sum.queries += 1;
      if (s.ndcg + 1e-9 < keyword_ndcg) sum.below_keyword += 1;
    }
  };
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
    const double keyword_ndcg = Score(Places(by_mode["keyword"]), labelled.grades).ndcg;
    for (const auto& [name, results] : by_mode) {
      add(labelled.query_class, name, Score(Places(results), labelled.grades), keyword_ndcg);
    }
    add(labelled.query_class, "hybrid_by_rank",
        Score(FusedByRank(by_mode["keyword"], by_mode["vector"]), labelled.grades), keyword_ndcg);
  }
  std::vector<std::string> classes(std::begin(kClasses), std::end(kClasses));
  classes.push_back("all");
  for (const std::string& c : classes) {
    for (const char* mode : {"keyword", "vector", "hybrid", "hybrid_by_rank"}) {
      auto it = sums.find({c, mode});
      if (it == sums.end()) continue;
      const Sums& s = it->second;
      const double n = static_cast<double>(s.queries);
      std::cout << json{{"measure", "search_quality"},
                        {"backend", backend},
                        {"embedder", model},
                        {"class", c},
                        {"mode", mode},
                        {"queries", s.queries},
                        {"ndcg10", s.scores.ndcg / n},
                        {"mrr", s.scores.mrr / n},
                        {"below_keyword", s.below_keyword}}
                       .dump()
                << std::endl;
    }
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
  std::vector<std::vector<std::pair<Place, const Doc*>>> by_topic(static_cast<size_t>(topics));
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
      by_topic[static_cast<size_t>(docs[i].topic)].emplace_back(
          Place{session, static_cast<int64_t>(i % kMessagesPerSession) + 1}, &docs[i]);
    }
    Message m;
    m.role = Role::kUser;
    m.parts = {Part::Text(docs[i].text)};
    batch.push_back(std::move(m));
  }
  flush();
  std::vector<Query> labels;
  for (int t = 0; t < topics; ++t) {
    for (Query& q : QueriesOf(t)) {
      for (const auto& [place, doc] : by_topic[static_cast<size_t>(t)]) {
        if (const int grade = Grade(q, *doc); grade > 0) q.grades[place] = grade;
      }
      labels.push_back(std::move(q));
    }
  }
  const std::string backend(StoreKindName(StoreKindOf(location)));
  Measure(store, labels, /*configured=*/false, backend);
  const char* url = std::getenv("SESSIONDB_EMBED_URL");
  if (url != nullptr && *url != '\0') Measure(store, labels, /*configured=*/true, backend);
}

}  // namespace sessiondb::bench
