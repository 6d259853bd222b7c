// The JSON forms `sessiondb --json` prints for the library's values. Field
// names are the C++ field names of include/sessiondb/types.h, with one rule: a
// field `x_json` that holds JSON text (metadata_json, edit_results_json,
// arguments_json) appears as `x` holding that JSON value, so `jq .metadata.project`
// works without a second decode. Every field is present on every object
// (empty lists, "" and {} rather than absent keys), except a resource, which
// uses the one descriptor form the log and snapshots use (ResourceToJson) plus
// "missing". docs/cli.md lists the shapes.
//
// Example:
//   PrintJson(ToJson(*store->GetSession(id)));
//
// Thread-safety: pure functions.
#pragma once

#include "cli/output.h"
#include "sessiondb/types.h"

namespace sessiondb::cli {

Json ToJson(const Session& session);
// {"sessions":[...],"next_cursor": "..." or null on the last page}
Json ToJson(const SessionPage& page);
Json ToJson(const Resource& resource);
Json ToJson(const Part& part);
Json ToJson(const Message& message);
Json ToJson(const AppendResult& result);
Json ToJson(const Usage& usage);
Json ToJson(const Compaction& compaction);
Json ToJson(const Event& event);
Json ToJson(const Draft& draft);  // "incomplete": a listed draft was never finished
Json ToJson(const UsageReport& report);
Json ToJson(const PruneReport& report);
Json ToJson(const GcReport& report);
// The report plus "clean".
Json ToJson(const VerifyReport& report);
Json ToJson(const StorageStats& stats);

}  // namespace sessiondb::cli
