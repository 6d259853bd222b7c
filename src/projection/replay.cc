// ReplayCompactions: which events a projection sees once summaries stand in
// for the ranges they cover.
#include <algorithm>
#include <utility>

#include "sessiondb/projection.h"

namespace sessiondb {
namespace {

struct Range {
  int64_t from = 0;
  int64_t to = 0;
  bool Holds(int64_t seq) const { return from <= seq && seq <= to; }
};

bool Covered(const std::vector<Range>& ranges, int64_t seq) {
  return std::any_of(ranges.begin(), ranges.end(), [seq](const Range& r) { return r.Holds(seq); });
}

}  // namespace

std::vector<Event> ReplayCompactions(std::vector<Event> events) {
  // Latest first: a compaction inside the range of a later one was itself
  // summarised by it, so it no longer counts.
  std::vector<Range> covered;
  std::vector<bool> effective(events.size(), false);
  for (size_t i = events.size(); i-- > 0;) {
    const Event& e = events[i];
    if (e.type != EventType::kCompaction || Covered(covered, e.seq)) continue;
    effective[i] = true;
    covered.push_back({e.compaction.from_seq, e.compaction.to_seq});
  }
  if (covered.empty()) return events;

  // Each summary takes the place of the first event it covers.
  std::vector<std::pair<int64_t, size_t>> order;  // (position, index)
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (effective[i]) {
      order.emplace_back(e.compaction.from_seq, i);
    } else if (e.type != EventType::kCompaction && !Covered(covered, e.seq)) {
      order.emplace_back(e.seq, i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Event> out;
  out.reserve(order.size());
  for (const auto& [position, index] : order) out.push_back(std::move(events[index]));
  return out;
}

}  // namespace sessiondb
