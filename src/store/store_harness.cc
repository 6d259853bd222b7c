// The harness methods every backend shares: they validate, then call the
// backend primitives (AppendEventRecord, FindLastCompaction, ReadRewinds,
// FindResourceMessage, ReadEvents).
#include <algorithm>

#include "core/event_codec.h"
#include "core/text_rules.h"
#include "sessiondb/store.h"
#include "store/seq_ranges.h"
#include "store/session_view.h"
#include "store/store_common.h"

namespace sessiondb {
namespace {

// The events with seq from_seq .. to_seq of the session's history.
Result<std::vector<Event>> ReadRange(Store& store, std::string_view session_id, int64_t from_seq,
                                     int64_t to_seq) {
  if (to_seq < from_seq) return std::vector<Event>();
  return store.ReadEvents(session_id, from_seq, to_seq - from_seq + 1);
}

std::string DescribeImage(const Resource& r) {
  std::string out = r.resource_id;
  std::string details;
  auto add = [&details](const std::string& s) {
    if (s.empty()) return;
    if (!details.empty()) details += ", ";
    details += s;
  };
  if (!r.name.empty()) add("\"" + r.name + "\"");
  add(r.mime);
  if (r.width > 0 && r.height > 0) add(std::to_string(r.width) + "x" + std::to_string(r.height));
  if (!details.empty()) out += " (" + details + ")";
  return out;
}

// What the store adds to a compaction's limitations when its range held images.
std::string ImageLimitation(const std::vector<Resource>& images) {
  std::string names;
  for (const Resource& r : images) {
    if (!names.empty()) names += "; ";
    names += DescribeImage(r);
  }
  return "This summary is not the image" + std::string(images.size() == 1 ? "" : "s") +
         " it replaces: " + std::to_string(images.size()) + " image" +
         (images.size() == 1 ? " was" : "s were") + " attached in the summarised range (" + names +
         "). A description is not the original; record a resource_view to see " +
         (images.size() == 1 ? "it" : "one") + " again.";
}

}  // namespace

Result<std::vector<Event>> Store::ReadForProjection(std::string_view session_id) {
  ASSIGN_OR_RETURN(Session session, GetSession(session_id));
  // Rewinds first: what they took out of the view, compactions included, is
  // not there to replay (ApplyRewinds, then ReplayCompactions).
  ASSIGN_OR_RETURN(std::vector<Event> rewinds, ReadRewinds(session_id, session.last_seq));
  const std::vector<store::SeqRange> view = store::ViewRanges(rewinds, session.last_seq);
  // The last compaction at or below `upto` that is in the view.
  auto last_compaction = [&](int64_t upto) -> Result<std::optional<Event>> {
    while (upto > 0) {
      ASSIGN_OR_RETURN(std::optional<Event> found, FindLastCompaction(session_id, upto));
      if (!found || store::InView(view, found->seq)) return found;
      upto = found->seq - 1;
    }
    return std::optional<Event>();
  };
  // Walk back from the end, one compaction at a time. A compaction's range
  // lies below its own seq, so once the walk is below an event, every
  // compaction that could hide it has been met: the events between two
  // compactions are read except where a range met so far holds them. The
  // walk ends at the start of the log, or once those ranges hold everything
  // below it: all that is there is hidden, compactions too, and a hidden
  // compaction neither shows nor places a summary (ReplayCompactions).
  store::SeqRangeSet hidden;
  std::vector<std::vector<Event>> pieces;  // newest first
  int64_t upto = session.last_seq;
  while (upto > 0 && !hidden.HoldsAll(1, upto)) {
    ASSIGN_OR_RETURN(std::optional<Event> last, last_compaction(upto));
    const int64_t lo = last ? last->seq + 1 : 1;
    const std::vector<store::SeqRange> gaps = hidden.Gaps(lo, upto);
    for (auto gap = gaps.rbegin(); gap != gaps.rend(); ++gap) {
      ASSIGN_OR_RETURN(std::vector<Event> piece,
                       ReadRange(*this, session_id, gap->from_seq, gap->to_seq));
      pieces.push_back(std::move(piece));
    }
    if (!last) break;
    const bool shown = !hidden.Holds(last->seq);
    hidden.Add(last->compaction.from_seq, last->compaction.to_seq);
    upto = last->seq - 1;
    if (shown) pieces.push_back({std::move(*last)});
  }
  std::vector<Event> events;
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
    for (Event& e : *it) {
      if (store::InView(view, e.seq)) events.push_back(std::move(e));
    }
  }
  return ReplayCompactions(std::move(events));
}

Result<Event> Store::RecordResourceView(std::string_view session_id, std::string_view resource_id,
                                        std::string_view reason) {
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  if (resource_id.empty()) return Err(Status::InvalidArgument("resource id is empty"));
  if (!IsValidUtf8(reason)) return Err(Status::InvalidArgument("the view reason is not UTF-8"));
  ASSIGN_OR_RETURN(std::optional<Event> attached, FindResourceMessage(session_id, resource_id));
  if (!attached) {
    return Err(Status::NotFound("no message of session " + std::string(session_id) +
                                " attached resource " + std::string(resource_id)));
  }
  ResourceView view;
  view.resource_id.assign(resource_id);
  view.reason.assign(reason);
  view.message_seq = attached->seq;
  for (const Part& p : attached->message.parts) {
    if (p.resource && p.resource->resource_id == resource_id) view.resource = *p.resource;
  }
  if (view.resource.origin == Origin::kRemoteLink) {
    return Err(Status::InvalidArgument("resource " + std::string(resource_id) +
                                       " is a remote link (" + view.resource.uri +
                                       "): its bytes were never fetched, so it cannot be viewed"));
  }
  ASSIGN_OR_RETURN(Event event, AppendEventRecord(session_id, EventType::kResourceView, view.reason,
                                                  EncodeResourceViewBody(view)));
  event.resource_view = std::move(view);
  return event;
}

Result<Event> Store::Compact(std::string_view session_id, const CompactionRequest& request) {
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  if (request.summary.empty()) {
    return Err(Status::InvalidArgument("a compaction needs a summary; it is empty"));
  }
  for (const std::string* field :
       {&request.summary, &request.strategy, &request.model, &request.limitations}) {
    if (!IsValidUtf8(*field)) {
      return Err(
          Status::InvalidArgument("the compaction's summary, strategy, model and "
                                  "limitations must be UTF-8"));
    }
  }
  ASSIGN_OR_RETURN(Session session, GetSession(session_id));
  if (request.from_seq < 1 || request.to_seq < request.from_seq ||
      request.to_seq > session.last_seq) {
    return Err(Status::InvalidArgument("compaction range " + std::to_string(request.from_seq) +
                                       ".." + std::to_string(request.to_seq) +
                                       " is not within the session's log (1.." +
                                       std::to_string(session.last_seq) + ", from <= to)"));
  }
  Compaction c;
  c.from_seq = request.from_seq;
  c.to_seq = request.to_seq;
  c.summary = request.summary;
  c.strategy = request.strategy;
  c.model = request.model;
  c.limitations = request.limitations;
  // After a rewind the range must start and end in the view: a summary of
  // what was rewound would bring it back into the view.
  ASSIGN_OR_RETURN(std::vector<Event> rewinds, ReadRewinds(session_id, session.last_seq));
  const std::vector<store::SeqRange> view = store::ViewRanges(rewinds, session.last_seq);
  for (int64_t end : {request.from_seq, request.to_seq}) {
    if (!store::InView(view, end)) {
      return Err(Status::InvalidArgument(
          "compaction range " + std::to_string(request.from_seq) + ".." +
          std::to_string(request.to_seq) + ": seq " + std::to_string(end) +
          " is not in the session's view (a rewind took it out, or it is a rewind)"));
    }
  }
  ASSIGN_OR_RETURN(std::vector<Event> covered,
                   ReadRange(*this, session_id, request.from_seq, request.to_seq));
  for (const Event& e : covered) {
    if (!store::InView(view, e.seq)) continue;  // rewound: not the summary's to admit
    if (e.type == EventType::kCompaction) {
      // A summary of a summary still cannot show the images the first one lost.
      for (const Resource& r : e.compaction.images) c.images.push_back(r);
      continue;
    }
    if (e.type != EventType::kMessage) continue;
    for (const Part& p : e.message.parts) {
      if (p.type == PartType::kImage && p.resource) c.images.push_back(*p.resource);
    }
  }
  for (Resource& r : c.images) r.missing = false;  // a read-time flag, never stored
  if (!c.images.empty()) {
    if (!c.limitations.empty()) c.limitations += "\n";
    c.limitations += ImageLimitation(c.images);
  }
  ASSIGN_OR_RETURN(Event event, AppendEventRecord(session_id, EventType::kCompaction, c.summary,
                                                  EncodeCompactionBody(c)));
  event.compaction = std::move(c);
  return event;
}

}  // namespace sessiondb
