// SearchIndex over any backend's IndexBackend: keyword ranking and hit
// details from the backend, vectors (embedding_store, vector_index), fused
// (fusion), shown with snippets (the backend's, or lead_snippet).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <span>
#include <sstream>

#include "core/project_path.h"
#include "search/embedder.h"
#include "search/embedding_store.h"
#include "search/fusion.h"
#include "search/lead_snippet.h"
#include "search/open_store.h"
#include "search/query_syntax.h"
#include "search/snippet_text.h"
#include "search/typo_correction.h"
#include "search/vector_index.h"
#include "sessiondb/search.h"
#include "store/index_backend.h"

namespace sessiondb {

std::string_view HitKindName(HitKind kind) {
  switch (kind) {
    case HitKind::kMessage:
      return "message";
    case HitKind::kCompaction:
      return "compaction";
    case HitKind::kResourceView:
      return "resource_view";
    case HitKind::kCodeWrite:
      return "code_write";
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
    return MakeHttpEmbedder({.url = config.url, .model = config.model, .api_key = config.api_key});
  }
  if (config.from_environment) return EmbedderFromEnvironment();
  return MakeHashEmbedder();
}

// The approximate index of a model: a file in the backend's FilesDirectory(),
// and a meta entry "hnsw:<model>" recording the last document it covers,
// which the backend keeps where the file is (the embedded store's meta
// table; on PostgreSQL a record beside the file on this machine, valid while
// the database's vectors of the model are not cleared or erased).
std::string HnswFileName(const std::string& model) {
  std::string name;
  for (char c : model) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name + ".hnsw";
}

class BackendSearchIndex final : public SearchIndex {
 public:
  // `owned_store`, when set, is the Store `backend` came from (Open by path).
  BackendSearchIndex(SearchOptions options, std::unique_ptr<store::IndexBackend> backend,
                     std::unique_ptr<Store> owned_store)
      : options_(std::move(options)),
        owned_store_(std::move(owned_store)),
        backend_(std::move(backend)) {
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
    if (request.catch_up_limit < 0) {
      return Err(Status::InvalidArgument("catch_up_limit must be >= 0"));
    }
    SearchResults results;
    ASSIGN_OR_RETURN(store::QueryCatchUp caught_up,
                     store::CatchUpBeforeQuery(*backend_, request.catch_up_limit));
    results.pending_documents = caught_up.pending;
    ParsedQuery parsed = ParseUserQuery(request.query);
    // Words no document holds, replaced by the index's nearest ones (after
    // the catch-up, so the vocabulary holds what the caller just wrote).
    if (request.correct_typos && !parsed.query.empty()) {
      ASSIGN_OR_RETURN(QueryCorrection correction, CorrectQuery(*backend_, parsed.query));
      if (!correction.words.empty()) {
        parsed.query = std::move(correction.query);
        for (std::string& term : parsed.terms) {
          for (const auto& [typed, used] : correction.words) {
            if (term == typed) term = used;
          }
        }
        results.corrected_query = RewriteQueryText(request.query, correction.words);
        results.did_you_mean = results.corrected_query;
        results.corrected_words = std::move(correction.words);
      }
    }
    SearchFilter filter = request.filter;
    if (!filter.project.empty()) filter.project = FolderPrefix(filter.project);
    results.match_expression = backend_->Expression(parsed.query);
    results.note = parsed.note;
    if (caught_up.pending > 0) {
      if (!results.note.empty()) results.note += "; ";
      results.note += std::to_string(caught_up.pending) +
                      (caught_up.pending == 1 ? " document" : " documents") +
                      " not yet indexed: " + caught_up.why;
    }
    const size_t want = static_cast<size_t>(request.offset) + static_cast<size_t>(request.limit);

    std::vector<ListEntry> keyword;
    if (request.mode != SearchMode::kVector) {
      ASSIGN_OR_RETURN(
          store::KeywordRanking ranking,
          backend_->RankKeyword(parsed.query, filter, options_.max_keyword_candidates));
      results.keyword_matches = ranking.matches;
      results.bounded = ranking.bounded;
      keyword.reserve(ranking.docs.size());
      for (const store::RankedDoc& d : ranking.docs) keyword.push_back({d.doc_id, d.score});
    }
    std::vector<ListEntry> vector;
    if (request.mode != SearchMode::kKeyword && !parsed.terms.empty()) {
      // Excluded words must not steer the vector either: embed the words
      // looked for alone when the query excludes any.
      // A corrected query is embedded as corrected.
      const std::string& typed =
          results.corrected_query.empty() ? request.query : results.corrected_query;
      const std::string wanted = parsed.query.none_of.empty() ? typed : JoinWords(parsed.terms);
      // Enough vector hits for the page even after gone documents are skipped.
      ASSIGN_OR_RETURN(vector, RankVector(wanted, filter, std::max<size_t>(want + 16, 100)));
      ASSIGN_OR_RETURN(vector, WithoutExcluded(std::move(vector), parsed.query.none_of));
      ASSIGN_OR_RETURN(results.pending_embeddings,
                       backend_->CountPendingEmbeddings(embedder_->Model()));
    }
    // An embedder of spelling alone cannot be trusted to outrank keyword hits.
    const bool fuse_by_rank = embedder_ != nullptr && embedder_->KnowsMeaning();
    // Without vector hits both fusions keep the keyword order and give each
    // entry a score of its place alone, so only the head of a long keyword
    // list (a common term ranks 20,000) is fused: the page and a margin for
    // documents gone since the ranking, more only if they use it up.
    size_t head = vector.empty() ? std::min(keyword.size(), want + 64) : keyword.size();
    while (true) {
      const std::vector<ListEntry> ranked(keyword.begin(),
                                          keyword.begin() + static_cast<std::ptrdiff_t>(head));
      std::vector<FusedEntry> fused =
          fuse_by_rank ? FuseRankings(ranked, vector) : FuseKeywordFirst(ranked, vector);
      results.hits.clear();
      RETURN_IF_ERROR(ShowPage(fused, parsed.query, parsed.terms, request, &results.hits));
      if (results.hits.size() == static_cast<size_t>(request.limit) || head == keyword.size()) {
        break;
      }
      head = std::min(keyword.size(), head * 2);
    }
    return results;
  }

  Result<EmbedReport> Embed(int64_t max_documents, const ProgressFn& progress) override {
    RETURN_IF_ERROR(embedder_error_);
    return EmbedPendingDocuments(backend_.get(), embedder_.get(), max_documents, progress);
  }

  Result<int64_t> PendingEmbeddings() override {
    RETURN_IF_ERROR(embedder_error_);
    return backend_->CountPendingEmbeddings(embedder_->Model());
  }

  Result<int64_t> VectorCount() override {
    RETURN_IF_ERROR(embedder_error_);
    return backend_->VectorCount(embedder_->Model());
  }

  Status ClearEmbeddings() override {
    RETURN_IF_ERROR(backend_->ClearVectors());
    if (const std::string dir = backend_->FilesDirectory(); !dir.empty()) {
      // A saved HNSW file left behind is unused (its meta is gone), so a
      // file that cannot be removed costs disk, never a wrong answer.
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        (void)backend_->file_system().Remove(it->path().string());
      }
    }
    ResetVectors();
    return Status::Ok();
  }

  Status BuildVectorIndex(const ProgressFn& progress) override {
    RETURN_IF_ERROR(embedder_error_);
    const std::string model = embedder_->Model();
    std::unique_ptr<VectorSet> all;
    ASSIGN_OR_RETURN(int64_t last, LoadVectors(backend_.get(), model, 0, &all));
    if (all == nullptr) {
      return Status::FailedPrecondition("no vectors of model " + model +
                                        " to index; run `sessiondb reindex` first");
    }
    const std::string files = backend_->FilesDirectory();
    // A backend without files of its own (an encrypted PostgreSQL namespace,
    // a machine with no cache folder) has nowhere to keep the graph: its
    // vectors are always scanned exactly.
    if (files.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(std::unique_ptr<HnswIndex> hnsw, HnswIndex::Build(*all, progress));
    // Through the store's file system: a save that fails leaves the index
    // saved before (file and meta) as it was, still answering queries.
    FileSystem& file_system = backend_->file_system();
    const fs::path dir(files);
    RETURN_IF_ERROR(file_system.CreateDirectory(dir.string(), 0700));  // the store's: private
    RETURN_IF_ERROR(
        hnsw->Save((dir / HnswFileName(model)).string(), &file_system, backend_->FilesKey()));
    RETURN_IF_ERROR(backend_->SetMeta("hnsw:" + model, std::to_string(last) + " " +
                                                           std::to_string(all->size()) + " " +
                                                           std::to_string(all->dims())));
    hnsw_damaged_ = false;  // a new file
    ResetVectors();
    return Status::Ok();
  }

  bool KeepsVectorIndex() const override { return !backend_->FilesDirectory().empty(); }

  Status RebuildKeywordIndex() override { return backend_->RebuildKeywordIndex(); }

  Result<int64_t> IndexPending(int64_t max_documents, const ProgressFn& progress) override {
    return store::CatchUpTextIndex(*backend_, max_documents, progress);
  }

  Result<int64_t> PendingDocuments() override {
    ASSIGN_OR_RETURN(store::TextIndexState state, backend_->TextIndexProgress());
    return state.pending;
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
      const std::string files = backend_->FilesDirectory();
      ASSIGN_OR_RETURN(std::optional<std::string> saved, backend_->GetMeta("hnsw:" + model));
      int64_t covered = 0, count = 0, dims = 0;
      if (saved) std::istringstream(*saved) >> covered >> count >> dims;
      if (saved && !files.empty() && count >= options_.approximate_threshold && !hnsw_damaged_) {
        const std::string path = (fs::path(files) / HnswFileName(model)).string();
        // Sealed when the store is encrypted: decrypted into memory then.
        Result<std::unique_ptr<HnswIndex>> loaded =
            HnswIndex::Load(path, static_cast<int>(dims), backend_->FilesKey());
        // A file that is not the one the meta describes (a save whose meta
        // never followed: the rename went through, the folder's fsync failed)
        // would count its newer vectors twice; it is left unused.
        if (loaded && (*loaded)->size() == static_cast<size_t>(count)) {
          hnsw_ = std::move(*loaded);
          loaded_upto_ = covered;
        }
        // A lost, damaged or unmatched file (or one that does not decrypt)
        // only costs speed: the exact scan takes over.
      }
    }
    ASSIGN_OR_RETURN(loaded_upto_, LoadVectors(backend_.get(), model, loaded_upto_, &exact_));
    return Status::Ok();
  }

  // Appends to `hits` the page `request` asks for of `fused` (its offset and
  // limit counted over the documents still present), with details and
  // snippets: the backend's for keyword hits, the text's start otherwise.
  Status ShowPage(const std::vector<FusedEntry>& fused, const store::TextQuery& query,
                  const std::vector<std::string>& terms, const SearchRequest& request,
                  std::vector<SearchHit>* hits) {
    const size_t limit = static_cast<size_t>(request.limit);
    const size_t offset = static_cast<size_t>(request.offset);
    size_t skipped = 0;
    size_t next = 0;
    // The page's documents are loaded in batches (one query each on
    // PostgreSQL): the hits still wanted, plus a few for documents gone
    // since the ranking; more batches only if those run out.
    while (hits->size() < limit && next < fused.size()) {
      const size_t wanted = (limit - hits->size()) + (offset - std::min(offset, skipped)) + 4;
      const size_t end = std::min(fused.size(), next + wanted);
      std::vector<store::IndexBackend::PageRequest> batch;
      for (size_t i = next; i < end; ++i) {
        batch.push_back({.doc_id = fused[i].doc_id, .keyword = fused[i].keyword_rank > 0});
      }
      ASSIGN_OR_RETURN(std::vector<store::IndexBackend::PageDocument> loaded,
                       backend_->LoadPage(query, batch));
      for (size_t i = next; i < end && hits->size() < limit; ++i) {
        store::IndexBackend::PageDocument& doc = loaded[i - next];
        if (!doc.present) continue;
        if (skipped++ < offset) continue;
        const FusedEntry& f = fused[i];
        SearchHit hit = std::move(doc.hit);
        hit.score = f.score;
        hit.keyword_rank = f.keyword_rank;
        hit.keyword_score = f.keyword_score;
        hit.vector_rank = f.vector_rank;
        hit.vector_score = f.vector_score;
        store::Snippet snippet = std::move(doc.snippet);
        if (f.keyword_rank <= 0 && doc.text) snippet = LeadSnippet(*doc.text, terms);
        // Shown as text by every face, which marks the matches its own way.
        snippet = PlainSnippet(snippet);
        hit.snippet = std::move(snippet.text);
        hit.highlights = std::move(snippet.highlights);
        hits->push_back(std::move(hit));
      }
      next = end;
    }
    return Status::Ok();
  }

  // The vector hits whose document holds none of `excluded` (and still exists).
  Result<std::vector<ListEntry>> WithoutExcluded(std::vector<ListEntry> hits,
                                                 std::span<const store::TextPhrase> excluded) {
    if (excluded.empty()) return hits;
    std::vector<ListEntry> kept;
    for (ListEntry& hit : hits) {
      ASSIGN_OR_RETURN(std::optional<std::string> text, backend_->ReadDocumentText(hit.doc_id));
      if (text && !HoldsAnyPhrase(*text, excluded)) kept.push_back(hit);
    }
    return kept;
  }

  // A project filter as the backends take it (index_backend.h): the folder,
  // normal, with one '/' after it, so /src/app finds /src/app and what lies
  // under it, never /src/application.
  static std::string FolderPrefix(std::string_view project) {
    std::string folder = NormalProjectPath(project);
    if (folder.empty() || folder.back() != '/') folder += '/';
    return folder;
  }

  static std::string JoinWords(const std::vector<std::string>& words) {
    std::string joined;
    for (const std::string& w : words) joined += (joined.empty() ? "" : " ") + w;
    return joined;
  }

  Result<std::vector<ListEntry>> RankVector(const std::string& query, const SearchFilter& filter,
                                            size_t want) {
    RETURN_IF_ERROR(embedder_error_);
    std::vector<std::string> texts = {query};
    ASSIGN_OR_RETURN(std::vector<std::vector<float>> q, embedder_->Embed(texts));
    RETURN_IF_ERROR(RefreshVectors());
    std::vector<VectorHit> hits;
    if (store::FilterIsEmpty(filter)) {
      ASSIGN_OR_RETURN(hits, NearestVectors(q[0], want, {}));
    } else {
      ASSIGN_OR_RETURN(hits, NearestPassingFilter(q[0], filter, want));
    }
    std::vector<ListEntry> out;
    for (const VectorHit& h : hits) {
      if (h.score >= options_.min_vector_score) out.push_back({h.id, h.score});
    }
    return out;
  }

  // The `want` nearest vectors that pass `filter`. A broad filter (a role,
  // a time range, a project of most of the store) is checked on the nearest
  // of all: candidates 4 times the page (at least 256), 4 times as many
  // while too few pass, up to 4,096; one statement each, driven by the
  // candidates (an exact scan costs the same at any width: it takes 4,096 at
  // once). A filter those do not satisfy, or one on a session (a few
  // documents, found by its index), lists every document it passes for the
  // search to walk among: for a broad filter that statement reads most of
  // the store (3 s for a role at a million on PostgreSQL).
  Result<std::vector<VectorHit>> NearestPassingFilter(std::span<const float> q,
                                                      const SearchFilter& filter, size_t want) {
    constexpr size_t kWidest = 4096;
    size_t wide = hnsw_ != nullptr ? std::max<size_t>(want * 4, 256) : kWidest;
    while (filter.session_id.empty() && want <= kWidest / 4 && wide <= kWidest) {
      ASSIGN_OR_RETURN(std::vector<VectorHit> nearest, NearestVectors(q, wide, {}));
      std::vector<int64_t> ids;
      ids.reserve(nearest.size());
      for (const VectorHit& h : nearest) ids.push_back(h.id);
      ASSIGN_OR_RETURN(std::vector<int64_t> passing,
                       backend_->CandidatesPassingFilter(filter, ids));
      std::vector<VectorHit> kept;
      for (const VectorHit& h : nearest) {
        if (kept.size() == want) break;
        if (std::binary_search(passing.begin(), passing.end(), h.id)) kept.push_back(h);
      }
      // Enough; or every vector seen; or, from a full answer, the rest too
      // far to be hits. Counted, not inferred from a short answer: among
      // many equal vectors a graph walk returns fewer than it is asked for,
      // and then the exact scan below (the walk widened to the whole index)
      // finds what it missed.
      const size_t held =
          (hnsw_ != nullptr ? hnsw_->size() : 0) + (exact_ != nullptr ? exact_->size() : 0);
      const bool all_seen = nearest.size() >= held;
      const bool rest_too_far = nearest.size() == wide && !nearest.empty() &&
                                nearest.back().score < options_.min_vector_score;
      if (kept.size() == want || all_seen || rest_too_far) return kept;
      if (wide >= held || wide == kWidest) break;
      wide = std::min(kWidest, wide * 4);
    }
    ASSIGN_OR_RETURN(store::FilteredDocs allowed, backend_->DocsPassingFilter(filter));
    std::function<bool(int64_t)> accept;
    if (!allowed.unfiltered) {
      accept = [&allowed](int64_t id) {
        return std::binary_search(allowed.doc_ids.begin(), allowed.doc_ids.end(), id);
      };
    }
    return NearestVectors(q, want, accept);
  }

  // The `want` nearest vectors (only ids `accept` takes, when set), best
  // first: the saved graph's and the exact set's, merged.
  Result<std::vector<VectorHit>> NearestVectors(std::span<const float> q, size_t want,
                                                const std::function<bool(int64_t)>& accept) {
    std::vector<VectorHit> approx;
    if (hnsw_ != nullptr) {
      Result<std::vector<VectorHit>> found = hnsw_->Search(
          q, want, std::max<size_t>(want, static_cast<size_t>(options_.hnsw_ef)), accept);
      if (found) {
        approx = std::move(*found);
      } else {
        // The mapped file is damaged where this search walked: it is not used
        // again by this index (BuildVectorIndex writes a new one), and every
        // vector is loaded for the exact scan instead.
        hnsw_damaged_ = true;
        ResetVectors();
        RETURN_IF_ERROR(RefreshVectors());
      }
    }
    std::vector<VectorHit> hits;
    if (exact_ != nullptr) hits = exact_->Search(q, want, accept);
    if (hnsw_ != nullptr) {
      hits.insert(hits.end(), approx.begin(), approx.end());
      std::sort(hits.begin(), hits.end(),
                [](const VectorHit& a, const VectorHit& b) { return a.score > b.score; });
      if (hits.size() > want) hits.resize(want);
    }
    return hits;
  }

  SearchOptions options_;
  // Declared before backend_, so the backend is destroyed first: it must not
  // outlive its Store.
  std::unique_ptr<Store> owned_store_;
  std::unique_ptr<store::IndexBackend> backend_;
  std::unique_ptr<Embedder> embedder_;
  Status embedder_error_ = Status::Ok();
  bool vectors_loaded_ = false;
  // Set when a search found the saved index damaged; cleared by a rebuild.
  bool hnsw_damaged_ = false;
  int64_t loaded_upto_ = 0;
  std::unique_ptr<VectorSet> exact_;
  std::unique_ptr<HnswIndex> hnsw_;
};

}  // namespace
}  // namespace search

Result<std::unique_ptr<SearchIndex>> SearchIndex::Open(Store& store, const SearchOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<store::IndexBackend> backend, store.OpenIndexBackend());
  return std::unique_ptr<SearchIndex>(
      new search::BackendSearchIndex(options, std::move(backend), nullptr));
}

Result<std::unique_ptr<SearchIndex>> SearchIndex::Open(const std::string& store_path,
                                                       const SearchOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
                   search::OpenExistingStore(store_path, options.busy_timeout_ms));
  ASSIGN_OR_RETURN(std::unique_ptr<store::IndexBackend> backend, store->OpenIndexBackend());
  return std::unique_ptr<SearchIndex>(
      new search::BackendSearchIndex(options, std::move(backend), std::move(store)));
}

}  // namespace sessiondb
