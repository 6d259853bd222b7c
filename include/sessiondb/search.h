// Search over a store's history and the agents' code memory: full text (BM25
// over every message's text, tool calls and results, compaction summaries,
// view reasons and code writes), vectors from an embedder, and the two fused.
// See docs/search.md.
//
// The index follows the log. A write (an append, an import, a code write)
// commits its events and records them as documents, nothing more; the
// full-text index takes the documents past its watermark later, many at once,
// each batch in one transaction with the watermark that says so (IndexPending
// here, EmbeddingWorker in the background, the end of an import, `sessiondb
// reindex`). A search first indexes what was written before it (at most
// SearchRequest::catch_up_limit documents, so a caller sees its own writes),
// then answers as of the watermark. Deletes and prunes leave the index at
// once, in their transaction. Embeddings are computed later too, in batches
// (EmbeddingWorker, Embed, `sessiondb reindex`), never by a search.
//
// Search works on both backends: FTS5 on an embedded store, PostgreSQL's own
// full-text search (tsvector, a GIN index) on a shared one, in the Store's
// namespace only.
//
// Thread-safety: none; one SearchIndex per thread. Several may be open on one
// store, in one or several processes, next to the Store itself.
//
// Example:
//   ASSIGN_OR_RETURN(auto index, SearchIndex::Open("/tmp/chats"));
//   ASSIGN_OR_RETURN(SearchResults r, index->Search({.query = "token limit"}));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"

namespace sessiondb {

enum class SearchMode { kKeyword, kVector, kHybrid };

struct SearchFilter {
  std::string session_id;    // empty: every session (only events the session holds itself)
  std::optional<Role> role;  // messages of this role only (code writes have none)
  int64_t since_ms = 0;      // 0: no lower bound; else time >= since_ms
  int64_t until_ms = 0;      // 0: no upper bound; else time < until_ms
  // A path prefix: sessions whose metadata "project" or "cwd" starts with it,
  // code writes whose project or file path does.
  std::string project;
  ArchiveFilter archived = ArchiveFilter::kAll;
  bool events = true;       // messages, compaction summaries, view reasons
  bool code_writes = true;  // the code memory
};

struct SearchRequest {
  std::string query;
  SearchMode mode = SearchMode::kHybrid;
  SearchFilter filter;
  int limit = 20;  // 1..1000
  int offset = 0;
  // Documents written but not yet in the full-text index that the search
  // indexes before answering (read-your-writes: what the caller appended is
  // found). Past this many it answers as of the index's watermark and says
  // how many it did not see (SearchResults::pending_documents); 0 never
  // indexes. A read-only store, or one whose write lock another writer holds,
  // is searched as of its watermark at once (never waiting for the lock).
  int64_t catch_up_limit = 50'000;
  // A word of the query (not quoted, not a prefix, 4 characters or more)
  // that no document holds is replaced by the index's nearest word, if it
  // has one (SearchResults::corrected_query says so). False: search the
  // words as typed.
  bool correct_typos = true;
};

enum class HitKind { kMessage, kCompaction, kResourceView, kCodeWrite };
std::string_view HitKindName(
    HitKind kind);  // "message", "compaction", "resource_view", "code_write"

struct SearchHit {
  HitKind kind = HitKind::kMessage;
  std::string session_id;  // the session holding the event (or that made the write)
  std::string session_title;
  int64_t seq = 0;  // the event's seq; 0 for a code write
  std::string event_id;
  std::optional<Role> role;
  int64_t time_ms = 0;
  std::string file_path;  // code writes
  int64_t code_id = 0;    // code writes
  // A short excerpt; `highlights` are [begin, end) byte ranges of it that
  // matched the query's terms.
  std::string snippet;
  std::vector<std::pair<size_t, size_t>> highlights;
  // Why it ranked: the fused score, and each list's rank (1-based, 0 when
  // absent from that list) and score (BM25, higher is better; cosine).
  double score = 0;
  int keyword_rank = 0;
  double keyword_score = 0;
  int vector_rank = 0;
  double vector_score = 0;
};

struct SearchResults {
  std::vector<SearchHit> hits;
  // Keyword matches that passed the filter; when `bounded`, the query matched
  // more than SearchOptions::max_keyword_candidates and only the newest that
  // many were ranked (so a very common term cannot take seconds).
  int64_t keyword_matches = 0;
  bool bounded = false;
  // The full-text expression the query became (after escaping).
  std::string match_expression;
  // Documents written after the newest embedded one: not embedded yet
  // (vector and hybrid modes see only the others).
  int64_t pending_embeddings = 0;
  // Documents written but not in the full-text index when the search
  // answered (see SearchRequest::catch_up_limit): no mode saw them.
  int64_t pending_documents = 0;
  // What the answer leaves out: why nothing could match, when the query had
  // no term; and, when documents were pending, how many and why (another
  // writer held the store's write lock: a search never waits for it).
  std::string note;
  // When words of the query matched no document and the index holds a near
  // spelling of them (docs/search.md, "Search that forgives"): the query as
  // it was searched instead ("deadlock" for "deadlok"), in every mode; and
  // `corrected_words`, each typed word and the word searched for it. Empty
  // when the words were searched as typed.
  std::string corrected_query;
  std::vector<std::pair<std::string, std::string>> corrected_words;
  // A suggestion for the person: the corrected query when a correction was
  // applied; empty otherwise.
  std::string did_you_mean;
};

// Where vectors come from. Empty url: the built-in offline embedder (hashed
// word and character n-grams, 384 dimensions). Else an OpenAI-compatible
// /v1/embeddings endpoint (Ollama, llama.cpp server, vLLM, OpenAI).
struct EmbedderConfig {
  std::string url;
  std::string model;
  std::string api_key;
  // Fill the fields from SESSIONDB_EMBED_URL, SESSIONDB_EMBED_MODEL and
  // SESSIONDB_EMBED_KEY (else OPENAI_API_KEY) when url is empty.
  bool from_environment = true;
};

struct SearchOptions {
  EmbedderConfig embedder;
  int64_t max_keyword_candidates = 20'000;
  // Vector hits less similar than this (cosine) are not hits: without it a
  // vector search returns its k nearest however far they are.
  double min_vector_score = 0.2;
  // Past this many vectors, a saved HNSW index (built by BuildVectorIndex)
  // answers vector queries instead of an exact scan (which costs ~0.13 ms per
  // 1,000 vectors; docs/benchmarks.md has the recall the HNSW index gives).
  int64_t approximate_threshold = 250'000;
  // How wide the HNSW search looks (hnswlib's ef): wider finds more of the
  // true nearest neighbours and costs more (docs/benchmarks.md).
  int hnsw_ef = 1024;
  int busy_timeout_ms = 60'000;
};

struct EmbedReport {
  int64_t embedded = 0;   // documents given a vector now
  int64_t remaining = 0;  // still pending (when stopped by max_documents)
  std::string model;
};

class SearchIndex {
 public:
  // Search over `store` (either backend), in its namespace. The index must
  // not outlive `store`.
  static Result<std::unique_ptr<SearchIndex>> Open(Store& store, const SearchOptions& options = {});
  // Opens the store at `store_path` (a directory or a postgresql:// URI) and
  // searches it; the index owns that Store. kNotFound if there is no store
  // there; kFailedPrecondition for a store written by a newer sessiondb.
  static Result<std::unique_ptr<SearchIndex>> Open(const std::string& store_path,
                                                   const SearchOptions& options = {});
  virtual ~SearchIndex() = default;

  // Never fails on the query's text: punctuation, quotes, operators and code
  // are escaped or become plain terms. kInvalidArgument for a limit or offset
  // out of range; vector modes fail when the embedder does (unreachable
  // endpoint), keyword mode never needs it.
  virtual Result<SearchResults> Search(const SearchRequest& request) = 0;

  // Embeds documents that have no vector for the current model yet, in
  // batches, each committed on its own; at most `max_documents` (-1: all).
  virtual Result<EmbedReport> Embed(int64_t max_documents = -1,
                                    const ProgressFn& progress = {}) = 0;
  // Documents written after the newest one with a vector of the current model.
  virtual Result<int64_t> PendingEmbeddings() = 0;
  // Vectors of the current model (documents with text that were embedded).
  virtual Result<int64_t> VectorCount() = 0;
  // Drops every vector (all models) so Embed computes them again.
  virtual Status ClearEmbeddings() = 0;
  // Builds the approximate (HNSW) index over the current model's vectors and
  // saves it in the store directory; vectors added after it are scanned
  // exactly until the next build.
  virtual Status BuildVectorIndex(const ProgressFn& progress = {}) = 0;
  // True when BuildVectorIndex keeps a graph: an embedded store's, or a
  // PostgreSQL namespace's in this machine's cache (docs/postgres.md). An
  // encrypted PostgreSQL namespace keeps none: its vectors are always
  // scanned exactly, and BuildVectorIndex does nothing there.
  virtual bool KeepsVectorIndex() const = 0;
  // Rebuilds the full-text index from the log and the code memory.
  virtual Status RebuildKeywordIndex() = 0;
  // Indexes documents written since the full-text index last caught up, in
  // batches each committed with the index's watermark (a crash loses no
  // batch and repeats none); at most `max_documents` (-1: all). Returns the
  // documents still pending. kFailedPrecondition on a read-only store.
  virtual Result<int64_t> IndexPending(int64_t max_documents = -1,
                                       const ProgressFn& progress = {}) = 0;
  // Documents written but not yet in the full-text index.
  virtual Result<int64_t> PendingDocuments() = 0;

  // The embedder's model name ("hash-384-v1", "http:<model>").
  virtual std::string EmbeddingModel() const = 0;
};

// How far the background embedding is behind (EmbeddingWorker::progress).
struct EmbeddingProgress {
  int64_t pending = 0;       // documents without a vector of the model, at the last look
  int64_t pending_text = 0;  // documents not yet in the full-text index, at the last look
  int64_t embedded = 0;      // documents this worker embedded since it started
  std::string model;
  std::string last_error;  // empty while the last batch succeeded
};

// Indexes the documents a store gains, for full text and then for vectors, in
// batches, on a thread of its own: the engine's background work, so a search
// rarely has documents to index on the way and never embeds. A face that
// serves searches (`sessiondb serve`, `sessiondb mcp`) runs one; `sessiondb
// reindex` does everything at once instead.
//
// It looks for pending documents at start, at every Nudge (call it after
// writing) and every `poll_ms`. A failed batch (an embedder that is down, a
// read-only store) is recorded in progress().last_error and retried at the
// next look, never in a loop. WaitUntilCaughtUp lets a caller that just wrote
// see its own documents in vector results, waiting a bounded time.
//
// Thread-safety: every method may be called from any thread. It must not
// outlive the Store it was started on; the destructor stops it after the batch
// under way.
class EmbeddingWorker {
 public:
  static Result<std::unique_ptr<EmbeddingWorker>> Start(Store& store,
                                                        const SearchOptions& options = {},
                                                        int poll_ms = 2000);
  virtual ~EmbeddingWorker() = default;

  virtual void Nudge() = 0;
  virtual EmbeddingProgress progress() const = 0;
  // Nudges and waits until nothing is pending or `timeout_ms` passed; true
  // when caught up. Waits only when at most `max_pending` documents are
  // pending (a long backlog is not worth the wait: false at once).
  virtual bool WaitUntilCaughtUp(int64_t max_pending, int timeout_ms) = 0;
};

}  // namespace sessiondb
