// A session's view: the events of its log that rewinds (Store::Rewind) have
// not taken out of it, as ranges of seqs. A rule of the log, written once for
// every backend over Backend::ReadHistory: the rewinds are found through the
// index of the few events that are not messages, so a session that was never
// rewound costs one small lookup more than a plain read, never a scan of its
// log. See docs/harness.md, "Rewind".
// Thread-safety: pure functions, and reads of the backend they are given.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/types.h"
#include "store/backend.h"
#include "store/seq_ranges.h"

namespace sessiondb::store {

// The ranges of seqs the view of a log 1 .. last_seq holds, in order, given
// the log's rewind events (seq order, each seq <= last_seq). The rule: the
// events of the log join the view as they are appended; a rewind to K keeps
// only the view's events with seq <= K. Rewind events are never in the view.
// A log without rewinds is one range, 1 .. last_seq (none when it is empty).
std::vector<SeqRange> ViewRanges(std::span<const Event> rewinds, int64_t last_seq);

// True if `seq` lies in one of `ranges`.
bool InView(std::span<const SeqRange> ranges, int64_t seq);

// A session's view at one moment: its index entry, then its rewinds up to
// that entry's last_seq, so a rewind or append that lands meanwhile is not
// half seen.
struct SessionView {
  Session session;
  std::vector<Event> rewinds;
  std::vector<SeqRange> ranges;
};

// kNotFound for a missing session.
Result<SessionView> LoadSessionView(Backend& backend, std::string_view session_id);

// The view's events that `filter` selects with seq >= from_seq, in order, at
// most `limit` (-1: all): one read per range of the view, stopping once
// `limit` are found. With `newest_first`, the last `limit` of them instead
// (still in seq order), reading from the newest range back.
Result<std::vector<Event>> ReadView(Backend& backend, const SessionView& view, HistoryFilter filter,
                                    int64_t from_seq, int64_t limit, bool newest_first);

// ReadView's messages (filter kMessages), built by Backend::ReadMessages
// straight from the rows, with no Event between: the read of ReadMessages
// and ReadLastMessages.
Result<std::vector<Message>> ReadViewMessages(Backend& backend, const SessionView& view,
                                              int64_t from_seq, int64_t limit, bool newest_first);

// How many messages the view holds within `ranges` (a part of the view):
// seqs are dense over a history, so it is their length less the events that
// are not messages, which the index of those finds.
Result<int64_t> CountMessages(Backend& backend, std::string_view session_id,
                              std::span<const SeqRange> ranges);

// How many messages the rewinds of `run` take out of the view: messages of
// `view` and of the run itself. `run` continues the log of view's session
// (its first seq is view.session.last_seq + 1), in seq order, as
// Store::RestoreEvents writes it. The session's message_count after the run
// is view.session.message_count plus the run's messages less this.
Result<int64_t> CountRewoundByRun(Backend& backend, const SessionView& view,
                                  std::span<const Event> run);

}  // namespace sessiondb::store
