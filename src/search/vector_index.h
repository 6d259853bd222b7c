// Nearest-neighbour search over unit vectors by cosine similarity.
//
// VectorSet is exact: every vector in memory, scanned on each query (a few
// milliseconds per 100k 384-dim vectors). HnswIndex is approximate (hnswlib's
// HNSW graph over inner product), built from a VectorSet and saved beside the
// store; a saved index is mapped from disk and searched in place, so a fresh
// process pays for the pages its queries visit, not for reading the file.
// Scores are dot products, which for unit vectors is the cosine similarity.
//
// Index file format: version 2 (written by Save; mapped and searched in
// place) is described in search/mapped_hnsw.h. Version 1 (written before
// issue 19) is still read, the old way: whole, checked and copied into
// hnswlib (little-endian):
//   file    := magic:"SDBHNSW1" dims:u32 reserved:u32 count:u64
//              payload_bytes:u64 payload_fnv1a64:u64 payload
//   payload := hnswlib 0.6 HierarchicalNSW<float> serialisation (saveIndex)
//
// Sealed file (issue 35, with a key; docs/encryption.md): the version 2
// bytes above, encrypted in chunks of C = 1 MiB with AES-256-GCM:
//   file     := magic:"SDBHNSWE" version:u32=1 chunk_bytes:u32 plain_bytes:u64
//               record{n}                       n = max(1, ceil(plain_bytes / C))
//   record_i := ciphertext_i nonce:12 tag:16    (ciphertext_i of chunk i, the last short)
//   AD_i     := "sdb-hnsw" 0x00 base_name 0x00 header(24 bytes) i:u64 last:u8
// The file's base name ("model.hnsw") and its header are bound into every
// chunk: a file renamed to another model's name, a changed byte, a truncation
// or reordered chunks do not open. Only the file's size stays visible. Load
// decrypts the whole file into private memory instead of mapping it (the
// index is then resident: its plaintext size, plus one chunk while loading),
// and Save holds the sealed copy beside the plaintext one (twice the file).
//
// Example:
//   VectorSet set(384);
//   set.Add(message_id, vector);
//   std::vector<VectorHit> hits = set.Search(query, 10);
//   ASSIGN_OR_RETURN(std::unique_ptr<HnswIndex> index, HnswIndex::Build(set));
//   RETURN_IF_ERROR(index->Save(dir + "/vectors.hnsw"));
//   ASSIGN_OR_RETURN(std::unique_ptr<HnswIndex> saved,
//                    HnswIndex::Load(dir + "/vectors.hnsw", 384));
//   ASSIGN_OR_RETURN(hits, saved->Search(query, 10));
//
// Thread-safety: const methods may run concurrently; Add and Build must not
// overlap other calls on the same object. hnswlib is included only by
// vector_index.cc: its header defines non-inline functions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/cipher.h"
#include "sessiondb/file_system.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb::search {

class MappedHnsw;  // search/mapped_hnsw.h

struct VectorHit {
  int64_t id;
  float score;  // cosine similarity (dot of unit vectors)
};

// Exact search: contiguous float storage and a plain dot-product loop.
class VectorSet {
 public:
  explicit VectorSet(int dims);
  int dims() const { return dims_; }
  size_t size() const { return ids_.size(); }
  // Adds `v` (expected unit length) under `id`; v.size() must equal dims()
  // (a programmer error otherwise: asserted, and ignored in release builds).
  void Add(int64_t id, std::span<const float> v);
  int64_t id_at(size_t i) const { return ids_[i]; }
  std::span<const float> vector_at(size_t i) const;
  // The k best by score, best first (ties: lower id first), at most size();
  // only ids that `accept` returns true for, when it is set.
  std::vector<VectorHit> Search(std::span<const float> query, size_t k,
                                const std::function<bool(int64_t)>& accept = {}) const;

 private:
  int dims_;
  std::vector<int64_t> ids_;
  std::vector<float> values_;  // size() * dims_, row i at i * dims_
};

// Approximate search: an HNSW graph (hnswlib, inner product) of unit vectors.
class HnswIndex {
 public:
  ~HnswIndex();
  HnswIndex(const HnswIndex&) = delete;
  HnswIndex& operator=(const HnswIndex&) = delete;

  // Builds the graph over every vector of `set` with `threads` threads,
  // reporting progress (vectors added of set.size()). Ids must be >= 0
  // (hnswlib labels are unsigned) and distinct. kInvalidArgument for a
  // negative id or bad parameters; kInternal if hnswlib fails (e.g. memory).
  static Result<std::unique_ptr<HnswIndex>> Build(const VectorSet& set,
                                                  const ProgressFn& progress = {}, int m = 16,
                                                  int ef_construction = 100, int threads = 2);
  // Opens an index written by Save. A version 2 file is mapped read-only
  // (core/mapped_file.h): its header and upper levels are checked now, its
  // level-0 block as searches walk it (see Search). A version 1 file is read
  // whole, checked and copied into memory (slow at a million vectors:
  // rebuild it to get version 2). kNotFound if `path` does not exist,
  // kCorruption if it is not an intact index of `dims` dimensions (as far as
  // checked), kIo if it cannot be read or mapped.
  // With `key` the file must be sealed (see above) under it: it is decrypted
  // into memory, and kCorruption if it does not open (another key, damage, a
  // plaintext file). Null: today's plaintext file, mapped.
  static Result<std::unique_ptr<HnswIndex>> Load(const std::string& path, int dims,
                                                 const cipher::SecretKey* key = nullptr);
  // Writes to path + ".tmp", fsyncs, renames over `path` and fsyncs the
  // directory, through `fs` (null: the real file system): a reader sees the
  // old index or the new one, never half of one. kIo on failure (the
  // temporary file is removed, a previous index at `path` stays whole).
  // Always writes version 2; with `key`, sealed under it (see above), so the
  // file holds none of the vectors or ids in plaintext.
  Status Save(const std::string& path, FileSystem* fs = nullptr,
              const cipher::SecretKey* key = nullptr) const;
  // Reads what Load left unchecked (the whole level-0 block of a mapped
  // index: its checksum, every link and id). OK for an index in memory.
  // kCorruption on damage.
  Status Verify() const;
  // True when the index is a mapped version 2 file.
  bool mapped() const { return mapped_ != nullptr; }

  size_t size() const;
  int dims() const { return dims_; }
  // The (approximately) k best, best first. `ef` is the search breadth (the
  // larger, the better the recall and the slower; at least k is used).
  // With `accept`, candidates it rejects are skipped and the search widens
  // until k accepted ones are found or the graph is exhausted. kCorruption
  // when a mapped index's search meets a damaged list or id (never for an
  // index built or held in memory).
  Result<std::vector<VectorHit>> Search(std::span<const float> query, size_t k, size_t ef = 64,
                                        const std::function<bool(int64_t)>& accept = {}) const;

 private:
  struct Graph;  // hnswlib state, defined in vector_index.cc
  HnswIndex(int dims, std::unique_ptr<Graph> graph);
  HnswIndex(int dims, std::unique_ptr<MappedHnsw> mapped);
  static Result<std::unique_ptr<HnswIndex>> LoadVersion1(std::string_view file,
                                                         const std::string& path, int dims);
  // The `breadth` nearest candidates, nearest first, from either form.
  Result<std::vector<VectorHit>> Nearest(const float* query, size_t breadth) const;
  // Every element scored, the k best accepted ones kept.
  Result<std::vector<VectorHit>> Scan(const float* query, size_t k,
                                      const std::function<bool(int64_t)>& accept) const;

  int dims_;
  // Exactly one is set: a graph built or read from version 1, or a mapped
  // version 2 file.
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<MappedHnsw> mapped_;
};

// Share of the exact top-k ids found by the approximate top-k (recall@k),
// 0..1; 1 when `exact` is empty.
double RecallAtK(std::span<const VectorHit> exact, std::span<const VectorHit> approx);

}  // namespace sessiondb::search
