#include "vector_workload.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "search/embedder.h"
#include "search/embedding_store.h"
#include "search/vector_codec.h"
#include "search/vector_index.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "stats.h"
#include "store/index_backend.h"
#include "workload_data.h"

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSessionMessages = 1000;  // one AppendBatch per session
constexpr int kEmbedBatch = 4096;
constexpr int kQueries = 100;
constexpr int kFillThreads = 2;

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

Result<std::unique_ptr<Store>> OpenNamespace(const std::string& uri, const std::string& ns) {
  StoreOptions options;
  options.namespace_name = ns;
  options.create_if_missing = true;
  return Store::Open(uri, options);
}

SearchOptions Options() {
  SearchOptions options;
  options.embedder.from_environment = false;  // the built-in embedder
  return options;
}

// Appends `count` messages of workload text, session by session, on
// kFillThreads threads each with its own Store (as separate writers would).
Status Fill(const std::string& uri, const std::string& ns, int64_t count) {
  const int64_t sessions = (count + kSessionMessages - 1) / kSessionMessages;
  std::vector<Status> failed(kFillThreads, Status::Ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < kFillThreads; ++t) {
    threads.emplace_back([&, t] {
      Result<std::unique_ptr<Store>> store = OpenNamespace(uri, ns);
      if (!store) {
        failed[t] = store.error();
        return;
      }
      SplitMix64 rng(37 + t);
      for (int64_t s = t; s < sessions; s += kFillThreads) {
        const std::string id = "vec-" + std::to_string(s);
        Result<Session> made = (*store)->CreateSession({.id = id, .title = id});
        if (!made) {
          failed[t] = made.error();
          return;
        }
        const int64_t n = std::min<int64_t>(kSessionMessages, count - s * kSessionMessages);
        std::vector<Message> batch(static_cast<size_t>(n));
        for (Message& m : batch) {
          m.role = Role::kUser;
          m.parts.push_back(Part::Text(MessageText(rng)));
        }
        if (auto r = (*store)->AppendBatch(id, batch); !r) {
          failed[t] = r.error();
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : failed) RETURN_IF_ERROR(s);
  return Status::Ok();
}

// Clustered embeddings, as an embedder of meaning makes them (documents
// gather around topics), the same shape as sessiondb_search_bench's
// --clustered-vectors: count / 100 centres, each member the centre plus
// gaussian noise of norm about 0.5 (cosine ~0.9 to its centre). The centres
// are the built-in embedder's vectors of workload sentences, so a query
// typed as one of those sentences lands among its cluster.
class Clusters {
 public:
  explicit Clusters(int64_t count) : rng_(1234) {
    std::unique_ptr<search::Embedder> embedder = search::MakeHashEmbedder();
    SplitMix64 words(99);
    const int64_t n = std::max<int64_t>(1, count / 100);
    for (int64_t i = 0; i < n; ++i) texts_.push_back(MessageText(words));
    for (size_t from = 0; from < texts_.size(); from += 1000) {
      std::vector<std::string> some(
          texts_.begin() + static_cast<std::ptrdiff_t>(from),
          texts_.begin() + static_cast<std::ptrdiff_t>(std::min(texts_.size(), from + 1000)));
      Result<std::vector<std::vector<float>>> v = embedder->Embed(some);
      if (v) centres_.insert(centres_.end(), v->begin(), v->end());
    }
  }
  bool ok() const { return !centres_.empty() && centres_.size() == texts_.size(); }
  const std::string& text(size_t i) const { return texts_[i % texts_.size()]; }
  // A new member of a random cluster.
  std::vector<float> Draw() {
    std::vector<float> v = centres_[rng_() % centres_.size()];
    const float noise = 0.5f / std::sqrt(static_cast<float>(v.size()));
    double norm = 0;
    for (float& x : v) norm += (x += noise * gauss_(rng_)) * x;
    for (float& x : v) x /= static_cast<float>(std::sqrt(norm));
    return v;
  }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<float> gauss_;
  std::vector<std::string> texts_;
  std::vector<std::vector<float>> centres_;
};

// Gives every pending document a member of the clusters and keeps the
// vectors as reindex does (PutVectors, a batch per transaction).
Result<int64_t> PutClusteredVectors(store::IndexBackend* backend, const std::string& model,
                                    Clusters& clusters) {
  int64_t done = 0;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<store::DocumentText> docs,
                     backend->PendingDocuments(model, kEmbedBatch));
    if (docs.empty()) return done;
    std::vector<store::EncodedVector> encoded;
    for (const store::DocumentText& d : docs) {
      encoded.push_back({d.doc_id, search::EncodeVector(clusters.Draw())});
    }
    RETURN_IF_ERROR(backend->PutVectors(model, encoded));
    done += static_cast<int64_t>(docs.size());
    if (done % (kEmbedBatch * 25) == 0) std::cerr << "  vectors " << done << "\n";
  }
}

// Runs `argv` with stdout to `out_path`; returns its wall time in ns, or -1
// when it cannot start or exits non-zero.
int64_t TimeChild(const std::vector<std::string>& argv, const std::string& out_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int64_t start = NowNs();
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) ::dup2(fd, 1);
    ::execv(args[0], args.data());
    _exit(127);
  }
  if (pid < 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int64_t took = NowNs() - start;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? took : -1;
}

json Run(const std::string& uri, const std::string& ns, const std::string& dir, int64_t count) {
  json out = {{"workload", "pg_vectors"}, {"backend", "postgres"}, {"vectors", count}};
  const std::string cache = (fs::path(dir) / "cache").string();
  fs::create_directories(cache);
  ::setenv("SESSIONDB_CACHE_DIR", cache.c_str(), 1);

  Result<std::unique_ptr<Store>> store = OpenNamespace(uri, ns);
  if (!store) return {{"error", store.error().ToString()}};
  Result<std::unique_ptr<store::IndexBackend>> backend = (*store)->OpenIndexBackend();
  if (!backend) return {{"error", backend.error().ToString()}};
  const std::string model = search::MakeHashEmbedder()->Model();
  Result<int64_t> have = (*backend)->VectorCount(model);
  if (!have) return {{"error", have.error().ToString()}};
  Clusters clusters(count);
  if (!clusters.ok()) return {{"error", "the built-in embedder failed"}};
  if (*have == 0) {
    std::cerr << "pg_vectors: appending " << count << " messages\n";
    int64_t start = NowNs();
    if (Status s = Fill(uri, ns, count); !s.ok()) return {{"error", s.ToString()}};
    out["fill_s"] = Ms(NowNs() - start) / 1000;
    std::cerr << "pg_vectors: writing vectors\n";
    start = NowNs();
    Result<int64_t> put = PutClusteredVectors(backend->get(), model, clusters);
    if (!put) return {{"error", put.error().ToString()}};
    out["put_vectors_s"] = Ms(NowNs() - start) / 1000;
  }
  have = (*backend)->VectorCount(model);
  if (!have) return {{"error", have.error().ToString()}};
  out["vectors"] = *have;

  // Before: a fresh process read every vector from the database.
  std::unique_ptr<search::VectorSet> exact;
  int64_t start = NowNs();
  if (auto r = search::LoadVectors(backend->get(), model, 0, &exact); !r) {
    return {{"error", r.error().ToString()}};
  }
  out["exact_load_all_ms"] = Ms(NowNs() - start);

  std::cerr << "pg_vectors: building the graph\n";
  {
    Result<std::unique_ptr<SearchIndex>> index = SearchIndex::Open(**store, Options());
    if (!index) return {{"error", index.error().ToString()}};
    start = NowNs();
    if (Status s = (*index)->BuildVectorIndex(); !s.ok()) return {{"error", s.ToString()}};
    out["build_s"] = Ms(NowNs() - start) / 1000;
  }
  const std::string files = (*backend)->FilesDirectory();
  std::string graph;
  for (const auto& e : fs::directory_iterator(files)) {
    if (e.path().extension() == ".hnsw") graph = e.path().string();
  }
  if (graph.empty()) return {{"error", "no graph in " + files}};
  out["graph_bytes"] = fs::file_size(graph);
  out["graph_used_by_default"] = *have >= SearchOptions{}.approximate_threshold;

  // Typed queries: centre sentences, 100 clusters apart.
  std::vector<std::string> queries;
  for (int i = 0; i < kQueries; ++i) queries.push_back(clusters.text(static_cast<size_t>(i) * 97));
  // A fresh process: the CLI, exec to exit (its page cache warm from the build).
  std::vector<int64_t> child;
  for (int i = 0; i < 5; ++i) {
    const int64_t took =
        TimeChild({SESSIONDB_CLI_PATH, "--store", uri, "--namespace", ns, "--json", "search",
                   "--mode", "vector", "--limit", "10", queries[static_cast<size_t>(i)]},
                  (fs::path(dir) / "child.json").string());
    if (took < 0) return {{"error", "the CLI search failed; see " + dir + "/child.json"}};
    child.push_back(took);
  }
  out["fresh_process_first_query_ms"] = Ms(child.front());
  out["fresh_process_median_of_5_ms"] = MedianMs(child);

  // A fresh Store and SearchIndex here: open, then the first query alone.
  SearchOptions approximate = Options();
  approximate.approximate_threshold = 0;  // the graph at any size
  start = NowNs();
  Result<std::unique_ptr<Store>> fresh_store = OpenNamespace(uri, ns);
  if (!fresh_store) return {{"error", fresh_store.error().ToString()}};
  Result<std::unique_ptr<SearchIndex>> fresh = SearchIndex::Open(**fresh_store, approximate);
  if (!fresh) return {{"error", fresh.error().ToString()}};
  out["fresh_open_ms"] = Ms(NowNs() - start);
  start = NowNs();
  Result<SearchResults> first =
      (*fresh)->Search({.query = queries[0], .mode = SearchMode::kVector, .limit = 10});
  if (!first) return {{"error", first.error().ToString()}};
  out["fresh_first_query_ms"] = Ms(NowNs() - start);
  std::vector<int64_t> warm;
  for (const std::string& q : queries) {
    start = NowNs();
    Result<SearchResults> r =
        (*fresh)->Search({.query = q, .mode = SearchMode::kVector, .limit = 10});
    if (!r) return {{"error", r.error().ToString()}};
    warm.push_back(NowNs() - start);
  }
  out["warm_query_p50_ms"] = PercentileUs(warm, 50) / 1000;
  out["warm_query_p99_ms"] = PercentileUs(warm, 99) / 1000;

  // Recall@10 of the cached graph (the search's breadth) against the exact scan.
  Result<std::unique_ptr<search::HnswIndex>> mapped = search::HnswIndex::Load(graph, exact->dims());
  if (!mapped) return {{"error", mapped.error().ToString()}};
  // Queries as new members of the clusters (the recall figure), and as the
  // typed sentences above.
  std::vector<std::vector<float>> probes;
  for (int i = 0; i < kQueries; ++i) probes.push_back(clusters.Draw());
  std::unique_ptr<search::Embedder> embedder = search::MakeHashEmbedder();
  Result<std::vector<std::vector<float>>> typed = embedder->Embed(queries);
  if (!typed) return {{"error", typed.error().ToString()}};
  double recall = 0, typed_recall = 0;
  std::vector<int64_t> graph_ns;
  for (int i = 0; i < kQueries; ++i) {
    for (bool new_point : {true, false}) {
      const std::vector<float>& q = new_point ? probes[i] : (*typed)[i];
      start = NowNs();
      Result<std::vector<search::VectorHit>> approx =
          (*mapped)->Search(q, 10, static_cast<size_t>(SearchOptions{}.hnsw_ef));
      if (new_point) graph_ns.push_back(NowNs() - start);
      if (!approx) return {{"error", approx.error().ToString()}};
      (new_point ? recall : typed_recall) +=
          search::RecallAtK(exact->Search(q, 10), *approx) / kQueries;
    }
  }
  out["recall_at_10_typed_queries"] = typed_recall;
  out["recall_at_10"] = recall;
  out["hnsw_ef"] = SearchOptions{}.hnsw_ef;
  out["graph_search_p50_ms"] = PercentileUs(graph_ns, 50) / 1000;
  return out;
}

}  // namespace

json RunVectorWorkload(const std::string& postgres_uri, const std::string& ns,
                       const std::string& dir, int64_t vectors) {
  return Run(postgres_uri, ns, dir, vectors);
}

}  // namespace sessiondb::bench
