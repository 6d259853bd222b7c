// The JSON bodies of the log's events that are not messages (resource views,
// compactions and rewinds, format version 1, see docs/formats.md), and the decoding
// of a stored event row of any type into an Event. Both backends store the
// same columns and use these, so they read each other's events alike.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb {

inline constexpr int kEventBodyVersion = 1;

// Body JSON of a resource_view event; its searchable text is the reason.
std::string EncodeResourceViewBody(const ResourceView& view);
// Body JSON of a compaction event; its searchable text is the summary.
std::string EncodeCompactionBody(const Compaction& compaction);

// Body JSON of a rewind event; its searchable text is empty.
std::string EncodeRewindBody(const RewindPoint& rewind);

// One stored event row, as both backends hold it.
struct EventRow {
  std::string_view id;
  std::string_view session_id;
  int64_t seq = 0;
  int64_t ts_ms = 0;
  std::string_view type;
  std::string_view role;  // messages only
  std::string_view text;
  std::optional<std::string_view> body;
};

// The Event a row holds. kCorruption for an unknown type or a body that does
// not parse; kFailedPrecondition for a body of a newer format version.
Result<Event> DecodeEventRow(const EventRow& row);

// The same into `*e`, a default-constructed Event (a vector's new last
// element, say): an Event is ~900 bytes of members, and a session of 10,000
// messages spent a third of its load moving and destroying the copies that
// returning one by value makes. On an error, `*e` holds part of the row.
Status DecodeEventRowInto(const EventRow& row, Event* e);

// The Message a row of type "message" holds (the row's type is not looked
// at), into `*m`, a default-constructed Message: what DecodeEventRowInto
// puts in Event::message, without the Event around it, so a history read of
// messages only builds each message once (ids, session id and text copied
// from the row once, no Event's ~900 bytes to construct and destroy).
// kCorruption for an unknown role or a body that does not parse;
// kFailedPrecondition for a body of a newer format version. On an error,
// `*m` holds part of the row.
Status DecodeMessageRowInto(const EventRow& row, Message* m);

}  // namespace sessiondb
