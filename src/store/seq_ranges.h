// Ranges of seqs, and a set of them kept merged: what a session's view holds
// (session_view.h) and what compactions hide (ReplayCompactions,
// Store::ReadForProjection).
// Thread-safety: values; no shared state.
#pragma once

#include <cstdint>
#include <vector>

namespace sessiondb::store {

// Seqs from_seq .. to_seq, both included.
struct SeqRange {
  int64_t from_seq = 0;
  int64_t to_seq = 0;
  bool operator==(const SeqRange&) const = default;
};

// A set of seqs held as disjoint ranges in order, merged as they are added,
// so a lookup costs a binary search however many overlapping ranges went in.
class SeqRangeSet {
 public:
  // Adds from_seq .. to_seq; an empty range (to_seq < from_seq) adds nothing.
  void Add(int64_t from_seq, int64_t to_seq);

  // True if `seq` is in the set.
  bool Holds(int64_t seq) const;

  // True if every seq of from_seq .. to_seq is in the set (an empty range is).
  bool HoldsAll(int64_t from_seq, int64_t to_seq) const;

  // The parts of from_seq .. to_seq that are not in the set, in order.
  std::vector<SeqRange> Gaps(int64_t from_seq, int64_t to_seq) const;

  bool empty() const { return ranges_.empty(); }

 private:
  std::vector<SeqRange> ranges_;  // disjoint, not adjacent, in order
};

}  // namespace sessiondb::store
