// The vector workload of sessiondb_pg_bench (issue 37): a PostgreSQL
// namespace filled with `vectors` messages, each given a clustered 384-dim
// vector (count / 100 centres that are the built-in embedder's vectors of
// workload sentences, noise of norm ~0.5: sessiondb_search_bench's
// --clustered-vectors shape) through IndexBackend::PutVectors as reindex
// writes them, the HNSW graph built into this machine's cache
// (store/postgres/pg_vector_cache.h), then timed as a user meets it:
//   - the first vector query of a fresh process (the `sessiondb search` CLI
//     run as a child, exec to exit), and of a fresh Store and SearchIndex in
//     this process (open, then the query alone);
//   - the p50 of warm queries;
//   - recall@10 of the cached graph against the exact scan, over 100 new
//     members of the clusters (and over the 100 typed sentences);
//   - what the first query cost before (every vector read from the database);
//   - recall@10 per breadth (ef), and the first query of a fresh process
//     (this program as a child: connect, open, one search) at the narrowest
//     ef that meets recall@10 >= 0.95, three times with the graph's pages
//     evicted and three times cached.
// A graph already in the cache folder (an earlier run on the same namespace,
// --namespace) is used as it is, not rebuilt.
// The cache folder is DIR/cache ($SESSIONDB_CACHE_DIR is set for the child).
// Thread-safety: call from one thread.
//
// Example:
//   nlohmann::json figures = RunVectorWorkload(uri, "vec-1m", "/tmp/vecbench", 1'000'000);
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace sessiondb::bench {

// Fills namespace `ns` of `postgres_uri` (which must not hold it yet, or hold
// exactly this workload's earlier fill) and returns the figures as one JSON
// object ({"workload": "pg_vectors", ...}); {"error": ...} when a step fails.
nlohmann::json RunVectorWorkload(const std::string& postgres_uri, const std::string& ns,
                                 const std::string& dir, int64_t vectors);

// The child RunVectorWorkload starts (`sessiondb_pg_bench --vector-first-query
// URI NS EF QUERY`): opens namespace `ns` and its search index at breadth
// `ef`, runs one vector search of `query`, and prints {"open_ms",
// "first_query_ms", "open_and_first_query_ms", "hits"}. Returns the exit code.
int RunVectorFirstQueryChild(const std::string& postgres_uri, const std::string& ns, int ef,
                             const std::string& query);

}  // namespace sessiondb::bench
