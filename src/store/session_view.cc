#include "store/session_view.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "sessiondb/store.h"

namespace sessiondb::store {

std::vector<SeqRange> ViewRanges(std::span<const Event> rewinds, int64_t last_seq) {
  std::vector<SeqRange> ranges;
  int64_t appended_to = 0;  // the last seq that has joined the view so far
  for (const Event& rewind : rewinds) {
    if (rewind.seq > appended_to + 1) ranges.push_back({appended_to + 1, rewind.seq - 1});
    appended_to = rewind.seq;
    const int64_t keep_to = rewind.rewind.to_seq;
    while (!ranges.empty() && ranges.back().from_seq > keep_to) ranges.pop_back();
    if (!ranges.empty()) ranges.back().to_seq = std::min(ranges.back().to_seq, keep_to);
  }
  if (last_seq > appended_to) ranges.push_back({appended_to + 1, last_seq});
  return ranges;
}

bool InView(std::span<const SeqRange> ranges, int64_t seq) {
  return std::ranges::any_of(
      ranges, [seq](const SeqRange& r) { return r.from_seq <= seq && seq <= r.to_seq; });
}

Result<SessionView> LoadSessionView(Backend& backend, std::string_view session_id) {
  SessionView view;
  ASSIGN_OR_RETURN(view.session, backend.LoadSession(session_id));
  ASSIGN_OR_RETURN(view.rewinds,
                   backend.ReadHistory(session_id, {.to_seq = view.session.last_seq,
                                                    .filter = HistoryFilter::kRewinds}));
  view.ranges = ViewRanges(view.rewinds, view.session.last_seq);
  return view;
}

Result<std::vector<Event>> ReadView(Backend& backend, const SessionView& view, HistoryFilter filter,
                                    int64_t from_seq, int64_t limit, bool newest_first) {
  // Newest range first when reading the last ones; each read comes back in
  // seq order, so the pieces are put together oldest first at the end.
  std::vector<std::vector<Event>> pieces;
  int64_t found = 0;
  auto read = [&](const SeqRange& r) -> Status {
    const int64_t lo = std::max(r.from_seq, from_seq);
    if (lo > r.to_seq) return Status::Ok();
    ASSIGN_OR_RETURN(std::vector<Event> piece,
                     backend.ReadHistory(view.session.id, {.from_seq = lo,
                                                           .to_seq = r.to_seq,
                                                           .limit = limit < 0 ? -1 : limit - found,
                                                           .filter = filter,
                                                           .newest_first = newest_first}));
    found += std::ssize(piece);
    pieces.push_back(std::move(piece));
    return Status::Ok();
  };
  const auto full = [&] { return limit >= 0 && found >= limit; };
  if (newest_first) {
    for (auto it = view.ranges.rbegin(); it != view.ranges.rend() && !full(); ++it) {
      RETURN_IF_ERROR(read(*it));
    }
    std::reverse(pieces.begin(), pieces.end());
  } else {
    for (auto it = view.ranges.begin(); it != view.ranges.end() && !full(); ++it) {
      RETURN_IF_ERROR(read(*it));
    }
  }
  // One range (a session never rewound) is already the answer: moving its
  // events again would cost as much as reading them.
  if (pieces.size() == 1) return std::move(pieces.front());
  std::vector<Event> out;
  out.reserve(static_cast<size_t>(found));
  for (std::vector<Event>& piece : pieces) {
    std::move(piece.begin(), piece.end(), std::back_inserter(out));
  }
  return out;
}

Result<int64_t> CountMessages(Backend& backend, std::string_view session_id,
                              std::span<const SeqRange> ranges) {
  int64_t count = 0;
  for (const SeqRange& r : ranges) {
    if (r.from_seq > r.to_seq) continue;
    ASSIGN_OR_RETURN(std::vector<Event> others,
                     backend.ReadHistory(session_id, {.from_seq = r.from_seq,
                                                      .to_seq = r.to_seq,
                                                      .filter = HistoryFilter::kNotMessages}));
    count += r.to_seq - r.from_seq + 1 - std::ssize(others);
  }
  return count;
}

Result<int64_t> CountRewoundByRun(Backend& backend, const SessionView& view,
                                  std::span<const Event> run) {
  std::vector<Event> rewinds = view.rewinds;
  for (const Event& e : run) {
    if (e.type == EventType::kRewind) rewinds.push_back(e);
  }
  const std::vector<SeqRange> after = ViewRanges(rewinds, view.session.last_seq + std::ssize(run));
  SeqRangeSet kept;
  for (const SeqRange& r : after) kept.Add(r.from_seq, r.to_seq);
  // The view before the run, less what it still holds after it.
  std::vector<SeqRange> dropped;
  for (const SeqRange& r : view.ranges) {
    for (const SeqRange& gap : kept.Gaps(r.from_seq, r.to_seq)) dropped.push_back(gap);
  }
  ASSIGN_OR_RETURN(int64_t rewound, CountMessages(backend, view.session.id, dropped));
  for (const Event& e : run) {
    rewound += e.type == EventType::kMessage && !kept.Holds(e.seq);
  }
  return rewound;
}

}  // namespace sessiondb::store

namespace sessiondb {

std::vector<Event> ApplyRewinds(std::vector<Event> events) {
  std::vector<Event> rewinds;
  for (const Event& e : events) {
    if (e.type == EventType::kRewind) rewinds.push_back(e);
  }
  if (rewinds.empty()) return events;
  const int64_t last_seq = events.empty() ? 0 : events.back().seq;
  const std::vector<store::SeqRange> ranges = store::ViewRanges(rewinds, last_seq);
  std::erase_if(events, [&](const Event& e) { return !store::InView(ranges, e.seq); });
  return events;
}

}  // namespace sessiondb
