// What search and the code memory need of a backend: the full-text index, the
// vectors and the code memory's tables, each written in the backend's own SQL
// and always inside the namespace of the Store that opened it.
//
// Search (src/search) and memory (src/memory) hold the rules: the query
// syntax, fusion, embedders, snippets of leads, churn tiers, function
// detection. They reach storage only through this interface, which is why
// they work on every backend and never include one (docs/ARCHITECTURE.md).
// Each backend implements it next to its Store: `sqlite/sqlite_index` (FTS5,
// the search tables of the embedded schema) and `postgres/pg_index`
// (tsvector with a GIN index, ts_rank_cd).
//
// A document is what the index ranks: an event (message, compaction summary,
// resource view) or a code write. Its `doc_id` is a positive integer that
// only grows as documents are added, so a watermark over doc ids says what a
// reader has seen (LearnFromHistory, vector catch-up).
//
// Thread-safety: none; SearchIndex and CodeMemory each open their own
// (Store::OpenIndexBackend). It must not outlive the Store it came from.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/cipher.h"
#include "core/secret_scan.h"
#include "sessiondb/file_system.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/status.h"

namespace sessiondb::store {

// A query as every backend can express it (built by search/query_syntax from
// what a person typed, or by the code memory from code). A phrase is one or
// more words (lower-cased, letters, digits and '_' only, as SplitWords makes
// them) that must occur in this order; with `prefix`, its last word is a
// prefix.
struct TextPhrase {
  std::vector<std::string> words;
  bool prefix = false;
  bool quoted = false;  // typed in quotes: taken as it is, never corrected
};

// A document matches when, for every group of `all_of`, it holds at least one
// of the group's phrases, and it holds none of the phrases of `none_of`.
// Empty `all_of`: nothing matches.
struct TextQuery {
  std::vector<std::vector<TextPhrase>> all_of;
  std::vector<TextPhrase> none_of;
  bool empty() const { return all_of.empty(); }
};

// A term of the full-text index's vocabulary, as the index holds it (lower
// case, stemmed), and how many documents hold it.
struct VocabularyWord {
  std::string word;
  int64_t documents = 0;
};

struct RankedDoc {
  int64_t doc_id = 0;
  double score = 0;  // higher is better (FTS5's BM25 negated; ts_rank_cd)
};

struct KeywordRanking {
  std::vector<RankedDoc> docs;  // best first; ties: newer first
  int64_t matches = 0;          // that passed the filter (the cap, when bounded)
  bool bounded = false;         // more matched than max_candidates
};

// The documents that pass a filter, for filtering vector hits; all of them
// when the filter is empty (then `unfiltered` is set and the list is empty).
struct FilteredDocs {
  bool unfiltered = false;
  std::vector<int64_t> doc_ids;  // ascending
};

// An excerpt of a document with the [begin, end) byte ranges of it that
// matched.
struct Snippet {
  std::string text;
  std::vector<std::pair<size_t, size_t>> highlights;
};

// A document's text, for embedding it or showing its start.
struct DocumentText {
  int64_t doc_id = 0;
  std::string text;
};

// A vector (search/vector_codec's encoding) of a document; empty `encoded`:
// the document has no text to embed (kept so it is not pending forever).
struct EncodedVector {
  int64_t doc_id = 0;
  std::string encoded;
};

// A code write as the memory keeps it: CodeWrite with its language decided,
// its time set and its identity (SHA-256 of path, old and new code) computed.
struct StoredCodeWrite {
  std::string file_path;
  std::string old_code;
  std::string new_code;
  bool whole_file = true;
  std::string language;
  std::string session_id;
  std::string project;
  std::string tool;
  int64_t time_ms = 0;
  std::string content_sha256;
};

// A code write's identity (StoredCodeWrite::content_sha256): the SHA-256
// of its path, old and new code, each separated by a NUL.
std::string CodeWriteHash(std::string_view path, std::string_view old_code,
                          std::string_view new_code);

// A kept code write, as Recall shows it (the whole new code: the memory cuts
// the preview).
struct KeptCodeWrite {
  int64_t code_id = 0;
  std::string file_path;
  std::string new_code;
  std::string session_id;
  std::string project;
  int64_t time_ms = 0;
};

// A tool call found in a stored message, for LearnFromHistory.
struct StoredToolCall {
  int64_t doc_id = 0;  // the message's document
  std::string session_id;
  std::string project;  // the session's metadata "project", else "cwd", else ""
  // The folder the call ran in when its message's metadata says ("cwd": an
  // importer's note for a turn that ran elsewhere than its session), else "".
  std::string cwd;
  std::string name;
  std::string arguments;  // JSON text
  int64_t time_ms = 0;
  std::string call_id;        // the tool call's id ("" when it has none)
  std::string agent_session;  // the session's metadata "source_session_id", else ""
};

struct EditCounts {
  int64_t edits_30d = 0;
  int64_t edits_24h = 0;
};

// How far the full-text index has read the documents. The index follows the
// log: a write records its document and commits; the index takes the
// documents past its watermark later, in batches (IndexPendingText).
struct TextIndexState {
  int64_t indexed_through = 0;  // every document with doc_id <= this is indexed
  int64_t pending = 0;          // documents after it, waiting to be indexed
};

// Documents the full-text index takes per transaction: large enough that
// FTS5 writes few segments, small enough that a writer waiting for the lock
// waits tens of milliseconds, not seconds.
inline constexpr int64_t kTextIndexBatch = 4096;
// The same when a caller asked for everything (-1: the end of an import,
// reindex, `sessiondb index`): each transaction becomes one FTS5 segment, and
// segments are what FTS5 merges again and again as the index grows; 16 times
// fewer of them make a bulk catch-up 2 to 2.5 times faster (docs/benchmarks.md,
// issue 19). A writer may then wait half a second for the lock, which a bulk
// load makes it do anyway.
inline constexpr int64_t kBulkTextIndexBatch = 65536;

// Brings the full-text index up to the documents written before the call,
// kTextIndexBatch at a time (kBulkTextIndexBatch when `max_documents` is -1),
// each batch committed with the watermark, calling `progress(done, total)`
// after each; at most `max_documents` (-1: all).
// Returns the documents still pending. Safe beside another catch-up (another
// thread, process or the server's indexer): each batch reads the watermark
// it moves under the write lock, so no document is indexed twice. A store
// that cannot be written answers kFailedPrecondition.
class IndexBackend;
Result<int64_t> CatchUpTextIndex(IndexBackend& backend, int64_t max_documents,
                                 const std::function<void(int64_t, int64_t)>& progress = {});

// What a query's catch-up left: the documents the query will not see, and
// why (a clause for a note, e.g. "another writer holds the store's write
// lock..."; empty when nothing is pending).
struct QueryCatchUp {
  int64_t pending = 0;
  std::string why;
};

// What a query does first (a search, a recall): indexes the documents written
// before it when at most `limit` are pending, so a caller finds what it just
// wrote. Never waits for another writer: when one holds the write lock (or
// the store cannot be written, or more than `limit` are pending) the query
// answers as of the watermark instead, and the result says how many
// documents it did not see and why; a later query catches up once the lock
// is free.
Result<QueryCatchUp> CatchUpBeforeQuery(IndexBackend& backend, int64_t limit);

// True when `filter` lets every document through.
bool FilterIsEmpty(const SearchFilter& filter);

// The end of every backend's RankKeyword: `ranking->docs` holds at most
// max_candidates + 1 matches read newest first; the extra one, if any, is
// dropped and marks the ranking bounded, then the docs are sorted best first
// (ties keep their newest-first order).
void FinishRanking(int64_t max_candidates, KeywordRanking* ranking);

// The first string after every string that begins with `prefix` (its last
// byte below 0xFF raised by one); empty when there is none (all 0xFF).
std::string PrefixEnd(std::string_view prefix);

class IndexBackend {
 public:
  virtual ~IndexBackend() = default;

  // The redactor of the Store that opened this backend, or null when its
  // redaction is off: the code memory redacts what it records with it
  // (docs/retention.md), since code writes reach the index without the front.
  const SecretRedactor* secret_redactor() const { return redactor_.get(); }
  void set_secret_redactor(std::shared_ptr<const SecretRedactor> redactor) {
    redactor_ = std::move(redactor);
  }

  // ---- Full text ----------------------------------------------------------

  // `query` in this backend's own syntax (an FTS5 expression, a tsquery), as
  // SearchResults::match_expression shows it. Empty for an empty query.
  virtual std::string Expression(const TextQuery& query) const = 0;

  // Both take `filter.project` as a prefix of "<project or file path>/": a
  // folder with its '/' (as SearchIndex passes it) finds that folder and what
  // lies under it, never a sibling that merely starts with its name.
  // Documents matching `query` and `filter`, best first. Only the newest
  // `max_candidates` matches are ranked, so a term in every message costs a
  // bounded amount of work. Never fails on the query's words.
  virtual Result<KeywordRanking> RankKeyword(const TextQuery& query, const SearchFilter& filter,
                                             int64_t max_candidates) = 0;
  virtual Result<FilteredDocs> DocsPassingFilter(const SearchFilter& filter) = 0;
  // The documents among `candidates` that pass `filter` (which is not
  // empty), ascending: one statement driven by the candidates, so a vector
  // search checks its nearest documents without listing every document a
  // broad filter passes (half a million for a role at a million).
  virtual Result<std::vector<int64_t>> CandidatesPassingFilter(
      const SearchFilter& filter, std::span<const int64_t> candidates) = 0;

  // Fills kind, session, seq, event id, role, time, session title, file path
  // and code id of `hit`. False when the document is gone (deleted since it
  // was ranked, or its session deleted).
  virtual Result<bool> LoadHitDetails(int64_t doc_id, SearchHit* hit) = 0;

  // An excerpt of the document around the matches of `query`.
  virtual Result<Snippet> MatchSnippet(const TextQuery& query, int64_t doc_id) = 0;

  // The document's text (message text with its tool calls and results; a code
  // write's path and code); nullopt when it is gone.
  virtual Result<std::optional<std::string>> ReadDocumentText(int64_t doc_id) = 0;

  // What a page of hits asks for each document: its details (as
  // LoadHitDetails), and either its match snippet (`keyword`: as
  // MatchSnippet) or its text (as ReadDocumentText).
  struct PageRequest {
    int64_t doc_id = 0;
    bool keyword = false;
  };
  struct PageDocument {
    bool present = false;  // LoadHitDetails' answer; nothing else is set when false
    SearchHit hit;
    Snippet snippet;                  // keyword requests
    std::optional<std::string> text;  // the others
  };
  // The documents of a page at once, in the order asked. The default asks
  // document by document; a backend across a network answers in one round
  // trip (PostgreSQL), so a page costs one query, not three per hit.
  virtual Result<std::vector<PageDocument>> LoadPage(const TextQuery& query,
                                                     std::span<const PageRequest> docs);

  // Rebuilds the full-text index from the log and the code memory: documents
  // for events and writes it lost, none for those gone.
  virtual Status RebuildKeywordIndex() = 0;

  // The vocabulary typo correction reads (search/typo_correction.h). False
  // when the backend keeps none it may show: an encrypted PostgreSQL
  // namespace, whose index holds keyed tokens and which stores no words.
  virtual bool HasVocabulary() const { return false; }
  // True when some document holds `word` (lower case, one word) as the index
  // matches it, stemmed. The default asks RankKeyword for one match.
  virtual Result<bool> HoldsWord(const std::string& word);
  // At most `limit` terms of the vocabulary that begin with `prefix` (bytes)
  // and are `min_length` to `max_length` characters long, in byte order, each
  // with its document count. Empty when HasVocabulary() is false.
  virtual Result<std::vector<VocabularyWord>> VocabularyWords(std::string_view prefix,
                                                              int min_length, int max_length,
                                                              int limit) {
    (void)prefix, (void)min_length, (void)max_length, (void)limit;
    return std::vector<VocabularyWord>();
  }

  // Where the full-text index stands (see TextIndexState). A backend that
  // indexes inside its writers' transactions (PostgreSQL) has nothing pending.
  virtual Result<TextIndexState> TextIndexProgress() = 0;
  // Indexes at most `max_documents` pending documents, oldest first, in one
  // write transaction that moves the watermark with them: a crash keeps both
  // or neither, so no document is indexed twice or skipped. Returns the state
  // after. CatchUpTextIndex is how callers use it.
  virtual Result<TextIndexState> IndexPendingText(int64_t max_documents) = 0;
  // The same as a try: kBusy at once, with nothing done, when another writer
  // holds the write lock (what a query's catch-up uses, so a search never
  // queues behind a writer). A backend with nothing to wait for keeps this.
  virtual Result<TextIndexState> TryIndexPendingText(int64_t max_documents) {
    return IndexPendingText(max_documents);
  }

  // ---- Vectors ------------------------------------------------------------

  // Documents after the newest one with a vector of `model`: those catch-up
  // has not reached yet (it goes oldest first). A cheap count.
  virtual Result<int64_t> CountPendingEmbeddings(const std::string& model) = 0;
  // At most `limit` of those pending documents, oldest first, with their text.
  virtual Result<std::vector<DocumentText>> PendingDocuments(const std::string& model,
                                                             int limit) = 0;
  // Keeps `vectors` of `model` in one transaction (replacing any of theirs).
  virtual Status PutVectors(const std::string& model, std::span<const EncodedVector> vectors) = 0;
  // Calls `visit` for each non-empty vector of `model` with doc_id >
  // after_doc_id, in doc_id order; returns the largest doc_id visited
  // (after_doc_id when none).
  virtual Result<int64_t> ScanVectors(
      const std::string& model, int64_t after_doc_id,
      const std::function<void(int64_t doc_id, std::string_view encoded)>& visit) = 0;
  virtual Result<int64_t> VectorCount(const std::string& model) = 0;
  // Drops every vector of every model, and the meta entries under "hnsw:".
  virtual Status ClearVectors() = 0;

  // Small settings of the index and the memory (watermarks, the saved HNSW
  // index's coverage), kept per namespace.
  virtual Result<std::optional<std::string>> GetMeta(std::string_view key) = 0;
  virtual Status SetMeta(std::string_view key, std::string_view value) = 0;

  // A directory where the index may keep files of its own (the saved HNSW
  // graph); empty when the backend has none (PostgreSQL: vectors are then
  // scanned exactly).
  virtual std::string FilesDirectory() const = 0;
  // What the index writes its files in FilesDirectory() through: the
  // file-system seam of the Store it came from (StoreOptions::file_system).
  virtual FileSystem& file_system() { return *FileSystem::Default(); }
  // The key that seals the files the index keeps in FilesDirectory() (the
  // saved HNSW graph: search/vector_index.h); null when they are plaintext.
  // Owned by the backend, valid while it lives.
  virtual const cipher::SecretKey* FilesKey() const { return nullptr; }

  // ---- Code memory --------------------------------------------------------

  // The new code of the newest whole-file write of `file_path`.
  virtual Result<std::optional<std::string>> LastWholeFile(std::string_view file_path) = 0;
  // Keeps `write` and, in the same transaction, one edit of the file and one
  // of each of `functions`, unless a write with its content_sha256 is kept
  // already: then nothing is written and `recorded` is false. code_id is the
  // write's either way. Makes the write a document of the full-text index.
  virtual Result<RecordedWrite> InsertCodeWrite(const StoredCodeWrite& write,
                                                const std::vector<std::string>& functions) = 0;
  // The code write behind document `doc_id`; nullopt when it is not one.
  virtual Result<std::optional<KeptCodeWrite>> CodeWriteOfDocument(int64_t doc_id) = 0;
  // Edits of (file_path, function) since the two times; function "" is the
  // file as a whole.
  virtual Result<EditCounts> CountEdits(std::string_view file_path, std::string_view function,
                                        int64_t since_30d_ms, int64_t since_24h_ms) = 0;
  // Files (functions: per function instead) under `path_prefix` by edits
  // since since_30d_ms, most first (then most since since_24h_ms, path,
  // function); `tier` is left at its default.
  virtual Result<std::vector<ChurnEntry>> CountHotspots(std::string_view path_prefix,
                                                        bool functions, int limit,
                                                        int64_t since_30d_ms,
                                                        int64_t since_24h_ms) = 0;
  // Remembers `key` and returns true the first time; false after. Exactly one
  // of racing callers gets true. Keeps the newest `capacity` keys.
  virtual Result<bool> FirstSighting(std::string_view key, int64_t now_ms, int64_t capacity) = 0;
  // Tool calls of message documents with doc_id > after_doc_id, in doc_id
  // order, at most `limit` messages' worth (so memory stays bounded).
  virtual Result<std::vector<StoredToolCall>> ToolCallsAfter(int64_t after_doc_id, int limit) = 0;
  // The largest doc_id of the index (0 when empty).
  virtual Result<int64_t> NewestDocument() = 0;

 private:
  std::shared_ptr<const SecretRedactor> redactor_;
};

}  // namespace sessiondb::store
