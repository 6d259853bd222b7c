#include "search/mapped_hnsw.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <queue>

#include "search/dot.h"
#include "search/fnv.h"

namespace sessiondb::search {
namespace {

static_assert(std::endian::native == std::endian::little, "the index file is little-endian");

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// hnswlib keeps a list's count in the low 16 bits of its first word.
uint32_t ListCount(uint32_t word) { return word & 0xffff; }

// Keeps the nearest first: (distance, element) pairs ordered by distance.
struct Farther {
  bool operator()(const std::pair<float, uint32_t>& a, const std::pair<float, uint32_t>& b) const {
    return a.first > b.first;
  }
};

// What an exact scan reads at a time: 156 records of 384 dimensions.
constexpr uint64_t kScanChunkBytes = uint64_t{256} << 10;

}  // namespace

Status MappedHnsw::Corrupt(const std::string& why) const {
  return Status::Corruption("vector index " + path_ + " is damaged (" + why +
                            "); delete it to rebuild it");
}

Result<std::unique_ptr<MappedHnsw>> MappedHnsw::Open(std::unique_ptr<MappedFile> file,
                                                     const std::string& path, int dims) {
  std::unique_ptr<MappedHnsw> index(new MappedHnsw());
  index->path_ = path;
  const std::string_view bytes = file->bytes();
  index->file_ = std::move(file);
  auto corrupt = [&index](const std::string& why) { return Err(index->Corrupt(why)); };

  if (bytes.size() < kHnswHeaderBytes) return corrupt("shorter than its header");
  HnswFileHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (std::memcmp(h.magic, kHnswMagicV2, sizeof(h.magic)) != 0) {
    return corrupt("not a version 2 sessiondb HNSW index");
  }
  if (Fnv1a64(bytes.substr(0, offsetof(HnswFileHeader, header_fnv))) != h.header_fnv) {
    return corrupt("header checksum mismatch");
  }
  if (dims < 1 || h.dims != static_cast<uint32_t>(dims)) {
    return Err(Status::Corruption("vector index " + path + " holds " + std::to_string(h.dims) +
                                  "-dimensional vectors, not " + std::to_string(dims)));
  }
  // Each bound before the arithmetic that relies on it: no sum or product
  // below can overflow once these hold.
  if (h.m < 2 || h.m > kHnswMaxM || h.max_level > kHnswMaxLevel ||
      h.count >= std::numeric_limits<uint32_t>::max() ||
      h.element_bytes != HnswElementBytes(h.dims, h.m) || h.level0_offset != kHnswHeaderBytes) {
    return corrupt("inconsistent parameters");
  }
  const uint64_t after_header = bytes.size() - kHnswHeaderBytes;
  if (h.count > after_header / h.element_bytes) return corrupt("truncated level 0");
  const uint64_t level0_bytes = h.count * h.element_bytes;
  if (h.upper_offset != kHnswHeaderBytes + level0_bytes ||
      h.upper_bytes != bytes.size() - h.upper_offset) {
    return corrupt("truncated or overlong");
  }
  if (h.upper_count > h.count || h.upper_count > h.upper_bytes / sizeof(uint64_t) ||
      h.upper_bytes % sizeof(uint32_t) != 0) {
    return corrupt("bad upper levels");
  }
  if (h.count == 0 ? (h.max_level != 0 || h.entry_point != 0 || h.upper_count != 0)
                   : h.entry_point >= h.count) {
    return corrupt("bad entry point");
  }

  // The upper block is copied before it is checked: what was checked is
  // what the searches use, whatever happens to the file afterwards.
  // A graph walk touches a page here and there: reading 128 KiB ahead around
  // each page fault would multiply the I/O of a cold first query. Advice
  // only: a kernel that ignores it reads the same bytes.
  (void)::madvise(const_cast<char*>(bytes.data()), bytes.size(), MADV_RANDOM);
  // The upper block is read whole, and asked for at once: without read-ahead
  // the copy would be one page fault per page.
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t from = h.upper_offset / page * page;
  if (h.upper_bytes > 0) {
    (void)::madvise(const_cast<char*>(bytes.data() + from), bytes.size() - from, MADV_WILLNEED);
  }
  // One block of memory holds the copy, each entry's offset to its lists and
  // every element's level (for the link check): MappedFile::Anonymous backs
  // it with huge pages when it is large, where separate vectors cost a page
  // fault per 4 KiB, 30 ms of a 50 ms open at a million vectors. The sizes
  // are bounded by the file's: the header checks above hold.
  const uint64_t offsets_at = (h.upper_bytes + 7) / 8 * 8;
  const uint64_t levels_at = offsets_at + sizeof(uint64_t) * h.upper_count;
  const uint64_t list_words = 1 + uint64_t{h.m};
  auto fill = [&](char* memory) -> Status {
    // Not with 0 bytes: memory is null then, which memcpy must never be
    // given (UBSan stops the sanitize tier on it).
    if (h.upper_bytes > 0) std::memcpy(memory, bytes.data() + h.upper_offset, h.upper_bytes);
    if (Fnv1a64(std::string_view(memory, h.upper_bytes)) != h.upper_fnv) {
      return index->Corrupt("upper levels checksum mismatch");
    }
    const auto* entries = reinterpret_cast<const UpperEntry*>(memory);
    auto* offsets = reinterpret_cast<uint64_t*>(memory + offsets_at);
    auto* levels = reinterpret_cast<uint8_t*>(memory + levels_at);  // zero, as mapped
    uint64_t offset = 0;                                            // in words, after the entries
    for (uint64_t i = 0; i < h.upper_count; ++i) {
      const UpperEntry& e = entries[i];
      if (e.element >= h.count || (i > 0 && e.element <= entries[i - 1].element) || e.level < 1 ||
          e.level > h.max_level) {
        return index->Corrupt("bad upper level entry");
      }
      offsets[i] = offset;
      levels[e.element] = static_cast<uint8_t>(e.level);
      offset += e.level * list_words;
    }
    const uint32_t* links = reinterpret_cast<const uint32_t*>(entries + h.upper_count);
    if (offset != h.upper_bytes / sizeof(uint32_t) - 2 * h.upper_count) {
      return index->Corrupt("upper levels of the wrong size");
    }
    if (h.count > 0 && levels[h.entry_point] != h.max_level) {
      return index->Corrupt("bad entry point");
    }
    // Every neighbour above level 0 is an element that has the level it is
    // linked on: the greedy descent then needs no checks.
    for (uint64_t i = 0; i < h.upper_count; ++i) {
      for (uint32_t level = 1; level <= entries[i].level; ++level) {
        const uint32_t* list = links + offsets[i] + (level - 1) * list_words;
        const uint32_t n = ListCount(list[0]);
        if (n > h.m) return index->Corrupt("bad upper links");
        for (uint32_t j = 1; j <= n; ++j) {
          if (list[j] >= h.count || levels[list[j]] < level) {
            return index->Corrupt("bad upper links");
          }
        }
      }
    }
    return Status::Ok();
  };
  ASSIGN_OR_RETURN(index->upper_, MappedFile::Anonymous(levels_at + h.count, fill));
  const char* memory = index->upper_->bytes().data();
  index->upper_entries_ = {reinterpret_cast<const UpperEntry*>(memory), h.upper_count};
  index->upper_offsets_ = reinterpret_cast<const uint64_t*>(memory + offsets_at);
  index->upper_lists_ =
      reinterpret_cast<const uint32_t*>(index->upper_entries_.data() + h.upper_count);

  index->level0_ = bytes.data() + kHnswHeaderBytes;
  index->fd_ = index->file_->fd();
  if (index->fd_ >= 0) {
    // As MADV_RANDOM above, for the reads by pread: no read-ahead around a
    // record (advice only).
    (void)::posix_fadvise(index->fd_, 0, 0, POSIX_FADV_RANDOM);
    const size_t words = (h.count + 63) / 64;
    index->read_once_.reset(new std::atomic<uint64_t>[words]());
    index->mapped_.reset(new std::atomic<uint64_t>[words]());
  }
  index->dims_ = h.dims;
  index->m_ = h.m;
  index->count_ = h.count;
  index->max_level_ = h.max_level;
  index->entry_point_ = h.entry_point;
  index->element_bytes_ = h.element_bytes;
  index->level0_fnv_ = h.level0_fnv;
  return index;
}

bool MappedHnsw::Links0(uint32_t element, uint32_t* count, const char** neighbours) const {
  const char* list = level0_ + element * element_bytes_;
  *count = ListCount(LoadU32(list));
  *neighbours = list + sizeof(uint32_t);
  return *count <= 2 * m_;
}

Result<int64_t> MappedHnsw::Id(uint32_t element) const {
  uint64_t id = 0;
  RETURN_IF_ERROR(ReadRecord(element, element_bytes_ - sizeof(uint64_t), sizeof(id),
                             reinterpret_cast<char*>(&id)));
  if (id > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Err(Corrupt("element " + std::to_string(element) + " has a bad id"));
  }
  return static_cast<int64_t>(id);
}

std::span<const uint32_t> MappedHnsw::UpperLinks(uint32_t element, uint32_t level) const {
  const auto it = std::lower_bound(upper_entries_.begin(), upper_entries_.end(), element,
                                   [](const UpperEntry& u, uint32_t e) { return u.element < e; });
  // Open checked that every upper neighbour has the level it is linked on.
  const uint32_t* list =
      upper_lists_ + upper_offsets_[it - upper_entries_.begin()] + (level - 1) * (1 + uint64_t{m_});
  return {list + 1, ListCount(list[0])};
}

Result<std::vector<std::pair<float, uint32_t>>> MappedHnsw::Candidates(const float* query,
                                                                       size_t ef) const {
  std::vector<std::pair<float, uint32_t>> out;
  if (count_ == 0) return out;
  // Records are read into these (ReadRecord says why not in place).
  const size_t links_bytes = sizeof(uint32_t) * (1 + 2 * size_t{m_});
  std::vector<float> vector(dims_);
  std::vector<uint32_t> list(1 + 2 * size_t{m_});
  auto distance = [&](uint32_t element, float* d) -> Status {
    NoteVectorRead(element);
    RETURN_IF_ERROR(ReadRecord(element, links_bytes, sizeof(float) * vector.size(),
                               reinterpret_cast<char*>(vector.data())));
    *d = 1.0f - Dot(query, vector.data(), dims_);
    return Status::Ok();
  };
  uint32_t current = entry_point_;
  float current_distance = 0;
  RETURN_IF_ERROR(distance(current, &current_distance));
  for (uint32_t level = max_level_; level > 0; --level) {
    for (bool changed = true; changed;) {
      changed = false;
      // The neighbours' vectors lie in level 0, a page or two each: asked
      // for together, as level 0's are below (a cold descent otherwise
      // waits for one page fault per neighbour, in series).
      AskFor(UpperLinks(current, level), [](uint32_t) { return false; });
      for (uint32_t neighbour : UpperLinks(current, level)) {
        float d = 0;
        RETURN_IF_ERROR(distance(neighbour, &d));
        if (d < current_distance) {
          current_distance = d;
          current = neighbour;
          changed = true;
        }
      }
    }
  }

  // Level 0, as hnswlib's searchBaseLayerST: `top` keeps the ef nearest
  // found (farthest on top), `frontier` the elements still to expand
  // (nearest on top); the walk ends when the nearest unexpanded element is
  // farther than the farthest kept.
  std::vector<uint64_t> visited((count_ + 63) / 64, 0);
  auto seen = [&visited](uint32_t e) { return (visited[e / 64] >> (e % 64) & 1) != 0; };
  auto visit = [&visited](uint32_t e) {
    uint64_t& word = visited[e / 64];
    const uint64_t bit = uint64_t{1} << (e % 64);
    const bool seen = (word & bit) != 0;
    word |= bit;
    return !seen;
  };
  std::priority_queue<std::pair<float, uint32_t>> top;
  std::priority_queue<std::pair<float, uint32_t>, std::vector<std::pair<float, uint32_t>>, Farther>
      frontier;
  top.emplace(current_distance, current);
  frontier.emplace(current_distance, current);
  visit(current);
  float bound = current_distance;
  std::vector<uint32_t> ids;  // the neighbours of the element expanded
  ids.reserve(size_t{2} * m_);
  while (!frontier.empty()) {
    const auto [d, element] = frontier.top();
    if (d > bound) break;
    frontier.pop();
    // Copied, then checked: what is used is what was checked, even if the
    // file changed under the mapping.
    RETURN_IF_ERROR(ReadRecord(element, 0, links_bytes, reinterpret_cast<char*>(list.data())));
    const uint32_t n = ListCount(list[0]);
    if (n > 2 * m_) {
      return Err(Corrupt("element " + std::to_string(element) + " has too many links"));
    }
    ids.resize(n);
    for (uint32_t j = 0; j < n; ++j) {
      ids[j] = list[1 + j];
      if (ids[j] >= count_) {
        return Err(Corrupt("element " + std::to_string(element) + " links outside the index"));
      }
    }
    // Neighbours whose pages are not in memory (a fresh process, a file
    // evicted) are asked for together, so the disk reads them in parallel
    // instead of one page fault at a time; one probe (the first unseen
    // neighbour's page) decides, so a cached file pays one system call per
    // expanded element, not one per neighbour.
    AskFor(ids, seen);
    for (uint32_t neighbour : ids) {
      if (!visit(neighbour)) continue;
      float nd = 0;
      RETURN_IF_ERROR(distance(neighbour, &nd));
      if (top.size() < ef || nd < bound) {
        frontier.emplace(nd, neighbour);
        top.emplace(nd, neighbour);
        if (top.size() > ef) top.pop();
        bound = top.top().first;
      }
    }
  }
  out.resize(top.size());
  for (size_t i = out.size(); i-- > 0;) {  // the queue pops the farthest first
    out[i] = top.top();
    top.pop();
  }
  return out;
}

void MappedHnsw::NoteVectorRead(uint32_t element) const {
  if (fd_ < 0) return;
  const uint64_t bit = uint64_t{1} << (element % 64);
  if ((mapped_[element / 64].load(std::memory_order_relaxed) & bit) != 0) return;
  if ((read_once_[element / 64].fetch_or(bit, std::memory_order_relaxed) & bit) != 0) {
    mapped_[element / 64].fetch_or(bit, std::memory_order_relaxed);
  }
}

Status MappedHnsw::ReadRecord(uint32_t element, uint64_t offset, size_t bytes, char* out) const {
  const uint64_t at = element * element_bytes_ + offset;
  if (fd_ < 0 || (mapped_[element / 64].load(std::memory_order_relaxed) &
                  (uint64_t{1} << (element % 64))) != 0) {
    std::memcpy(out, level0_ + at, bytes);
    return Status::Ok();
  }
  return ReadLevel0(at, bytes, out);
}

Status MappedHnsw::ReadLevel0(uint64_t at, size_t bytes, char* out) const {
  for (size_t done = 0; done < bytes;) {
    const ssize_t n =
        ::pread(fd_, out + done, bytes - done, static_cast<off_t>(kHnswHeaderBytes + at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::Io("cannot read vector index " + path_ + ": " + std::strerror(errno));
    }
    // Shorter than at open: truncated in place, which nothing here does.
    if (n == 0) {
      return Corrupt("ends inside element " + std::to_string((at + done) / element_bytes_));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status MappedHnsw::ForEachVector(
    const std::function<void(int64_t id, const float* vector)>& visit) const {
  const size_t vector_at = sizeof(uint32_t) * (1 + 2 * size_t{m_});
  const uint64_t per_chunk = std::max<uint64_t>(1, kScanChunkBytes / element_bytes_);
  std::vector<char> chunk;
  for (uint64_t first = 0; first < count_; first += per_chunk) {
    const uint64_t n = std::min<uint64_t>(per_chunk, count_ - first);
    const char* records = level0_ + first * element_bytes_;
    if (fd_ >= 0) {
      // The next chunk is asked for before this one is read and scanned, so
      // the disk reads ahead of the scan (the descriptor has no read-ahead
      // of its own: POSIX_FADV_RANDOM, set at open).
      const uint64_t next = first + n;
      if (next < count_) {
        (void)::posix_fadvise(
            fd_, static_cast<off_t>(kHnswHeaderBytes + next * element_bytes_),
            static_cast<off_t>(std::min<uint64_t>(per_chunk, count_ - next) * element_bytes_),
            POSIX_FADV_WILLNEED);
      }
      chunk.resize(n * element_bytes_);
      RETURN_IF_ERROR(ReadLevel0(first * element_bytes_, chunk.size(), chunk.data()));
      records = chunk.data();
    }
    for (uint64_t i = 0; i < n; ++i) {
      const char* record = records + i * element_bytes_;
      uint64_t id = 0;
      std::memcpy(&id, record + element_bytes_ - sizeof(id), sizeof(id));
      if (id > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Corrupt("element " + std::to_string(first + i) + " has a bad id");
      }
      // A record starts a multiple of 4 bytes from the chunk's (or the
      // page's) start, and so does its vector: the floats are aligned.
      visit(static_cast<int64_t>(id), reinterpret_cast<const float*>(record + vector_at));
    }
  }
  return Status::Ok();
}

uintptr_t MappedHnsw::PageOf(uint32_t element) const {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(file_->bytes().data());  // page-aligned
  const auto start = reinterpret_cast<uintptr_t>(level0_ + element * element_bytes_);
  return base + (start - base) / page * page;
}

bool MappedHnsw::Resident(uint32_t element) const {
  unsigned char in_memory = 0;
  // Not knowing counts as resident: no advice then, the fault reads it.
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an address within the mapping, by page arithmetic
  return ::mincore(reinterpret_cast<void*>(PageOf(element)), 1, &in_memory) != 0 ||
         (in_memory & 1) != 0;
}

template <typename Seen>
void MappedHnsw::AskFor(std::span<const uint32_t> elements, const Seen& seen) const {
  const auto first_unseen = std::find_if_not(elements.begin(), elements.end(), seen);
  if (first_unseen == elements.end() || Resident(*first_unseen)) return;
  for (uint32_t e : elements) {
    if (seen(e)) continue;
    const uintptr_t first = PageOf(e);
    const auto end = reinterpret_cast<uintptr_t>(level0_ + (e + 1) * element_bytes_);
    // Advice only: a failure leaves the page to be read when touched.
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address within the mapping, by page arithmetic
    (void)::madvise(reinterpret_cast<void*>(first), end - first, MADV_WILLNEED);
  }
}

Status MappedHnsw::Verify() const {
  const std::string_view level0(level0_, count_ * element_bytes_);
  if (Fnv1a64(level0) != level0_fnv_) return Corrupt("level 0 checksum mismatch");
  for (uint32_t e = 0; e < count_; ++e) {
    uint32_t n = 0;
    const char* neighbours = nullptr;
    if (!Links0(e, &n, &neighbours)) return Corrupt("bad links");
    for (uint32_t j = 0; j < n; ++j) {
      if (LoadU32(neighbours + j * sizeof(uint32_t)) >= count_) return Corrupt("bad links");
    }
    RETURN_IF_ERROR(Id(e));
  }
  return Status::Ok();
}

}  // namespace sessiondb::search
