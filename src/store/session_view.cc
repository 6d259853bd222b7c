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

namespace {

// The walk of a view's ranges that ReadView and ReadViewMessages share.
// `read_range(lo, hi, left, piece)` appends to `*piece`, in seq order, what
// the backend holds of lo..hi, at most `left` (-1: all). Oldest first, every
// range appends to one vector; newest first, the newest range is read
// first, into a piece of its own, and the pieces are joined oldest first.
template <typename T, typename ReadRange>
Result<std::vector<T>> ReadRanges(const SessionView& view, int64_t from_seq, int64_t limit,
                                  bool newest_first, ReadRange read_range) {
  std::vector<T> out;
  const auto left = [&] { return limit < 0 ? int64_t{-1} : limit - std::ssize(out); };
  const auto full = [&] { return limit >= 0 && std::ssize(out) >= limit; };
  auto bounds = [&](const SeqRange& r) {
    return std::pair(std::max(r.from_seq, from_seq), r.to_seq);
  };
  if (!newest_first) {
    for (auto it = view.ranges.begin(); it != view.ranges.end() && !full(); ++it) {
      const auto [lo, hi] = bounds(*it);
      if (lo <= hi) RETURN_IF_ERROR(read_range(lo, hi, left(), &out));
    }
    return out;
  }
  std::vector<std::vector<T>> pieces;
  int64_t found = 0;
  for (auto it = view.ranges.rbegin(); it != view.ranges.rend(); ++it) {
    if (limit >= 0 && found >= limit) break;
    const auto [lo, hi] = bounds(*it);
    if (lo > hi) continue;
    std::vector<T>& piece = pieces.emplace_back();
    RETURN_IF_ERROR(read_range(lo, hi, limit < 0 ? int64_t{-1} : limit - found, &piece));
    found += std::ssize(piece);
  }
  // One piece (a session never rewound) is already the answer: moving its
  // elements again would cost as much as reading them.
  if (pieces.size() == 1) return std::move(pieces.front());
  out.reserve(static_cast<size_t>(found));
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
    std::move(it->begin(), it->end(), std::back_inserter(out));
  }
  return out;
}

}  // namespace

Result<std::vector<Event>> ReadView(Backend& backend, const SessionView& view, HistoryFilter filter,
                                    int64_t from_seq, int64_t limit, bool newest_first) {
  return ReadRanges<Event>(
      view, from_seq, limit, newest_first,
      [&](int64_t lo, int64_t hi, int64_t left, std::vector<Event>* piece) -> Status {
        ASSIGN_OR_RETURN(std::vector<Event> read,
                         backend.ReadHistory(view.session.id, {.from_seq = lo,
                                                               .to_seq = hi,
                                                               .limit = left,
                                                               .filter = filter,
                                                               .newest_first = newest_first}));
        if (piece->empty()) {
          *piece = std::move(read);
        } else {
          std::move(read.begin(), read.end(), std::back_inserter(*piece));
        }
        return Status::Ok();
      });
}

Result<std::vector<Message>> ReadViewMessages(Backend& backend, const SessionView& view,
                                              int64_t from_seq, int64_t limit, bool newest_first) {
  return ReadRanges<Message>(
      view, from_seq, limit, newest_first,
      [&](int64_t lo, int64_t hi, int64_t left, std::vector<Message>* piece) {
        return backend.ReadMessages(view.session.id,
                                    {.from_seq = lo,
                                     .to_seq = hi,
                                     .limit = left,
                                     .filter = HistoryFilter::kMessages,
                                     .newest_first = newest_first},
                                    piece);
      });
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
