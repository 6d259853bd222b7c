#include "store/seq_ranges.h"

#include <algorithm>

namespace sessiondb::store {
namespace {

// The first range that ends at or after `seq`.
std::vector<SeqRange>::const_iterator FirstEndingFrom(const std::vector<SeqRange>& ranges,
                                                      int64_t seq) {
  return std::ranges::lower_bound(ranges, seq, {}, &SeqRange::to_seq);
}

}  // namespace

void SeqRangeSet::Add(int64_t from_seq, int64_t to_seq) {
  if (to_seq < from_seq) return;
  // Ranges that touch the new one (overlapping or adjacent) merge into it.
  auto first = std::ranges::lower_bound(ranges_, from_seq - 1, {}, &SeqRange::to_seq);
  auto last = first;
  while (last != ranges_.end() && last->from_seq <= to_seq + 1) {
    from_seq = std::min(from_seq, last->from_seq);
    to_seq = std::max(to_seq, last->to_seq);
    ++last;
  }
  first = ranges_.erase(first, last);
  ranges_.insert(first, {from_seq, to_seq});
}

bool SeqRangeSet::Holds(int64_t seq) const {
  auto it = FirstEndingFrom(ranges_, seq);
  return it != ranges_.end() && it->from_seq <= seq;
}

bool SeqRangeSet::HoldsAll(int64_t from_seq, int64_t to_seq) const {
  if (to_seq < from_seq) return true;
  auto it = FirstEndingFrom(ranges_, from_seq);
  // Merged ranges are never adjacent, so one range must hold all of it.
  return it != ranges_.end() && it->from_seq <= from_seq && to_seq <= it->to_seq;
}

std::vector<SeqRange> SeqRangeSet::Gaps(int64_t from_seq, int64_t to_seq) const {
  std::vector<SeqRange> gaps;
  int64_t at = from_seq;  // the first seq not yet accounted for
  for (auto it = FirstEndingFrom(ranges_, from_seq); it != ranges_.end() && at <= to_seq; ++it) {
    if (it->from_seq > at) gaps.push_back({at, std::min(to_seq, it->from_seq - 1)});
    at = std::max(at, it->to_seq + 1);
  }
  if (at <= to_seq) gaps.push_back({at, to_seq});
  return gaps;
}

}  // namespace sessiondb::store
