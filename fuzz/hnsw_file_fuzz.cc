// Fuzz target: the saved HNSW index file (src/search/mapped_hnsw.h), read
// from the store's folder, where anything may have written it. The input's
// checksums are made right first (a hostile file can always do that), so
// the mutations reach the checks behind them. Properties: Load is OK or
// kCorruption; an opened index's searches (plain, and filtered down to the
// exact scan) and Verify are OK or kCorruption; nothing reads outside the
// mapping (AddressSanitizer in the libFuzzer build), nothing crashes.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "search/fnv.h"
#include "search/mapped_hnsw.h"
#include "search/vector_index.h"

namespace {

using sessiondb::StatusCode;
using namespace sessiondb::search;

constexpr int kDims = 4;  // the seed corpus's dimension

bool OkOrCorrupt(const sessiondb::Status& s) {
  return s.ok() || s.code() == StatusCode::kCorruption;
}

// Recomputes the header's and (when its bounds lie in the file) the upper
// block's checksums of a version 2 file.
void FixChecksums(std::string& bytes) {
  if (bytes.size() < kHnswHeaderBytes ||
      std::memcmp(bytes.data(), kHnswMagicV2, sizeof(kHnswMagicV2)) != 0) {
    return;
  }
  HnswFileHeader h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (h.upper_offset <= bytes.size() && h.upper_bytes <= bytes.size() - h.upper_offset) {
    h.upper_fnv = Fnv1a64(std::string_view(bytes).substr(h.upper_offset, h.upper_bytes));
  }
  h.header_fnv = Fnv1a64(
      std::string_view(reinterpret_cast<const char*>(&h), offsetof(HnswFileHeader, header_fnv)));
  std::memcpy(bytes.data(), &h, sizeof(h));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(sessiondb::fuzz::AsView(data, size));
  FixChecksums(bytes);
  const std::string path = (sessiondb::fuzz::FreshRunFolder() / "v.hnsw").string();
  sessiondb::fuzz::WriteFileOrDie(path, bytes);
  auto index = HnswIndex::Load(path, kDims);
  if (!index) {
    FUZZ_CHECK(index.error().code() == StatusCode::kCorruption);
    return 0;
  }
  const std::vector<std::vector<float>> queries = {{1, 0, 0, 0}, {0.5f, -0.5f, 0.5f, -0.5f}};
  for (const auto& q : queries) {
    auto hits = (*index)->Search(q, 5, 8);
    FUZZ_CHECK(hits || hits.error().code() == StatusCode::kCorruption);
    if (hits) FUZZ_CHECK(hits->size() <= 5);
    auto scanned = (*index)->Search(q, 3, 8, [](int64_t id) { return id % 2 == 0; });
    FUZZ_CHECK(scanned || scanned.error().code() == StatusCode::kCorruption);
  }
  FUZZ_CHECK(OkOrCorrupt((*index)->Verify()));
  return 0;
}
