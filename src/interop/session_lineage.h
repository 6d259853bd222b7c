// Where a session branched from, as the exports say it: a Store fork (its
// parent and the seq it was forked after), a side branch an import made
// from one source history (the session it branched from and the source's
// own id of the record it branched at), or a sub-agent's conversation (the
// session that ran it). Read from Session::parent_id / fork_seq and from the
// metadata the importers write: "forked_from" with "fork_uuid" (claude-code),
// "fork_node" (chatgpt) or "fork_message" (claude-ai), "forked_from_id"
// (codex: the source session, no record), "sidechain", "subagent_of" and
// "agent_id" (claude-code). See docs/interop.md.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "sessiondb/types.h"

namespace sessiondb::interop {

struct Lineage {
  enum class Kind { kFork, kBranch, kSubagent };
  Kind kind = Kind::kFork;
  std::string parent_session_id;
  int64_t at_seq = 0;            // kFork: the last event it shares with its parent
  std::string at_event_id;       // kFork: that event's id
  std::string at_source_record;  // kBranch: the source's id of the record it branched at
  std::string source_parent_id;  // kBranch from codex: the source's id of the parent session
  bool sidechain = false;        // kBranch: a side chain of the source (Claude Code)
  std::string agent_id;          // kSubagent: the source's id of the agent
};

// "fork", "branch", "subagent".
std::string_view LineageKindName(Lineage::Kind kind);

// The lineage of `session`, or nullopt when it has none. `events` is the
// session's log (for the id of the event a fork was made after); metadata
// that is not a JSON object is read as none.
std::optional<Lineage> SessionLineage(const Session& session, std::span<const Event> events);

}  // namespace sessiondb::interop
