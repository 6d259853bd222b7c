#include "search/vector_index.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

// hnswlib 0.6's SSE path prefetches one element past a node's link list
// (hnswalg.h, searchBaseLayer: *(datal + j + 1) for the last j): harmless
// for a prefetch, but AddressSanitizer reports a heap overflow. Under ASan
// hnswlib takes its portable path, which has no prefetch and gives the same
// results, so the sanitizer runs check our code, not that over-read.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_MANUAL_VECTORIZATION
#endif
#endif
// After the standard headers: hnswlib's headers rely on them.
#include <hnswlib/hnswlib.h>

#include "core/file_io.h"
#include "search/dot.h"
#include "search/fnv.h"
#include "search/mapped_hnsw.h"

namespace sessiondb::search {
namespace {

using Hnsw = hnswlib::HierarchicalNSW<float>;
using hnswlib::labeltype;
using hnswlib::linklistsizeint;
using hnswlib::tableint;

constexpr char kMagicV1[8] = {'S', 'D', 'B', 'H', 'N', 'S', 'W', '1'};
constexpr size_t kHeaderBytesV1 = 8 + 4 + 4 + 8 + 8 + 8;

// Keeps the best-first order total: higher score, then lower id.
bool Better(const VectorHit& a, const VectorHit& b) {
  return a.score > b.score || (a.score == b.score && a.id < b.id);
}

// Keeps the k best hits pushed into it; Take() returns them best first.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(std::min<size_t>(k, 1 << 16)); }
  void Push(VectorHit hit) {
    if (k_ == 0) return;
    if (heap_.size() < k_) {
      heap_.push_back(hit);
      std::push_heap(heap_.begin(), heap_.end(), Better);  // front: the worst kept
    } else if (Better(hit, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Better);
      heap_.back() = hit;
      std::push_heap(heap_.begin(), heap_.end(), Better);
    }
  }
  std::vector<VectorHit> Take() {
    std::sort_heap(heap_.begin(), heap_.end(), Better);
    return std::move(heap_);
  }

 private:
  size_t k_;
  std::vector<VectorHit> heap_;
};

template <typename T>
void Put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

// Reads PODs from a byte buffer; every read is bounds-checked.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  bool Get(T* value) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  // The next n bytes, or nullopt if fewer remain.
  std::optional<std::string_view> Take(uint64_t n) {
    if (bytes_.size() - pos_ < n) return std::nullopt;
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// The sealed form of an index file (vector_index.h, issue 35).
constexpr char kSealedMagic[8] = {'S', 'D', 'B', 'H', 'N', 'S', 'W', 'E'};
constexpr uint32_t kSealedVersion = 1;
constexpr size_t kSealedHeaderBytes = 8 + 4 + 4 + 8;
constexpr uint64_t kSealedChunkBytes = uint64_t{1} << 20;
// A header may name another chunk size (a later writer's), up to this.
constexpr uint64_t kMaxSealedChunkBytes = uint64_t{1} << 30;

std::string SealedHeader(uint32_t chunk_bytes, uint64_t plain_bytes) {
  std::string header(kSealedMagic, sizeof(kSealedMagic));
  Put(header, kSealedVersion);
  Put(header, chunk_bytes);
  Put(header, plain_bytes);
  return header;
}

uint64_t SealedChunks(uint64_t plain_bytes, uint64_t chunk_bytes) {
  return std::max<uint64_t>(1, (plain_bytes + chunk_bytes - 1) / chunk_bytes);
}

std::string SealedAssociated(std::string_view base_name, std::string_view header, uint64_t i,
                             bool last) {
  std::string ad("sdb-hnsw");
  ad.push_back('\0');
  ad += base_name;
  ad.push_back('\0');
  ad += header;
  Put(ad, i);
  ad.push_back(last ? '\1' : '\0');
  return ad;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// `plain` (an index file's bytes) sealed under `key` for the file `path`.
std::string SealIndexFile(const cipher::SecretKey& key, const std::string& path,
                          std::string_view plain) {
  const std::string header = SealedHeader(static_cast<uint32_t>(kSealedChunkBytes), plain.size());
  const std::string base_name = BaseName(path);
  const uint64_t chunks = SealedChunks(plain.size(), kSealedChunkBytes);
  std::string out = header;
  out.resize(header.size() + plain.size() + chunks * cipher::kSealOverhead);
  size_t at = header.size();
  for (uint64_t i = 0; i < chunks; ++i) {
    const std::string_view chunk = plain.substr(i * kSealedChunkBytes, kSealedChunkBytes);
    auto* data = reinterpret_cast<uint8_t*>(out.data() + at);
    if (!chunk.empty()) std::memcpy(data, chunk.data(), chunk.size());
    cipher::SealInPlace(key, data, chunk.size(),
                        SealedAssociated(base_name, header, i, i + 1 == chunks),
                        data + chunk.size());
    at += chunk.size() + cipher::kSealOverhead;
  }
  return out;
}

// Reads exactly `n` bytes at `offset` of `fd`; false at the end of the file.
Result<bool> ReadAt(int fd, char* out, size_t n, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Err(IoError("cannot read vector index", path));
    }
    if (got == 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

// The plaintext of the sealed index file `path`, decrypted under `key` into
// private memory a chunk at a time (no second copy of the file).
Result<std::unique_ptr<MappedFile>> OpenSealedIndexFile(const std::string& path,
                                                        const cipher::SecretKey& key) {
  auto corrupt = [&path](const std::string& why) {
    return Err(Status::Corruption("vector index " + path + " does not decrypt (" + why +
                                  "); delete it to rebuild it"));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Err(Status::NotFound("vector index " + path + " does not exist"));
    return Err(IoError("cannot open vector index", path));
  }
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Err(IoError("cannot stat vector index", path));
  std::string header(kSealedHeaderBytes, '\0');
  ASSIGN_OR_RETURN(bool whole, ReadAt(fd, header.data(), header.size(), 0, path));
  if (!whole || std::memcmp(header.data(), kSealedMagic, sizeof(kSealedMagic)) != 0) {
    return corrupt("not a sealed index: a plaintext or foreign file where a key is configured");
  }
  Reader in(std::string_view(header).substr(sizeof(kSealedMagic)));
  uint32_t version = 0, chunk_bytes = 0;
  uint64_t plain_bytes = 0;
  in.Get(&version);
  in.Get(&chunk_bytes);
  in.Get(&plain_bytes);
  if (version != kSealedVersion) return corrupt("unknown version " + std::to_string(version));
  if (chunk_bytes == 0 || chunk_bytes > kMaxSealedChunkBytes ||
      plain_bytes > static_cast<uint64_t>(st.st_size)) {
    return corrupt("impossible sizes");
  }
  const uint64_t chunks = SealedChunks(plain_bytes, chunk_bytes);
  if (static_cast<uint64_t>(st.st_size) !=
      kSealedHeaderBytes + plain_bytes + chunks * cipher::kSealOverhead) {
    return corrupt("truncated or overlong");
  }
  const std::string base_name = BaseName(path);
  return MappedFile::Anonymous(plain_bytes, [&](char* plain) -> Status {
    uint64_t at = kSealedHeaderBytes;
    uint8_t trailer[cipher::kSealOverhead];
    for (uint64_t i = 0; i < chunks; ++i) {
      const uint64_t n = std::min<uint64_t>(chunk_bytes, plain_bytes - i * chunk_bytes);
      auto* data = reinterpret_cast<uint8_t*>(plain + i * chunk_bytes);
      ASSIGN_OR_RETURN(bool got, ReadAt(fd, reinterpret_cast<char*>(data), n, at, path));
      if (got) {
        ASSIGN_OR_RETURN(
            got, ReadAt(fd, reinterpret_cast<char*>(trailer), sizeof(trailer), at + n, path));
      }
      if (!got) return corrupt("it shrank while being read").value();
      if (!cipher::OpenInPlace(key, data, n,
                               SealedAssociated(base_name, header, i, i + 1 == chunks), trailer)) {
        return corrupt("chunk " + std::to_string(i) + " of " + std::to_string(chunks) +
                       " fails authentication: another key, a changed byte, or a file moved "
                       "from another name")
            .value();
      }
      at += n + cipher::kSealOverhead;
    }
    return Status::Ok();
  });
}

}  // namespace

// ---------------------------------------------------------------------------
// VectorSet

VectorSet::VectorSet(int dims) : dims_(dims) {}

void VectorSet::Add(int64_t id, std::span<const float> v) {
  assert(v.size() == static_cast<size_t>(dims_));
  if (v.size() != static_cast<size_t>(dims_)) return;
  ids_.push_back(id);
  values_.insert(values_.end(), v.begin(), v.end());
}

std::span<const float> VectorSet::vector_at(size_t i) const {
  return std::span<const float>(values_).subspan(i * dims_, dims_);
}

std::vector<VectorHit> VectorSet::Search(std::span<const float> query, size_t k,
                                         const std::function<bool(int64_t)>& accept) const {
  if (query.size() != static_cast<size_t>(dims_) || k == 0) return {};
  TopK top(std::min(k, ids_.size()));
  const size_t dims = static_cast<size_t>(dims_);
  for (size_t i = 0; i < ids_.size(); ++i) {
    if (accept && !accept(ids_[i])) continue;
    top.Push({ids_[i], Dot(query.data(), values_.data() + i * dims, dims)});
  }
  return top.Take();
}

// ---------------------------------------------------------------------------
// HnswIndex

struct HnswIndex::Graph {
  explicit Graph(int dims) : space(static_cast<size_t>(dims)) {}
  hnswlib::InnerProductSpace space;  // must outlive hnsw, which points into it
  std::unique_ptr<Hnsw> hnsw;

  // Candidates for `query` with search breadth `ef`, nearest first, as
  // (distance = 1 - dot, internal id). Like hnswlib's searchKnn, but with
  // `ef` as an argument rather than the shared ef_ member, so concurrent
  // searches with different breadths do not race.
  std::vector<std::pair<float, tableint>> Candidates(const float* query, size_t ef) const {
    const Hnsw& h = *hnsw;
    std::vector<std::pair<float, tableint>> out;
    if (h.cur_element_count == 0) return out;
    tableint current = h.enterpoint_node_;
    float current_dist = h.fstdistfunc_(query, h.getDataByInternalId(current), h.dist_func_param_);
    for (int level = h.maxlevel_; level > 0; --level) {
      bool changed = true;
      while (changed) {
        changed = false;
        linklistsizeint* list = h.get_linklist(current, level);
        const int count = h.getListCount(list);
        const tableint* neighbours = reinterpret_cast<const tableint*>(list + 1);
        for (int i = 0; i < count; ++i) {
          const float d =
              h.fstdistfunc_(query, h.getDataByInternalId(neighbours[i]), h.dist_func_param_);
          if (d < current_dist) {
            current_dist = d;
            current = neighbours[i];
            changed = true;
          }
        }
      }
    }
    auto top = h.searchBaseLayerST<false, false>(current, query, ef);
    out.resize(top.size());
    for (size_t i = out.size(); i-- > 0;) {  // the queue pops the farthest first
      out[i] = top.top();
      top.pop();
    }
    return out;
  }

  VectorHit Hit(const std::pair<float, tableint>& candidate) const {
    return {static_cast<int64_t>(hnsw->getExternalLabel(candidate.second)), 1.0f - candidate.first};
  }
};

HnswIndex::HnswIndex(int dims, std::unique_ptr<Graph> graph)
    : dims_(dims), graph_(std::move(graph)) {}

HnswIndex::HnswIndex(int dims, std::unique_ptr<MappedHnsw> mapped)
    : dims_(dims), mapped_(std::move(mapped)) {}

HnswIndex::~HnswIndex() = default;

size_t HnswIndex::size() const {
  return graph_ != nullptr ? graph_->hnsw->cur_element_count : mapped_->size();
}

Result<std::unique_ptr<HnswIndex>> HnswIndex::Build(const VectorSet& set,
                                                    const ProgressFn& progress, int m,
                                                    int ef_construction, int threads) {
  if (set.dims() < 1) return Err(Status::InvalidArgument("vectors need at least one dimension"));
  if (m < 2 || m > 1000 || ef_construction < 1 || threads < 1) {
    return Err(Status::InvalidArgument(
        "HNSW parameters m=" + std::to_string(m) + ", ef_construction=" +
        std::to_string(ef_construction) + ", threads=" + std::to_string(threads) +
        " are out of range (m 2..1000, ef_construction >= 1, threads >= 1)"));
  }
  const size_t n = set.size();
  if (n >= std::numeric_limits<tableint>::max()) {
    return Err(Status::InvalidArgument("an HNSW index holds at most 4 billion vectors"));
  }
  std::unordered_set<int64_t> ids;
  ids.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t id = set.id_at(i);
    if (id < 0)
      return Err(Status::InvalidArgument("vector id " + std::to_string(id) + " is negative"));
    if (!ids.insert(id).second) {
      return Err(Status::InvalidArgument("vector id " + std::to_string(id) + " appears twice"));
    }
  }

  auto graph = std::make_unique<Graph>(set.dims());
  try {
    graph->hnsw =
        std::make_unique<Hnsw>(&graph->space, std::max<size_t>(n, 1), static_cast<size_t>(m),
                               static_cast<size_t>(ef_construction));
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::string error;
    auto work = [&](bool reports) {
      try {
        for (size_t i = next++; i < n && !failed; i = next++) {
          graph->hnsw->addPoint(set.vector_at(i).data(), static_cast<labeltype>(set.id_at(i)));
          const size_t d = ++done;
          if (reports && progress && d % 1024 == 0)
            progress(static_cast<int64_t>(d), static_cast<int64_t>(n));
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(error_mutex);
        if (error.empty()) error = e.what();
        failed = true;
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (error.empty()) error = "unknown exception";
        failed = true;
      }
    };
    // The first point becomes the entry point; hnswlib's concurrent inserts
    // assume it is there.
    if (n > 0) {
      graph->hnsw->addPoint(set.vector_at(0).data(), static_cast<labeltype>(set.id_at(0)));
      next = 1;
      done = 1;
    }
    std::vector<std::thread> workers;
    const size_t helpers = std::min<size_t>(static_cast<size_t>(threads) - 1, n / 256);
    for (size_t t = 0; t < helpers; ++t) workers.emplace_back(work, false);
    work(true);  // this thread reports progress: callers need not be thread-safe
    for (std::thread& w : workers) w.join();
    if (failed) return Err(Status::Internal("building the HNSW index failed: " + error));
  } catch (const std::exception& e) {
    return Err(Status::Internal(std::string("building the HNSW index failed: ") + e.what()));
  }
  if (progress) progress(static_cast<int64_t>(n), static_cast<int64_t>(n));
  return std::unique_ptr<HnswIndex>(new HnswIndex(set.dims(), std::move(graph)));
}

Result<std::vector<VectorHit>> HnswIndex::Nearest(const float* query, size_t breadth) const {
  std::vector<VectorHit> hits;
  if (graph_ != nullptr) {
    for (const auto& candidate : graph_->Candidates(query, breadth)) {
      hits.push_back(graph_->Hit(candidate));
    }
    return hits;
  }
  ASSIGN_OR_RETURN(auto candidates, mapped_->Candidates(query, breadth));
  hits.reserve(candidates.size());
  for (const auto& [distance, element] : candidates) {
    ASSIGN_OR_RETURN(int64_t id, mapped_->Id(element));
    hits.push_back({id, 1.0f - distance});
  }
  return hits;
}

Result<std::vector<VectorHit>> HnswIndex::Scan(const float* query, size_t k,
                                               const std::function<bool(int64_t)>& accept) const {
  TopK top(k);
  auto consider = [&](int64_t id, const float* vector) {
    if (accept && !accept(id)) return;
    top.Push({id, Dot(query, vector, static_cast<size_t>(dims_))});
  };
  if (mapped_ != nullptr) {
    RETURN_IF_ERROR(mapped_->ForEachVector(consider));
    return top.Take();
  }
  const size_t n = size();
  for (size_t i = 0; i < n; ++i) {
    const auto element = static_cast<tableint>(i);
    consider(static_cast<int64_t>(graph_->hnsw->getExternalLabel(element)),
             reinterpret_cast<const float*>(graph_->hnsw->getDataByInternalId(element)));
  }
  return top.Take();
}

Result<std::vector<VectorHit>> HnswIndex::Search(std::span<const float> query, size_t k, size_t ef,
                                                 const std::function<bool(int64_t)>& accept) const {
  const size_t n = size();
  if (query.size() != static_cast<size_t>(dims_) || k == 0 || n == 0) {
    return std::vector<VectorHit>{};
  }
  size_t breadth = std::max(ef, k);
  try {
    for (;;) {
      if (accept && breadth >= n) break;  // as wide as the index: scan it exactly below
      ASSIGN_OR_RETURN(std::vector<VectorHit> candidates, Nearest(query.data(), breadth));
      std::vector<VectorHit> hits;
      for (const VectorHit& hit : candidates) {
        if (accept && !accept(hit.id)) continue;
        hits.push_back(hit);
        if (hits.size() == k) break;
      }
      if (hits.size() == k || !accept) {
        std::stable_sort(hits.begin(), hits.end(), Better);
        return hits;
      }
      breadth = std::min(n, breadth * 4);
    }
  } catch (const std::exception&) {
    // Only memory runs out here (hnswlib's visited lists and queues, ours);
    // the scan needs none beyond k hits.
  }
  // Few accepted ids: the graph walk keeps finding rejected ones; scan all.
  return Scan(query.data(), k, accept);
}

Status HnswIndex::Save(const std::string& path, FileSystem* fs,
                       const cipher::SecretKey* key) const {
  // A mapped index is already the file (its plaintext): copied as it is.
  if (mapped_ != nullptr) {
    if (key == nullptr) return ReplaceFileDurably(path, mapped_->bytes(), fs);
    return ReplaceFileDurably(path, SealIndexFile(*key, path, mapped_->bytes()), fs);
  }
  const Hnsw& h = *graph_->hnsw;
  const size_t count = h.cur_element_count;
  HnswFileHeader header{};
  std::memcpy(header.magic, kHnswMagicV2, sizeof(header.magic));
  header.dims = static_cast<uint32_t>(dims_);
  header.m = static_cast<uint32_t>(h.M_);
  header.count = count;
  header.max_level = count > 0 ? static_cast<uint32_t>(h.maxlevel_) : 0;
  header.entry_point = count > 0 ? h.enterpoint_node_ : 0;
  header.ef_construction = h.ef_construction_;
  header.mult = h.mult_;
  header.element_bytes = HnswElementBytes(header.dims, header.m);
  header.level0_offset = kHnswHeaderBytes;
  header.upper_offset = kHnswHeaderBytes + count * header.element_bytes;
  if (h.size_data_per_element_ != header.element_bytes || h.maxM_ != h.M_ || h.maxM0_ != 2 * h.M_ ||
      h.offsetLevel0_ != 0) {
    return Status::Internal("hnswlib's layout is not the one the index file describes");
  }

  // The upper block: an entry per element above level 0, then their lists.
  std::string upper;
  for (size_t i = 0; i < count; ++i) {
    if (h.element_levels_[i] <= 0) continue;
    Put(upper, static_cast<uint32_t>(i));
    Put(upper, static_cast<uint32_t>(h.element_levels_[i]));
    ++header.upper_count;
  }
  for (size_t i = 0; i < count; ++i) {
    if (h.element_levels_[i] <= 0) continue;
    upper.append(h.linkLists_[i], h.size_links_per_element_ * h.element_levels_[i]);
  }
  const std::string_view level0(h.data_level0_memory_, count * h.size_data_per_element_);
  header.upper_bytes = upper.size();
  header.level0_fnv = Fnv1a64(level0);
  header.upper_fnv = Fnv1a64(upper);
  header.header_fnv = Fnv1a64(std::string_view(reinterpret_cast<const char*>(&header),
                                               offsetof(HnswFileHeader, header_fnv)));

  std::string file;
  file.reserve(kHnswHeaderBytes + level0.size() + upper.size());
  Put(file, header);
  file.resize(kHnswHeaderBytes, '\0');
  file += level0;
  file += upper;
  if (key != nullptr) file = SealIndexFile(*key, path, file);
  return ReplaceFileDurably(path, file, fs);
}

Result<std::unique_ptr<HnswIndex>> HnswIndex::Load(const std::string& path, int dims,
                                                   const cipher::SecretKey* key) {
  if (dims < 1) return Err(Status::InvalidArgument("vectors need at least one dimension"));
  if (key != nullptr) {
    ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, OpenSealedIndexFile(path, *key));
    // Only version 2 is ever sealed.
    ASSIGN_OR_RETURN(std::unique_ptr<MappedHnsw> mapped,
                     MappedHnsw::Open(std::move(file), path, dims));
    return std::unique_ptr<HnswIndex>(new HnswIndex(dims, std::move(mapped)));
  }
  Result<std::unique_ptr<MappedFile>> mapped_file = MappedFile::Open(path);
  if (!mapped_file && mapped_file.error().code() == StatusCode::kNotFound) {
    return Err(Status::NotFound("vector index " + path + " does not exist"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, std::move(mapped_file));
  const std::string_view bytes = file->bytes();
  if (bytes.size() >= sizeof(kMagicV1) &&
      std::memcmp(bytes.data(), kMagicV1, sizeof(kMagicV1)) == 0) {
    return LoadVersion1(bytes, path, dims);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<MappedHnsw> mapped,
                   MappedHnsw::Open(std::move(file), path, dims));
  return std::unique_ptr<HnswIndex>(new HnswIndex(dims, std::move(mapped)));
}

Status HnswIndex::Verify() const { return mapped_ != nullptr ? mapped_->Verify() : Status::Ok(); }

// A version 1 file (before issue 19): checked whole and copied into hnswlib.
Result<std::unique_ptr<HnswIndex>> HnswIndex::LoadVersion1(std::string_view file,
                                                           const std::string& path, int dims) {
  auto corrupt = [&path](const std::string& why) {
    return Err(Status::Corruption("vector index " + path + " is damaged (" + why +
                                  "); delete it to rebuild it"));
  };
  if (file.size() < kHeaderBytesV1) return corrupt("not a sessiondb HNSW index");
  Reader header(file.substr(sizeof(kMagicV1), kHeaderBytesV1 - sizeof(kMagicV1)));
  uint32_t file_dims = 0, reserved = 0;
  uint64_t count = 0, payload_bytes = 0, checksum = 0;
  header.Get(&file_dims);
  header.Get(&reserved);
  header.Get(&count);
  header.Get(&payload_bytes);
  header.Get(&checksum);
  if (file_dims != static_cast<uint32_t>(dims)) {
    return Err(Status::Corruption("vector index " + path + " holds " + std::to_string(file_dims) +
                                  "-dimensional vectors, not " + std::to_string(dims)));
  }
  const std::string_view payload = file.substr(kHeaderBytesV1);
  if (payload.size() != payload_bytes) return corrupt("truncated or overlong");
  if (Fnv1a64(payload) != checksum) return corrupt("checksum mismatch");

  // The checksum catches damage; these checks keep a well-formed but wrong
  // file (another hnswlib version, a bug) from sending a search out of bounds.
  Reader in(payload);
  size_t offset_level0 = 0, max_elements = 0, element_count = 0, size_per_element = 0,
         label_offset = 0, offset_data = 0, max_m = 0, max_m0 = 0, m = 0, ef_construction = 0;
  int max_level = 0;
  tableint entry_point = 0;
  double mult = 0;
  if (!in.Get(&offset_level0) || !in.Get(&max_elements) || !in.Get(&element_count) ||
      !in.Get(&size_per_element) || !in.Get(&label_offset) || !in.Get(&offset_data) ||
      !in.Get(&max_level) || !in.Get(&entry_point) || !in.Get(&max_m) || !in.Get(&max_m0) ||
      !in.Get(&m) || !in.Get(&mult) || !in.Get(&ef_construction)) {
    return corrupt("short header");
  }
  const size_t data_bytes = static_cast<size_t>(dims) * sizeof(float);
  const size_t links0_bytes = max_m0 * sizeof(tableint) + sizeof(linklistsizeint);
  if (element_count != count || m < 2 || m > 1000 || max_m != m || max_m0 != 2 * m ||
      offset_level0 != 0 || offset_data != links0_bytes ||
      label_offset != links0_bytes + data_bytes ||
      size_per_element != links0_bytes + data_bytes + sizeof(labeltype) || ef_construction < m ||
      !(mult > 0) || !std::isfinite(mult) || count >= std::numeric_limits<tableint>::max() ||
      (count > 0 && (max_level < 0 || max_level > 64 || entry_point >= count))) {
    return corrupt("inconsistent parameters");
  }
  if (count > in.remaining() / size_per_element) return corrupt("short data");
  const std::string_view level0 = *in.Take(count * size_per_element);
  const size_t links_bytes = max_m * sizeof(tableint) + sizeof(linklistsizeint);
  std::vector<int> levels(count);
  std::vector<std::string_view> upper(count);
  for (size_t i = 0; i < count; ++i) {
    unsigned int bytes = 0;
    if (!in.Get(&bytes)) return corrupt("short link lists");
    if (bytes % links_bytes != 0 || bytes / links_bytes > static_cast<size_t>(max_level)) {
      return corrupt("bad link list size");
    }
    levels[i] = static_cast<int>(bytes / links_bytes);
    auto lists = in.Take(bytes);
    if (!lists) return corrupt("short link lists");
    upper[i] = *lists;
  }
  if (in.remaining() != 0) return corrupt("trailing bytes");
  if (count > 0 && levels[entry_point] != max_level) return corrupt("bad entry point");
  // Every neighbour is an element that has the level it is linked on.
  auto check_list = [&](const char* list, size_t max_count, int level) {
    linklistsizeint raw = 0;
    std::memcpy(&raw, list, sizeof(raw));
    const size_t n = raw & 0xffff;  // hnswlib keeps the count in the low 16 bits
    if (n > max_count) return false;
    for (size_t j = 0; j < n; ++j) {
      tableint neighbour = 0;
      std::memcpy(&neighbour, list + sizeof(linklistsizeint) + j * sizeof(tableint),
                  sizeof(neighbour));
      if (neighbour >= count || levels[neighbour] < level) return false;
    }
    return true;
  };
  for (size_t i = 0; i < count; ++i) {
    if (!check_list(level0.data() + i * size_per_element, max_m0, 0)) return corrupt("bad links");
    for (int level = 1; level <= levels[i]; ++level) {
      if (!check_list(upper[i].data() + (level - 1) * links_bytes, max_m, level)) {
        return corrupt("bad links");
      }
    }
    labeltype label = 0;
    std::memcpy(&label, level0.data() + i * size_per_element + label_offset, sizeof(label));
    if (label > static_cast<labeltype>(std::numeric_limits<int64_t>::max())) {
      return corrupt("bad id");
    }
  }

  auto graph = std::make_unique<Graph>(dims);
  try {
    // A freshly constructed index of the right shape, then filled in: its
    // allocations and locks are hnswlib's own.
    graph->hnsw =
        std::make_unique<Hnsw>(&graph->space, std::max<size_t>(count, 1), m, ef_construction);
    Hnsw& h = *graph->hnsw;
    if (h.size_data_per_element_ != size_per_element) return corrupt("unsupported layout");
    std::memcpy(h.data_level0_memory_, level0.data(), level0.size());
    h.label_lookup_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      h.element_levels_[i] = levels[i];
      h.linkLists_[i] = nullptr;
      if (levels[i] > 0) {
        h.linkLists_[i] = static_cast<char*>(std::malloc(upper[i].size()));
        if (h.linkLists_[i] == nullptr) throw std::bad_alloc();
        std::memcpy(h.linkLists_[i], upper[i].data(), upper[i].size());
      }
      h.cur_element_count = i + 1;  // the destructor frees what is counted
      h.label_lookup_[h.getExternalLabel(static_cast<tableint>(i))] = static_cast<tableint>(i);
    }
    h.maxlevel_ = count > 0 ? max_level : -1;
    h.enterpoint_node_ = count > 0 ? entry_point : static_cast<tableint>(-1);
    h.mult_ = mult;
    h.revSize_ = 1.0 / mult;
  } catch (const std::exception& e) {
    return Err(Status::Internal("cannot load vector index " + path + ": " + e.what()));
  }
  return std::unique_ptr<HnswIndex>(new HnswIndex(dims, std::move(graph)));
}

double RecallAtK(std::span<const VectorHit> exact, std::span<const VectorHit> approx) {
  if (exact.empty()) return 1.0;
  std::unordered_set<int64_t> wanted;
  for (const VectorHit& hit : exact) wanted.insert(hit.id);
  size_t found = 0;
  for (const VectorHit& hit : approx) found += wanted.erase(hit.id);
  return static_cast<double>(found) / static_cast<double>(exact.size());
}

}  // namespace sessiondb::search
