// SearchIndex on an embedded store: keyword ranking (keyword_search), vectors
// (embedding_store, vector_index), fused (fusion), shown (hit_details).
#include "sessiondb/search.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "search/embedder.h"
#include "search/embedding_store.h"
#include "search/fusion.h"
#include "search/hit_details.h"
#include "search/index_db.h"
#include "search/keyword_search.h"
#include "search/query_syntax.h"
#include "search/vector_index.h"

namespace sessiondb {

std::string_view HitKindName(HitKind kind) {
  switch (kind) {
    case HitKind::kMessage: return "message";
    case HitKind::kCompaction: return "compaction";
    case HitKind::kResourceView: return "resource_view";
    case HitKind::kCodeWrite: return "code_write";
  }
  return "message";
}

namespace search {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxLimit = 1000;
constexpr int kMaxOffset = 100'000;

Result<std::unique_ptr<Embedder>> MakeEmbedder(const EmbedderConfig& config) {
  if (!config.url.empty()) {
    if (config.model.empty()) {
      return Err(Status::InvalidArgument("an embeddings URL needs a model name too"));
    }
    return MakeHttpEmbedder({.url = config.url, .model = config.model,
                             .api_key = config.api_key});
  }
  if (config.from_environment) return EmbedderFromEnvironment();
  return MakeHashEmbedder();
}

// The approximate index of a model: a file under <store>/index, and a meta
// row recording the last document it covers.
std::string HnswFileName(const std::string& model) {
  std::string name;
  for (char c : model) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + ".hnsw";
}

class SqliteSearchIndex final : public SearchIndex {
 public:
  SqliteSearchIndex(std::string store_path, SearchOptions options,
                    std::unique_ptr<sqlite::Database> db)
      : store_path_(std::move(store_path)), options_(std::move(options)), db_(std::move(db)) {
    Result<std::unique_ptr<Embedder>> embedder = MakeEmbedder(options_.embedder);
    if (embedder) {
      embedder_ = std::move(*embedder);
    } else {
      embedder_error_ = embedder.error();
    }
  }

  Result<SearchResults> Search(const SearchRequest& request) override {
    if (request.limit < 1 || request.limit > kMaxLimit) {
      return Err(Status::InvalidArgument("limit must be 1.." + std::to_string(kMaxLimit)));
    }
    if (request.offset < 0 || request.offset > kMaxOffset) {
      return Err(Status::InvalidArgument("offset must be 0.." + std::to_string(kMaxOffset)));
    }
    SearchResults results;
    ParsedQuery parsed = ParseUserQuery(request.query);
    results.match_expression = parsed.match;
    results.note = parsed.note;
    const size_t want = static_cast<size_t>(request.offset + request.limit);

    std::vector<ListEntry> keyword;
    if (request.mode != SearchMode::kVector) {
      ASSIGN_OR_RETURN(KeywordRanking ranking,
                       RankKeyword(db_.get(), parsed.match, request.filter,
                                   options_.max_keyword_candidates));
      results.keyword_matches = ranking.matches;
      results.bounded = ranking.bounded;
      for (const RankedDoc& d : ranking.docs) keyword.push_back({d.doc_id, d.score});
    }
    std::vector<ListEntry> vector;
    if (request.mode != SearchMode::kKeyword && !parsed.terms.empty()) {
      // Enough vector hits for the page even after gone documents are skipped.
      ASSIGN_OR_RETURN(vector, RankVector(request.query, request.filter, std::max<size_t>(
                                                                             want + 16, 100)));
      ASSIGN_OR_RETURN(results.pending_embeddings,
                       CountPendingEmbeddings(db_.get(), embedder_->Model()));
    }
    std::vector<FusedEntry> fused = FuseRankings(keyword, vector);

    size_t skipped = 0;
    for (const FusedEntry& f : fused) {
      if (results.hits.size() == static_cast<size_t>(request.limit)) break;
      SearchHit hit;
      ASSIGN_OR_RETURN(bool present, LoadHitDetails(db_.get(), f.doc_id, &hit));
      if (!present) continue;
      if (skipped++ < static_cast<size_t>(request.offset)) continue;
      hit.score = f.score;
      hit.keyword_rank = f.keyword_rank;
      hit.keyword_score = f.keyword_score;
      hit.vector_rank = f.vector_rank;
      hit.vector_score = f.vector_score;
      Snippet snippet;
      if (f.keyword_rank > 0) {
        ASSIGN_OR_RETURN(snippet, MatchSnippet(db_.get(), parsed.match, f.doc_id));
      } else {
        ASSIGN_OR_RETURN(snippet, LeadSnippet(db_.get(), f.doc_id, parsed.terms));
      }
      hit.snippet = std::move(snippet.text);
      hit.highlights = std::move(snippet.highlights);
      results.hits.push_back(std::move(hit));
    }
    return results;
  }

  Result<EmbedReport> Embed(int64_t max_documents, const ProgressFn& progress) override {
    RETURN_IF_ERROR(embedder_error_);
    return EmbedPendingDocuments(db_.get(), embedder_.get(), max_documents, progress);
  }

  Result<int64_t> PendingEmbeddings() override {
    RETURN_IF_ERROR(embedder_error_);
    return CountPendingEmbeddings(db_.get(), embedder_->Model());
  }

  Result<int64_t> VectorCount() override {
    RETURN_IF_ERROR(embedder_error_);
    ASSIGN_OR_RETURN(sqlite::Statement s,
                     db_->Prepare("SELECT count(*) FROM embeddings WHERE model = ?1"
                                  " AND length(vector) > 0"));
    s.Bind(1, embedder_->Model());
    ASSIGN_OR_RETURN(bool row, s.Step());
    return row ? s.ColumnInt(0) : 0;
  }

  Status ClearEmbeddings() override {
    RETURN_IF_ERROR(db_->Exec("DELETE FROM embeddings; DELETE FROM meta WHERE key LIKE 'hnsw:%'"));
    std::error_code ec;
    fs::remove_all(fs::path(store_path_) / "index", ec);
    ResetVectors();
    return Status::Ok();
  }

  Status BuildVectorIndex(const ProgressFn& progress) override {
    RETURN_IF_ERROR(embedder_error_);
    const std::string model = embedder_->Model();
    std::unique_ptr<VectorSet> all;
    ASSIGN_OR_RETURN(int64_t last, LoadVectors(db_.get(), model, 0, &all));
    if (all == nullptr) {
      return Status::FailedPrecondition("no vectors of model " + model +
                                        " to index; run `sessiondb reindex` first");
    }
    ASSIGN_OR_RETURN(std::unique_ptr<HnswIndex> hnsw, HnswIndex::Build(*all, progress));
    const fs::path dir = fs::path(store_path_) / "index";
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::Io("cannot create " + dir.string() + ": " + ec.message());
    RETURN_IF_ERROR(hnsw->Save((dir / HnswFileName(model)).string()));
    ASSIGN_OR_RETURN(sqlite::Statement s,
                     db_->Prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)"));
    s.Bind(1, "hnsw:" + model)
        .Bind(2, std::to_string(last) + " " + std::to_string(all->size()) + " " +
                    std::to_string(all->dims()));
    RETURN_IF_ERROR(s.Run());
    ResetVectors();
    return Status::Ok();
  }

  Status RebuildKeywordIndex() override {
    ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(db_.get()));
    // Documents for events and writes the index lost, none for those gone.
    RETURN_IF_ERROR(db_->Exec(
        "DELETE FROM search_docs WHERE (code_id IS NULL AND NOT EXISTS (SELECT 1 FROM events e"
        " WHERE e.session_id = search_docs.session_id AND e.seq = search_docs.seq))"
        " OR (code_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM code_writes c"
        " WHERE c.id = search_docs.code_id));"
        "INSERT INTO search_docs (session_id, seq) SELECT e.session_id, e.seq FROM events e"
        " WHERE NOT EXISTS (SELECT 1 FROM search_docs d WHERE d.code_id IS NULL"
        " AND d.session_id = e.session_id AND d.seq = e.seq);"
        "INSERT INTO search_docs (session_id, seq, code_id) SELECT c.session_id, 0, c.id"
        " FROM code_writes c WHERE NOT EXISTS (SELECT 1 FROM search_docs d"
        " WHERE d.code_id = c.id);"
        "INSERT INTO search_fts (search_fts) VALUES ('rebuild');"));
    return txn.Commit();
  }

  std::string EmbeddingModel() const override {
    return embedder_ ? embedder_->Model() : "(unavailable: " + embedder_error_.message() + ")";
  }

 private:
  void ResetVectors() {
    exact_.reset();
    hnsw_.reset();
    vectors_loaded_ = false;
    loaded_upto_ = 0;
  }

  // Brings the in-memory vectors up to date: the saved HNSW index (when the
  // store is past the threshold) plus an exact set of what came after it.
  Status RefreshVectors() {
    const std::string model = embedder_->Model();
    if (!vectors_loaded_) {
      vectors_loaded_ = true;
      ASSIGN_OR_RETURN(sqlite::Statement s,
                       db_->Prepare("SELECT value FROM meta WHERE key = ?1"));
      s.Bind(1, "hnsw:" + model);
      ASSIGN_OR_RETURN(bool row, s.Step());
      int64_t covered = 0, count = 0, dims = 0;
      if (row) std::istringstream(std::string(s.ColumnText(0))) >> covered >> count >> dims;
      if (row && count >= options_.approximate_threshold) {
        const std::string path = (fs::path(store_path_) / "index" / HnswFileName(model)).string();
        Result<std::unique_ptr<HnswIndex>> loaded = HnswIndex::Load(path, static_cast<int>(dims));
        if (loaded) {
          hnsw_ = std::move(*loaded);
          loaded_upto_ = covered;
        }
        // A lost or damaged file only costs speed: the exact scan takes over.
      }
    }
    ASSIGN_OR_RETURN(loaded_upto_, LoadVectors(db_.get(), model, loaded_upto_, &exact_));
    return Status::Ok();
  }

  Result<std::vector<ListEntry>> RankVector(const std::string& query, const SearchFilter& filter,
                                            size_t want) {
    RETURN_IF_ERROR(embedder_error_);
    std::vector<std::string> texts = {query};
    ASSIGN_OR_RETURN(std::vector<std::vector<float>> q, embedder_->Embed(texts));
    RETURN_IF_ERROR(RefreshVectors());
    ASSIGN_OR_RETURN(FilteredDocs allowed, DocsPassingFilter(db_.get(), filter));
    std::function<bool(int64_t)> accept;
    if (!allowed.unfiltered) {
      accept = [&allowed](int64_t id) {
        return std::binary_search(allowed.doc_ids.begin(), allowed.doc_ids.end(), id);
      };
    }
    std::vector<VectorHit> hits;
    if (exact_ != nullptr) hits = exact_->Search(q[0], want, accept);
    if (hnsw_ != nullptr) {
      std::vector<VectorHit> approx = hnsw_->Search(
          q[0], want, std::max<size_t>(want, static_cast<size_t>(options_.hnsw_ef)), accept);
      hits.insert(hits.end(), approx.begin(), approx.end());
      std::sort(hits.begin(), hits.end(),
                [](const VectorHit& a, const VectorHit& b) { return a.score > b.score; });
      if (hits.size() > want) hits.resize(want);
    }
    std::vector<ListEntry> out;
    for (const VectorHit& h : hits) {
      if (h.score >= options_.min_vector_score) out.push_back({h.id, h.score});
    }
    return out;
  }

  std::string store_path_;
  SearchOptions options_;
  std::unique_ptr<sqlite::Database> db_;
  std::unique_ptr<Embedder> embedder_;
  Status embedder_error_ = Status::Ok();
  bool vectors_loaded_ = false;
  int64_t loaded_upto_ = 0;
  std::unique_ptr<VectorSet> exact_;
  std::unique_ptr<HnswIndex> hnsw_;
};

}  // namespace
}  // namespace search

Result<std::unique_ptr<SearchIndex>> SearchIndex::Open(const std::string& store_path,
                                                       const SearchOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db,
                   search::OpenIndexDatabase(store_path, options.busy_timeout_ms));
  return std::unique_ptr<SearchIndex>(
      new search::SqliteSearchIndex(store_path, options, std::move(db)));
}

}  // namespace sessiondb
