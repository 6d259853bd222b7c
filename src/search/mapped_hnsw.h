// Version 2 of the HNSW index file, searched where it lies: the file is
// mapped read-only, its header and upper levels are read and checked at open
// (a few MB at a million vectors), and the level-0 block, nearly all of the
// file, is walked where it lies (a record read by pread the first time,
// in place after: ReadRecord) by a search loop that bounds-checks every
// list and neighbour it follows. A fresh process therefore pays for the
// records a query visits, not for reading the whole file (docs/search.md,
// "Exact and approximate"). HnswIndex (vector_index.h) writes the file and opens it
// through this; nothing else should need it.
//
// File format (version 2, little-endian; all offsets from the file's start):
//   file    := header:HnswFileHeader zero-padding to kHnswHeaderBytes
//              level0 upper
//   level0  := count * element            (at kHnswHeaderBytes: page-aligned)
//   element := links0 vector:f32*dims id:u64        (hnswlib's level-0 layout)
//   links0  := n:u32 neighbour:u32*(2*m)   (n in the low 16 bits, hnswlib's)
//   upper   := entry*upper_count lists*    (the elements above level 0)
//   entry   := element:u32 level:u32       (element ascending, level >= 1)
//   lists   := (n:u32 neighbour:u32*m)*level    (levels 1..level of an entry,
//                                                in the entries' order)
// header_fnv covers the header's bytes before it, upper_fnv the upper block
// (both checked at open), level0_fnv the level-0 block (checked by Verify
// only: reading it all is what the format exists to avoid).
//
// A file damaged inside the level-0 block opens; a search that walks into
// the damage returns kCorruption (a count over 2*m, a neighbour or id out of
// range) or, for damaged vector values, a worse answer: never a read outside
// the mapping. The index is only ever replaced by rename, never rewritten in
// place (core/mapped_file.h says why).
//
// Thread-safety: after Open, every method is const and may run concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mapped_file.h"
#include "sessiondb/status.h"

namespace sessiondb::search {

inline constexpr char kHnswMagicV2[8] = {'S', 'D', 'B', 'H', 'N', 'S', 'W', '2'};
// The header's page: the level-0 block after it starts page-aligned.
inline constexpr size_t kHnswHeaderBytes = 4096;
// Bounds a header must satisfy (hnswlib's levels grow as ln(n) / ln(m)).
inline constexpr uint32_t kHnswMaxM = 1000;
inline constexpr uint32_t kHnswMaxLevel = 64;

struct HnswFileHeader {
  char magic[8];
  uint32_t dims;
  uint32_t m;  // links per element above level 0; 2*m on level 0
  uint64_t count;
  uint32_t max_level;
  uint32_t entry_point;
  uint64_t upper_count;  // elements above level 0
  uint64_t ef_construction;
  double mult;  // hnswlib's level multiplier, 1 / ln(m)
  uint64_t element_bytes;
  uint64_t level0_offset;  // kHnswHeaderBytes
  uint64_t upper_offset;
  uint64_t upper_bytes;
  uint64_t level0_fnv;
  uint64_t upper_fnv;
  uint64_t header_fnv;  // FNV-1a of the bytes above
};
static_assert(sizeof(HnswFileHeader) == 112);

// The bytes of one level-0 element for `dims` and `m`.
inline uint64_t HnswElementBytes(uint32_t dims, uint32_t m) {
  return sizeof(uint32_t) * (1 + 2 * uint64_t{m}) + sizeof(float) * uint64_t{dims} +
         sizeof(uint64_t);
}

// An open version-2 file.
class MappedHnsw {
 public:
  // Checks the header and the upper levels of `file` (mapped from `path`,
  // named in errors) for vectors of `dims` dimensions and keeps the mapping.
  // kCorruption if it is not a complete, intact version-2 index of `dims`
  // dimensions (the level-0 block is checked as searches walk it).
  static Result<std::unique_ptr<MappedHnsw>> Open(std::unique_ptr<MappedFile> file,
                                                  const std::string& path, int dims);

  size_t size() const { return count_; }
  // Candidates for `query` (dims() floats) with search breadth `ef`, nearest
  // first, as (distance = 1 - dot, element). hnswlib's search: greedy down
  // the upper levels, then a best-first walk of level 0 keeping `ef`.
  // kCorruption when the walk meets a damaged level-0 list.
  Result<std::vector<std::pair<float, uint32_t>>> Candidates(const float* query, size_t ef) const;
  // The id stored for `element` (< size()); kCorruption if it is negative
  // as an int64.
  Result<int64_t> Id(uint32_t element) const;
  // Calls `visit` with the id and vector of every element, in order (the
  // exact scan): a file is read by pread 256 KiB at a time, the next asked
  // for ahead, since through the mapping a cold file would be read a page
  // per fault. kCorruption on a negative id, kIo if a read fails.
  Status ForEachVector(const std::function<void(int64_t id, const float* vector)>& visit) const;
  // Reads the whole level-0 block: its checksum, every list and every id.
  // kCorruption on the first fault found.
  Status Verify() const;
  // The whole file, as mapped (Save of an opened index copies it).
  std::string_view bytes() const { return file_->bytes(); }

 private:
  MappedHnsw() = default;
  Status Corrupt(const std::string& why) const;
  // The level-0 list of `element`: its neighbours, checked against 2*m.
  // Returns false if the count is out of range.
  bool Links0(uint32_t element, uint32_t* count, const char** neighbours) const;
  // The links of `element` on `level` (1..its level), from the copy made at
  // open.
  std::span<const uint32_t> UpperLinks(uint32_t element, uint32_t level) const;
  // Reads `bytes` at `offset` in `element`'s level-0 record into `out`:
  // from memory for a sealed index (decrypted) or a record a query read
  // before (NoteVectorRead), else by pread. On a VM where page tables are
  // virtualised a fault on a cached page of the mapping costs about 20 us
  // and a pread of a record 3: a fresh process's first query reads a few
  // thousand records once each, and pays far less by pread (open and first
  // query at a million vectors: 14 ms against 44-82 ms cached). A record
  // read again and again (a server's hot region) is cheaper in place once
  // its page is mapped. kIo if the read fails; kCorruption if the file ends
  // first (truncated in place).
  Status ReadRecord(uint32_t element, uint64_t offset, size_t bytes, char* out) const;
  // Reads `bytes` at `at` in the level-0 block by pread (a file only).
  Status ReadLevel0(uint64_t at, size_t bytes, char* out) const;
  // Called before each read of `element`'s vector: the second time, its
  // record is read in place from then on (the fault is paid once, for a
  // record likely read again).
  void NoteVectorRead(uint32_t element) const;
  // The first byte of the page holding the start of `element`'s record.
  uintptr_t PageOf(uint32_t element) const;
  // Whether the page of `element` is in memory (mincore).
  bool Resident(uint32_t element) const;
  // Asks the kernel to read, in the background (MADV_WILLNEED), the records
  // of the `elements` (all < size()) not `seen` yet, unless the first of
  // them is in memory already: one probe decides, so a cached file pays one
  // system call per call, not one per element.
  template <typename Seen>
  void AskFor(std::span<const uint32_t> elements, const Seen& seen) const;

  std::unique_ptr<MappedFile> file_;
  std::string path_;
  const char* level0_ = nullptr;
  int fd_ = -1;  // file_'s, for ReadRecord; -1 for memory
  // Per element, one bit each (for a file only): its vector was read once;
  // its record is read in place (NoteVectorRead).
  std::unique_ptr<std::atomic<uint64_t>[]> read_once_;
  std::unique_ptr<std::atomic<uint64_t>[]> mapped_;
  uint32_t dims_ = 0;
  uint32_t m_ = 0;
  size_t count_ = 0;
  uint32_t max_level_ = 0;
  uint32_t entry_point_ = 0;
  uint64_t element_bytes_ = 0;
  uint64_t level0_fnv_ = 0;
  // The upper block, copied and checked at open, so a later write to the
  // file cannot change what was checked (one block of memory: Open says
  // why): its entries, sorted by element, then their lists; each entry's
  // offset (in words) to its lists; every element's level.
  struct UpperEntry {
    uint32_t element;
    uint32_t level;
  };
  static_assert(sizeof(UpperEntry) == 2 * sizeof(uint32_t), "the file's entry layout");
  std::unique_ptr<MappedFile> upper_;
  std::span<const UpperEntry> upper_entries_;
  const uint64_t* upper_offsets_ = nullptr;
  const uint32_t* upper_lists_ = nullptr;
};

}  // namespace sessiondb::search
