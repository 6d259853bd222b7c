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
//   - what the first query cost before (every vector read from the database).
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

}  // namespace sessiondb::bench
