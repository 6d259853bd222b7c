// PrefixPrefilter: where a text holds one of a set of three-byte prefixes,
// found sixteen positions at a time. The secret scan
// (secret_scan.cc) calls its matchers only where a kind's prefix starts;
// looking for one at each byte of the text was most of a batched append's
// scan (issue 40's profile).
//
// Each prefix goes to one of eight buckets (by its first byte). A byte is
// split into its two nibbles, and for each of the three places a pair of
// 16-entry tables says which buckets a byte's low nibble and its high nibble
// can belong to there; a position is a candidate when some bucket has all
// six. With SSSE3 one shuffle reads a table for sixteen bytes at once.
//
// Every position holding an added prefix is a candidate; some positions that
// hold none are too (a bucket's nibbles combine into bytes never added). Next
// checks each candidate exactly inside its loop (a pair of bytes, then the
// third) and returns only the positions that hold an added prefix: ordinary
// prose has a candidate every 60 bytes or so and none of them a prefix, and
// leaving the loop for each was a quarter of the scan.
//
// Thread-safety: const after the prefixes are added; Next may be called from
// any number of threads.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sessiondb {

class PrefixPrefilter {
 public:
  // At most 256 distinct pairs of first and second bytes (the exact check
  // keeps a slot of one byte per pair); the secret scan adds about 50.
  void Add(unsigned char first, unsigned char second, unsigned char third);

  // The first position i >= `from` with i + 2 < text.size() where
  // text[i, i + 3) is an added prefix; text.size() when none is.
  size_t Next(std::string_view text, size_t from) const;
  // The same one position at a time: what Next must agree with (tests).
  size_t NextScalar(std::string_view text, size_t from) const;
  // Whether the three bytes at `p` are an added prefix.
  bool Holds(const char* p) const {
    const size_t pair =
        (size_t{static_cast<unsigned char>(p[0])} << 8) | static_cast<unsigned char>(p[1]);
    if (!pairs_[pair]) return false;
    return thirds_[slot_[pair]][static_cast<unsigned char>(p[2])];
  }

 private:
  // lo_[k] and hi_[k]: the buckets whose prefixes may have a byte with that
  // low (high) nibble at place k.
  bool Candidate(const char* p) const {
    uint8_t buckets = 0xff;
    for (size_t k = 0; k < 3; ++k) {
      const auto c = static_cast<unsigned char>(p[k]);
      buckets &= lo_[k][c & 15] & hi_[k][c >> 4];
    }
    return buckets != 0;
  }

  alignas(16) std::array<std::array<uint8_t, 16>, 3> lo_{};
  alignas(16) std::array<std::array<uint8_t, 16>, 3> hi_{};
  std::array<int8_t, 256> bucket_of_first_ = Unassigned();
  int next_bucket_ = 0;
  // The added prefixes exactly: their first two bytes, and for each such
  // pair (its slot) the third bytes added after it.
  std::bitset<65536> pairs_;
  std::array<uint8_t, 65536> slot_{};  // read only where pairs_ is set
  std::vector<std::bitset<256>> thirds_;

  static std::array<int8_t, 256> Unassigned() {
    std::array<int8_t, 256> a{};
    a.fill(-1);
    return a;
  }
};

}  // namespace sessiondb
