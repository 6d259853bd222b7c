#include "core/prefix_prefilter.h"

#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SESSIONDB_PREFIX_PREFILTER_SSSE3 1
#endif

namespace sessiondb {

void PrefixPrefilter::Add(unsigned char first, unsigned char second, unsigned char third) {
  // Prefixes that share a first byte share a bucket: the first byte's
  // nibbles then add no combination of their own within it.
  int8_t& bucket = bucket_of_first_[first];
  if (bucket < 0) bucket = static_cast<int8_t>(next_bucket_++ % 8);
  const auto bit = static_cast<uint8_t>(1u << bucket);
  const unsigned char bytes[3] = {first, second, third};
  for (size_t k = 0; k < 3; ++k) {
    lo_[k][bytes[k] & 15] |= bit;
    hi_[k][bytes[k] >> 4] |= bit;
  }
  const size_t pair = (size_t{first} << 8) | second;
  if (!pairs_[pair]) {
    if (thirds_.size() == 256) std::abort();  // past the documented limit: a caller's bug
    pairs_.set(pair);
    slot_[pair] = static_cast<uint8_t>(thirds_.size());
    thirds_.emplace_back();
  }
  thirds_[slot_[pair]].set(third);
}

size_t PrefixPrefilter::NextScalar(std::string_view text, size_t from) const {
  const size_t n = text.size();
  for (size_t i = from; i + 2 < n; ++i) {
    if (Candidate(text.data() + i) && Holds(text.data() + i)) return i;
  }
  return n;
}

#ifdef SESSIONDB_PREFIX_PREFILTER_SSSE3
namespace {

// The buckets the sixteen bytes at `p` may be at place k of, from that
// place's two tables.
__attribute__((target("ssse3"))) inline __m128i Buckets(const char* p, __m128i lo, __m128i hi) {
  const __m128i nibble = _mm_set1_epi8(0x0f);
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // Shifting 16-bit lanes moves the next byte's bits into the high nibble's
  // place; the mask keeps the nibble alone (and the shuffle index below 16).
  return _mm_and_si128(_mm_shuffle_epi8(lo, _mm_and_si128(x, nibble)),
                       _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(x, 4), nibble)));
}

// The first candidate in the whole blocks of 16 positions from `*from` on
// (a block at i reads text[i, i + 18)), or false with *from at the first
// position no whole block covered.
__attribute__((target("ssse3"))) bool NextSsse3(std::string_view text, size_t* from,
                                                const std::array<std::array<uint8_t, 16>, 3>& lo,
                                                const std::array<std::array<uint8_t, 16>, 3>& hi,
                                                const PrefixPrefilter& exact) {
  __m128i l[3];
  __m128i h[3];
  for (size_t k = 0; k < 3; ++k) {
    l[k] = _mm_load_si128(reinterpret_cast<const __m128i*>(lo[k].data()));
    h[k] = _mm_load_si128(reinterpret_cast<const __m128i*>(hi[k].data()));
  }
  const size_t n = text.size();
  size_t i = *from;
  for (; i + 18 <= n; i += 16) {
    const char* p = text.data() + i;
    const __m128i all =
        _mm_and_si128(Buckets(p, l[0], h[0]),
                      _mm_and_si128(Buckets(p + 1, l[1], h[1]), Buckets(p + 2, l[2], h[2])));
    const unsigned none =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(all, _mm_setzero_si128())));
    // The candidates, each checked exactly here: most are not prefixes,
    // and the loop goes on without leaving.
    for (unsigned bits = none ^ 0xffffu; bits != 0; bits &= bits - 1) {
      const size_t at = i + static_cast<size_t>(__builtin_ctz(bits));
      if (exact.Holds(text.data() + at)) {
        *from = at;
        return true;
      }
    }
  }
  *from = i;
  return false;
}

bool HasSsse3() {
  static const bool has = __builtin_cpu_supports("ssse3");
  return has;
}

}  // namespace
#endif

size_t PrefixPrefilter::Next(std::string_view text, size_t from) const {
#ifdef SESSIONDB_PREFIX_PREFILTER_SSSE3
  if (HasSsse3() && NextSsse3(text, &from, lo_, hi_, *this)) return from;
#endif
  return NextScalar(text, from);
}

}  // namespace sessiondb
