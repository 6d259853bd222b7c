// ReplayCompactions: which events a projection sees once summaries stand in
// for the ranges they cover.
#include <algorithm>
#include <utility>

#include "sessiondb/store.h"
#include "store/seq_ranges.h"

namespace sessiondb {

std::vector<Event> ReplayCompactions(std::vector<Event> events) {
  // A compaction's range lies below its own seq, so every compaction that
  // covers an event came after it: an event (a compaction too) is hidden
  // exactly when some compaction's range holds its seq. A compaction inside
  // a later one's range was summarised by it, along with what it stood for:
  // it is hidden, and its range stays hidden.
  store::SeqRangeSet hidden;
  for (const Event& e : events) {
    if (e.type == EventType::kCompaction) hidden.Add(e.compaction.from_seq, e.compaction.to_seq);
  }
  if (hidden.empty()) return events;

  // Each summary takes the place of the first event of its own range, its
  // from_seq (store.h). A summary is placed by its range alone, not by the
  // ranges of summaries it summarised: with ranges that partly overlap, a
  // placement through them would depend on events that a read from the last
  // compaction on (Store::ReadForProjection) never sees.
  std::vector<std::pair<int64_t, size_t>> order;  // (position, index)
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    if (hidden.Holds(e.seq)) continue;
    order.emplace_back(e.type == EventType::kCompaction ? e.compaction.from_seq : e.seq, i);
  }
  // Stable: two summaries of ranges that start together keep their log order.
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Event> out;
  out.reserve(order.size());
  for (const auto& [at, index] : order) out.push_back(std::move(events[index]));
  return out;
}

}  // namespace sessiondb
