// ReplayCompactions: which events a projection sees once summaries stand in
// for the ranges they cover.
#include <algorithm>
#include <utility>

#include "sessiondb/store.h"

namespace sessiondb {
namespace {

struct Range {
  int64_t from = 0;
  int64_t to = 0;
  size_t owner = 0;  // index of the effective compaction whose summary covers it
  bool Holds(int64_t seq) const { return from <= seq && seq <= to; }
};

const Range* Covering(const std::vector<Range>& ranges, int64_t seq) {
  for (const Range& r : ranges) {
    if (r.Holds(seq)) return &r;
  }
  return nullptr;
}

}  // namespace

std::vector<Event> ReplayCompactions(std::vector<Event> events) {
  // Latest first: a compaction inside the range of a later one was itself
  // summarised by it, and so was everything it stood for: its range joins
  // the later one's, whose summary moves up to the start of it.
  std::vector<Range> covered;
  std::vector<bool> effective(events.size(), false);
  std::vector<int64_t> position(events.size(), 0);
  for (size_t i = events.size(); i-- > 0;) {
    const Event& e = events[i];
    if (e.type != EventType::kCompaction) continue;
    const Compaction& c = e.compaction;
    if (const Range* outer = Covering(covered, e.seq)) {
      const size_t owner = outer->owner;
      covered.push_back({c.from_seq, c.to_seq, owner});
      position[owner] = std::min(position[owner], c.from_seq);
      continue;
    }
    effective[i] = true;
    position[i] = c.from_seq;
    covered.push_back({c.from_seq, c.to_seq, i});
  }
  if (covered.empty()) return events;

  // Each summary takes the place of the first event it covers.
  std::vector<std::pair<int64_t, size_t>> order;  // (position, index)
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (effective[i]) {
      order.emplace_back(position[i], i);
    } else if (e.type != EventType::kCompaction && !Covering(covered, e.seq)) {
      order.emplace_back(e.seq, i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Event> out;
  out.reserve(order.size());
  for (const auto& [at, index] : order) out.push_back(std::move(events[index]));
  return out;
}

}  // namespace sessiondb
