// The JSON forms of the library's values, one form everywhere: what
// `sessiondb --json` prints, what the HTTP API (/v1) returns and what the MCP
// tools answer. Field
// names are the C++ field names of include/sessiondb/types.h, with one rule: a
// field `x_json` that holds JSON text (metadata_json, edit_results_json,
// arguments_json) appears as `x` holding that JSON value, so `jq .metadata.project`
// works without a second decode. Every field is present on every object
// (empty lists, "" and {} rather than absent keys), except a resource, which
// uses the one descriptor form the log and snapshots use (ResourceToJson) plus
// "missing". docs/cli.md lists the shapes.
//
// Example:
//   ctx.PrintJson(ToJson(*store->GetSession(id)));
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include "sessiondb/code_checkpoints.h"
#include "sessiondb/forget.h"
#include "sessiondb/interop.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/types.h"

namespace sessiondb {

// Ordered, so keys come out in the order of the C++ struct fields.
using Json = nlohmann::ordered_json;

Json ToJson(const Session& session);
// {"sessions":[...],"next_cursor": "..." or null on the last page}
Json ToJson(const SessionPage& page);
Json ToJson(const Resource& resource);
Json ToJson(const Part& part);
Json ToJson(const Message& message);
// ToJson(message).dump() appended to `out`, written straight from the
// message rather than through a tree: reading a long session out to a face
// (the Node package, 10,000 messages a call) was mostly the building and
// dumping of trees. False, with `out` as it was, when a string of the
// message is not UTF-8 (ToJson's dump would refuse it too).
bool AppendJsonText(const Message& message, std::string* out);
Json ToJson(const AppendResult& result);
Json ToJson(const Usage& usage);
Json ToJson(const Compaction& compaction);
Json ToJson(const Event& event);
Json ToJson(const Draft& draft);  // "incomplete": a listed draft was never finished
Json ToJson(const UsageReport& report);
// The report with "cost_usd" (of the priced turns), "unpriced_turns" and
// each model's cost, priced from `turns` (Store::GetTurnUsage); with
// `list_turns` also "turns": [{seq, ts_ms, provider, model, tokens...,
// cost_usd (null: unpriced)}].
Json ToJson(const UsageReport& report, const std::vector<TurnUsage>& turns, bool list_turns);
// {"currency":"USD","group":[...],"rows":[{<the grouped keys>, metrics}],
// "total":{metrics}} (docs/http-api.md).
Json ToJson(const UsageSummary& summary, const std::vector<UsageGroup>& group);
// Parses a comma list of usage groups ("day,model"); kInvalidArgument names
// the bad one.
Result<std::vector<UsageGroup>> ParseUsageGroups(std::string_view list);
Json ToJson(const PruneReport& report);
Json ToJson(const GcReport& report);
// The report plus "clean".
Json ToJson(const VerifyReport& report);
Json ToJson(const StorageStats& stats);
// A hit, with "highlights" as [begin, end] byte pairs of "snippet"; file_path
// and code_id only for code writes.
Json ToJson(const SearchHit& hit);
// The results without the query: match_expression, keyword_matches, bounded,
// pending_embeddings, note, hits.
Json ToJson(const SearchResults& results);
Json ToJson(const ImportReport& report);
Json ToJson(const RecalledCode& code);
Json ToJson(const ChurnEntry& entry);

// ---- Code checkpoints (code_checkpoints.h, docs/memory.md) -----------------
// One form for `sessiondb rewind --code`, file-history, restore and blame
// with --json, the HTTP routes under /v1/files and the code rewind.

// A file of a rewind or restore: {"path","action","version_id" (null: none),
// "conflict" and "refused" (null: none),"done"}, plus "diff" (FileRestoreDiff,
// at most `diff_lines` lines) when `with_diff`.
Json ToJson(const FileRestore& file, bool with_diff, size_t diff_lines = 400);
// A version of a file's history: {"number","version_id","time_ms","time"
// (ISO),"session_id" (null: no store session),"agent_session","seq" (null:
// no session),"tool","tool_use_id" (null: none),"source","exists","size",
// "sha256" (null: no file),"prompt"}, plus "diff" when `with_diff`.
Json ToJson(const FileHistoryEntry& entry, bool with_diff);
// A line of blame: {"line","text","agent", then who wrote it: "session_id",
// "agent_session","seq","tool_use_id","version_id","tool"}, each null when
// no agent did (and session_id, seq, tool_use_id null when not known).
Json ToJson(const BlameLine& line);

// ---- Forgetting (forget.h, docs/retention.md) -------------------------------

// A session of the trash: its ToJson plus "trashed_ms" and "trashed" (ISO).
Json TrashedSessionToJson(const Session& session);
// {"erased","digest_ok","problems","checks"}
Json ToJson(const ErasureCheck& check);
// {"id","ts_ms","ts" (ISO),"actor","action","scope","counts":{kind: n},
// "receipt_id","receipt_digest"}
Json ToJson(const LedgerEntry& entry);
// {"trash_grace_days","rules":[{"project","trash_after_idle_days",
// "keep_newest","archive_after_idle_days","erase_archived_after_idle_days"}]}
Json ToJson(const RetentionPolicy& policy);
// {"dry_run","archived","trashed","erased","kept_for_forks","receipt_id","ledger_id"}
Json ToJson(const RetentionRun& run);

// The policy ToJson writes, read back (the body of PUT /v1/retention): every
// member optional (absent: the default), no other member; kInvalidArgument
// naming the member for a wrong type or an unknown name. The numbers are
// checked by Store::SetRetentionPolicy.
Result<RetentionPolicy> RetentionPolicyFromJson(const Json& body);
// An erasure request (POST /v1/erase): "session_ids", "project", "before"
// (ISO time), "everything", "messages" ([{"session_id","seq"}]), "reason";
// every member optional; kInvalidArgument for a wrong type, an unknown name
// or a time that does not parse.
Result<EraseRequest> EraseRequestFromJson(const Json& body);

}  // namespace sessiondb
