#include "api/json_forms.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "api/json_fields.h"
#include "core/iso_time.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/json_writer.h"
#include "core/message_codec.h"

namespace sessiondb {

namespace {

// The JSON value held as text in a C++ `*_json` field; `empty` when the text is
// empty, and the text itself as a string if it does not parse (the library
// validates these fields on write, so that means a damaged log, and showing the
// raw text beats hiding it).
Json EmbeddedJson(const std::string& text, Json empty) {
  if (text.empty()) return empty;
  Json value = ParseJson(text).value_or(Json(Json::value_t::discarded));
  return value.is_discarded() ? Json(text) : value;
}

}  // namespace

Json ToJson(const Session& s) {
  return {{"id", s.id},
          {"title", s.title},
          {"preview", s.preview},
          {"created_ms", s.created_ms},
          {"updated_ms", s.updated_ms},
          {"message_count", s.message_count},
          {"last_seq", s.last_seq},
          {"archived", s.archived},
          {"metadata", EmbeddedJson(s.metadata_json, Json::object())},
          {"parent_id", s.parent_id.empty() ? Json() : Json(s.parent_id)},
          {"fork_seq", s.fork_seq}};
}

Json ToJson(const SessionPage& page) {
  Json sessions = Json::array();
  for (const Session& s : page.sessions) sessions.push_back(ToJson(s));
  return {{"sessions", std::move(sessions)},
          {"next_cursor", page.next_cursor.empty() ? Json() : Json(page.next_cursor)}};
}

Json ToJson(const Resource& r) {
  // The codec decides which fields a descriptor carries; the order here is
  // that of the struct, for people reading the output.
  static constexpr std::array<std::string_view, 9> kFieldOrder = {
      "resource_id", "content_sha256", "mime", "size", "width", "height", "origin", "name", "uri"};
  const Json descriptor = ParseJson(ResourceToJson(r)).value_or(Json::object());
  Json j = Json::object();
  for (std::string_view field : kFieldOrder) {
    if (auto it = descriptor.find(field); it != descriptor.end()) j[std::string(field)] = *it;
  }
  for (const auto& [key, value] : descriptor.items()) {
    if (!j.contains(key)) j[key] = value;
  }
  j["missing"] = r.missing;
  return j;
}

Json ToJson(const Part& p) {
  Json j = {{"type", PartTypeName(p.type)}};
  switch (p.type) {
    case PartType::kText:
    case PartType::kReasoning:
      j["text"] = p.text;
      break;
    case PartType::kImage:
    case PartType::kFile:
    case PartType::kResourceLink:
      j["resource"] = p.resource ? ToJson(*p.resource) : Json();
      break;
    case PartType::kToolCall:
      j["tool_call_id"] = p.tool_call_id;
      j["tool_name"] = p.tool_name;
      j["arguments"] = EmbeddedJson(p.arguments_json, Json::object());
      break;
    case PartType::kToolResult:
      j["tool_call_id"] = p.tool_call_id;
      j["text"] = p.text;
      j["is_error"] = p.is_error;
      break;
  }
  return j;
}

Json ToJson(const Message& m) {
  Json parts = Json::array();
  for (const Part& p : m.parts) parts.push_back(ToJson(p));
  Json usage;
  if (m.usage) {
    usage = {{"input_tokens", m.usage->input_tokens},
             {"output_tokens", m.usage->output_tokens},
             {"cached_tokens", m.usage->cached_tokens},
             {"reasoning_tokens", m.usage->reasoning_tokens},
             {"cache_write_tokens", m.usage->cache_write_tokens}};
  }
  return {{"id", m.id},
          {"session_id", m.session_id},
          {"seq", m.seq},
          {"ts_ms", m.ts_ms},
          {"role", RoleName(m.role)},
          {"parts", std::move(parts)},
          {"files", m.files},
          {"files_modified", m.files_modified},
          {"edit_results", EmbeddedJson(m.edit_results_json, Json::array())},
          {"model", m.model},
          {"provider", m.provider},
          {"usage", std::move(usage)},
          {"metadata", EmbeddedJson(m.metadata_json, Json::object())},
          {"pruned", m.pruned}};
}

namespace {

// A `*_json` field as ToJson writes it (EmbeddedJson, compact): the common
// empty forms without a parse.
void WriteEmbedded(JsonWriter& w, const std::string& text, const char* empty) {
  if (text.empty() || text == empty) {
    w.Raw(empty);
    return;
  }
  w.Raw(EmbeddedJson(text, Json()).dump());
}

void WritePart(JsonWriter& w, const Part& p) {
  w.BeginObject().Key("type").String(PartTypeName(p.type));
  switch (p.type) {
    case PartType::kText:
    case PartType::kReasoning:
      w.Key("text").String(p.text);
      break;
    case PartType::kImage:
    case PartType::kFile:
    case PartType::kResourceLink:
      w.Key("resource").Raw(p.resource ? ToJson(*p.resource).dump() : "null");
      break;
    case PartType::kToolCall:
      w.Key("tool_call_id").String(p.tool_call_id).Key("tool_name").String(p.tool_name);
      w.Key("arguments");
      WriteEmbedded(w, p.arguments_json, "{}");
      break;
    case PartType::kToolResult:
      w.Key("tool_call_id").String(p.tool_call_id).Key("text").String(p.text);
      w.Key("is_error").Bool(p.is_error);
      break;
  }
  w.EndObject();
}

bool WriteMessage(const Message& m, std::string* out);

void WriteStrings(JsonWriter& w, const std::vector<std::string>& values) {
  w.BeginArray();
  for (const std::string& v : values) w.String(v);
  w.EndArray();
}

}  // namespace

bool AppendJsonText(const Message& m, std::string* out) {
  const size_t start = out->size();
  try {
    if (WriteMessage(m, out)) return true;
  } catch (const Json::exception&) {
    // An embedded value that is not UTF-8: its dump refuses, as ToJson's would.
  }
  out->resize(start);
  return false;
}

namespace {

bool WriteMessage(const Message& m, std::string* out) {
  JsonWriter w(out);
  w.BeginObject();
  w.Key("id").String(m.id).Key("session_id").String(m.session_id);
  w.Key("seq").Int(m.seq).Key("ts_ms").Int(m.ts_ms).Key("role").String(RoleName(m.role));
  w.Key("parts").BeginArray();
  for (const Part& p : m.parts) WritePart(w, p);
  w.EndArray();
  w.Key("files");
  WriteStrings(w, m.files);
  w.Key("files_modified");
  WriteStrings(w, m.files_modified);
  w.Key("edit_results");
  WriteEmbedded(w, m.edit_results_json, "[]");
  w.Key("model").String(m.model).Key("provider").String(m.provider);
  w.Key("usage");
  if (m.usage) {
    w.BeginObject()
        .Key("input_tokens")
        .Int(m.usage->input_tokens)
        .Key("output_tokens")
        .Int(m.usage->output_tokens)
        .Key("cached_tokens")
        .Int(m.usage->cached_tokens)
        .Key("reasoning_tokens")
        .Int(m.usage->reasoning_tokens)
        .Key("cache_write_tokens")
        .Int(m.usage->cache_write_tokens)
        .EndObject();
  } else {
    w.Raw("null");
  }
  w.Key("metadata");
  WriteEmbedded(w, m.metadata_json, "{}");
  w.Key("pruned").Bool(m.pruned);
  w.EndObject();
  return w.ok();
}

}  // namespace

Json ToJson(const Usage& u) {
  return {{"input_tokens", u.input_tokens},
          {"output_tokens", u.output_tokens},
          {"cached_tokens", u.cached_tokens},
          {"reasoning_tokens", u.reasoning_tokens},
          {"cache_write_tokens", u.cache_write_tokens}};
}

Json ToJson(const Compaction& c) {
  Json images = Json::array();
  for (const Resource& r : c.images) images.push_back(ToJson(r));
  return {{"from_seq", c.from_seq},     {"to_seq", c.to_seq}, {"summary", c.summary},
          {"strategy", c.strategy},     {"model", c.model},   {"limitations", c.limitations},
          {"images", std::move(images)}};
}

Json ToJson(const Event& e) {
  Json j = {{"id", e.id},
            {"session_id", e.session_id},
            {"seq", e.seq},
            {"ts_ms", e.ts_ms},
            {"type", EventTypeName(e.type)}};
  switch (e.type) {
    case EventType::kMessage:
      j["message"] = ToJson(e.message);
      break;
    case EventType::kResourceView:
      j["resource_view"] = {{"resource_id", e.resource_view.resource_id},
                            {"reason", e.resource_view.reason},
                            {"message_seq", e.resource_view.message_seq},
                            {"resource", ToJson(e.resource_view.resource)}};
      break;
    case EventType::kCompaction:
      j["compaction"] = ToJson(e.compaction);
      break;
    case EventType::kRewind:
      j["rewind"] = {{"to_seq", e.rewind.to_seq}};
      break;
  }
  return j;
}

Json ToJson(const Draft& d) {
  return {{"id", d.id},
          {"session_id", d.session_id},
          {"role", RoleName(d.role)},
          {"text", d.text},
          {"reasoning", d.reasoning},
          {"model", d.model},
          {"created_ms", d.created_ms},
          {"updated_ms", d.updated_ms},
          {"incomplete", true}};
}

Json ToJson(const UsageReport& r) {
  Json by_model = Json::array();
  for (const ModelUsage& m : r.by_model) {
    by_model.push_back({{"provider", m.provider},
                        {"model", m.model},
                        {"turns", m.turns},
                        {"usage", ToJson(m.usage)}});
  }
  return {{"turns", r.turns}, {"total", ToJson(r.total)}, {"by_model", std::move(by_model)}};
}

namespace {

// The token fields of `u` and the metrics, into `j`.
void PutMetrics(Json& j, const UsageMetrics& m) {
  j["turns"] = m.turns;
  j["input_tokens"] = m.usage.input_tokens;
  j["output_tokens"] = m.usage.output_tokens;
  j["cached_tokens"] = m.usage.cached_tokens;
  j["cache_write_tokens"] = m.usage.cache_write_tokens;
  j["reasoning_tokens"] = m.usage.reasoning_tokens;
  j["cost_usd"] = m.cost_usd;
  j["unpriced_turns"] = m.unpriced_turns;
}

}  // namespace

Json ToJson(const UsageReport& r, const std::vector<TurnUsage>& turns, bool list_turns) {
  Json j = ToJson(r);
  double total = 0;
  int64_t unpriced = 0;
  std::map<std::pair<std::string, std::string>, double> by_model;
  Json listed = Json::array();
  for (const TurnUsage& t : turns) {
    if (t.cost_usd) {
      total += *t.cost_usd;
      by_model[{t.provider, t.model}] += *t.cost_usd;
    } else {
      ++unpriced;
    }
    if (!list_turns) continue;
    Json turn = {{"seq", t.seq},
                 {"ts_ms", t.ts_ms},
                 {"provider", t.provider},
                 {"model", t.model},
                 {"input_tokens", t.usage.input_tokens},
                 {"output_tokens", t.usage.output_tokens},
                 {"cached_tokens", t.usage.cached_tokens},
                 {"cache_write_tokens", t.usage.cache_write_tokens},
                 {"reasoning_tokens", t.usage.reasoning_tokens}};
    turn["cost_usd"] = t.cost_usd ? Json(*t.cost_usd) : Json(nullptr);
    listed.push_back(std::move(turn));
  }
  j["currency"] = "USD";
  j["cost_usd"] = total;
  j["unpriced_turns"] = unpriced;
  for (Json& m : j["by_model"]) {
    auto it = by_model.find({MemberOr(m, "provider", ""), MemberOr(m, "model", "")});
    m["cost_usd"] = it == by_model.end() ? 0.0 : it->second;
  }
  if (list_turns) j["per_turn"] = std::move(listed);
  return j;
}

Json ToJson(const UsageSummary& s, const std::vector<UsageGroup>& group) {
  Json names = Json::array();
  for (UsageGroup g : group) names.push_back(UsageGroupName(g));
  Json rows = Json::array();
  for (const UsageRow& r : s.rows) {
    Json row = Json::object();
    for (UsageGroup g : group) {
      switch (g) {
        case UsageGroup::kDay:
          row["day"] = r.day;
          break;
        case UsageGroup::kMonth:
          row["month"] = r.month;
          break;
        case UsageGroup::kProject:
          row["project"] = r.project;
          break;
        case UsageGroup::kModel:
          row["model"] = r.model;
          break;
        case UsageGroup::kProvider:
          row["provider"] = r.provider;
          break;
        case UsageGroup::kSession:
          row["session_id"] = r.session_id;
          break;
      }
    }
    PutMetrics(row, r.metrics);
    rows.push_back(std::move(row));
  }
  Json total = Json::object();
  PutMetrics(total, s.total);
  return {{"currency", "USD"},
          {"group", std::move(names)},
          {"rows", std::move(rows)},
          {"total", std::move(total)}};
}

Result<std::vector<UsageGroup>> ParseUsageGroups(std::string_view list) {
  std::vector<UsageGroup> out;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    if (out.size() >= 6) return Err(Status::InvalidArgument("at most 6 usage groups"));
    ASSIGN_OR_RETURN(UsageGroup g, ParseUsageGroup(name.substr(0, 40)));
    out.push_back(g);
  }
  return out;
}

Json ToJson(const PruneReport& r) {
  return {{"events_pruned", r.events_pruned},
          {"blobs_deleted", r.blobs_deleted},
          {"bytes_freed", r.bytes_freed}};
}

Json ToJson(const AppendResult& r) {
  Json resources = Json::array();
  for (const Resource& res : r.resources) resources.push_back(ToJson(res));
  return {{"message_id", r.message_id},
          {"seq", r.seq},
          {"ts_ms", r.ts_ms},
          {"resources", std::move(resources)}};
}

Json ToJson(const GcReport& r) {
  return {{"blobs_scanned", r.blobs_scanned},
          {"blobs_deleted", r.blobs_deleted},
          {"bytes_freed", r.bytes_freed},
          {"blobs_in_grace", r.blobs_in_grace}};
}

Json ToJson(const VerifyReport& r) {
  return {{"blobs_checked", r.blobs_checked},
          {"bytes_checked", r.bytes_checked},
          {"missing", r.missing},
          {"corrupt", r.corrupt},
          {"clean", r.clean()}};
}

Json ToJson(const StorageStats& s) {
  return {{"sessions", s.sessions},      {"archived_sessions", s.archived_sessions},
          {"messages", s.messages},      {"blobs", s.blobs},
          {"blob_bytes", s.blob_bytes},  {"database_bytes", s.database_bytes},
          {"total_bytes", s.total_bytes}};
}

Json ToJson(const SearchHit& h) {
  Json highlights = Json::array();
  for (const auto& [b, e] : h.highlights) highlights.push_back({b, e});
  Json j = {{"kind", HitKindName(h.kind)},
            {"session_id", h.session_id},
            {"session_title", h.session_title},
            {"seq", h.seq},
            {"event_id", h.event_id}};
  j["role"] = h.role ? Json(RoleName(*h.role)) : Json(nullptr);
  j["time_ms"] = h.time_ms;
  if (h.kind == HitKind::kCodeWrite) {
    j["file_path"] = h.file_path;
    j["code_id"] = h.code_id;
  }
  j["snippet"] = h.snippet;
  j["highlights"] = std::move(highlights);
  j["score"] = h.score;
  j["keyword_rank"] = h.keyword_rank;
  j["keyword_score"] = h.keyword_score;
  j["vector_rank"] = h.vector_rank;
  j["vector_score"] = h.vector_score;
  return j;
}

Json ToJson(const SearchResults& r) {
  Json hits = Json::array();
  for (const SearchHit& h : r.hits) hits.push_back(ToJson(h));
  Json corrected = Json::array();
  for (const auto& [typed, used] : r.corrected_words) {
    corrected.push_back({{"typed", typed}, {"used", used}});
  }
  return {{"match_expression", r.match_expression},
          {"corrected_query", r.corrected_query},
          {"corrected_words", std::move(corrected)},
          {"did_you_mean", r.did_you_mean},
          {"keyword_matches", r.keyword_matches},
          {"bounded", r.bounded},
          {"pending_embeddings", r.pending_embeddings},
          {"pending_documents", r.pending_documents},
          {"note", r.note},
          {"hits", std::move(hits)}};
}

Json ToJson(const ImportReport& r) {
  Json skipped = Json::array();
  for (const SkippedRecord& s : r.skipped)
    skipped.push_back({{"where", s.where}, {"reason", s.reason}});
  Json not_stored = Json::array();
  for (const SkippedRecord& s : r.not_stored) {
    not_stored.push_back({{"where", s.where}, {"reason", s.reason}});
  }
  Json files_skipped = Json::array();
  for (const SkippedRecord& s : r.files_skipped) {
    files_skipped.push_back({{"where", s.where}, {"reason", s.reason}});
  }
  return {{"format", std::string(ImportFormatName(r.format))},
          {"sessions_added", r.sessions_added},
          {"sessions_extended", r.sessions_extended},
          {"sessions_unchanged", r.sessions_unchanged},
          {"messages_added", r.messages_added},
          {"images_added", r.images_added},
          {"records_skipped", r.records_skipped},
          {"skipped", std::move(skipped)},
          {"attachments_not_stored", r.attachments_not_stored},
          {"not_stored", std::move(not_stored)},
          {"files_skipped", std::move(files_skipped)}};
}

Json ToJson(const RecalledCode& r) {
  return {{"file_path", r.file_path}, {"preview", r.preview}, {"session_id", r.session_id},
          {"project", r.project},     {"time_ms", r.time_ms}, {"code_id", r.code_id},
          {"score", r.score}};
}

Json ToJson(const ChurnEntry& e) {
  return {{"file_path", e.file_path},
          {"function", e.function},
          {"edits_24h", e.edits_24h},
          {"edits_30d", e.edits_30d},
          {"tier", std::string(ChurnTierName(e.tier))}};
}

// ---- Code checkpoints -------------------------------------------------------

namespace {

Json TextOrNull(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

}  // namespace

Json ToJson(const FileRestore& f, bool with_diff, size_t diff_lines) {
  Json j = {{"path", f.file_path},
            {"action", FileRestoreActionName(f.action)},
            {"version_id", f.version_id == 0 ? Json(nullptr) : Json(f.version_id)},
            {"conflict", TextOrNull(f.conflict)},
            {"refused", TextOrNull(f.refused)},
            {"done", f.done}};
  if (with_diff) j["diff"] = FileRestoreDiff(f, diff_lines);
  return j;
}

Json ToJson(const FileHistoryEntry& e, bool with_diff) {
  const PlacedFileVersion& p = e.placed;
  Json j = {{"number", e.number},
            {"version_id", p.version.id},
            {"time_ms", p.version.time_ms},
            {"time", FormatUtcTime(p.version.time_ms, UtcTimeForm::kIsoMillis)},
            {"session_id", TextOrNull(p.session_id)},
            {"agent_session", p.version.agent_session},
            {"seq", p.session_id.empty() ? Json(nullptr) : Json(p.seq)},
            {"tool", p.version.tool},
            {"tool_use_id", TextOrNull(p.version.tool_use_id)},
            {"source", p.version.source},
            {"exists", p.version.exists},
            {"size", p.version.size},
            {"sha256", TextOrNull(p.version.sha256)},
            {"prompt", e.prompt}};
  if (with_diff) j["diff"] = e.diff;
  return j;
}

Json ToJson(const BlameLine& l) {
  Json j = {{"line", l.line}, {"text", l.text}, {"agent", l.by.has_value()}};
  if (!l.by) {
    for (const char* key :
         {"session_id", "agent_session", "seq", "tool_use_id", "version_id", "tool"}) {
      j[key] = nullptr;
    }
    return j;
  }
  const PlacedFileVersion& p = *l.by;
  j["session_id"] = TextOrNull(p.session_id);
  j["agent_session"] = p.version.agent_session;
  j["seq"] = p.session_id.empty() ? Json(nullptr) : Json(p.seq);
  j["tool_use_id"] = TextOrNull(p.version.tool_use_id);
  j["version_id"] = p.version.id;
  j["tool"] = p.version.tool;
  return j;
}

}  // namespace sessiondb

// ---- Forgetting -------------------------------------------------------------

namespace sessiondb {
namespace {

Json CountsToJson(const std::vector<std::pair<std::string, int64_t>>& counts) {
  Json out = Json::object();
  for (const auto& [kind, n] : counts) out[kind] = n;
  return out;
}

Json IdList(const std::vector<std::string>& ids) {
  Json out = Json::array();
  for (const std::string& id : ids) out.push_back(id);
  return out;
}

// Checks that `body` is an object whose members are all in `known`.
Status CheckMembers(const Json& body, std::string_view what,
                    std::initializer_list<std::string_view> known) {
  if (!body.is_object())
    return Status::InvalidArgument(std::string(what) + " must be a JSON object");
  for (const auto& item : body.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      return Status::InvalidArgument(std::string(what) + " has an unknown member \"" + item.key() +
                                     "\"");
    }
  }
  return Status::Ok();
}

Status ReadInt(const Json& body, const char* key, int64_t* out) {
  auto it = body.find(key);
  if (it == body.end()) return Status::Ok();
  if (!it->is_number_integer()) return WrongType(key, "a whole number");
  *out = it->get<int64_t>();
  return Status::Ok();
}

Status ReadString(const Json& body, const char* key, std::string* out) {
  auto it = body.find(key);
  if (it == body.end()) return Status::Ok();
  if (!it->is_string()) return WrongType(key, "a string");
  *out = it->get<std::string>();
  return Status::Ok();
}

}  // namespace

Json TrashedSessionToJson(const Session& session) {
  Json out = ToJson(session);
  out["trashed_ms"] = session.trashed_ms;
  out["trashed"] = FormatUtcTime(session.trashed_ms, UtcTimeForm::kIsoMillis);
  return out;
}

Json ToJson(const ErasureCheck& check) {
  return {{"erased", check.erased()},
          {"digest_ok", check.digest_ok},
          {"problems", IdList(check.problems)},
          {"checks", check.checks}};
}

Json ToJson(const LedgerEntry& e) {
  return {{"id", e.id},
          {"ts_ms", e.ts_ms},
          {"ts", FormatUtcTime(e.ts_ms, UtcTimeForm::kIsoMillis)},
          {"actor", e.actor},
          {"action", e.action},
          {"scope", e.scope},
          {"counts", CountsToJson(e.counts)},
          {"receipt_id", e.receipt_id},
          {"receipt_digest", e.receipt_digest}};
}

Json ToJson(const RetentionPolicy& policy) {
  Json rules = Json::array();
  for (const RetentionRule& r : policy.rules) {
    rules.push_back({{"project", r.project},
                     {"trash_after_idle_days", r.trash_after_idle_days},
                     {"keep_newest", r.keep_newest},
                     {"archive_after_idle_days", r.archive_after_idle_days},
                     {"erase_archived_after_idle_days", r.erase_archived_after_idle_days}});
  }
  return {{"trash_grace_days", policy.trash_grace_days}, {"rules", std::move(rules)}};
}

Json ToJson(const RetentionRun& run) {
  return {{"dry_run", run.dry_run},
          {"archived", IdList(run.archived)},
          {"trashed", IdList(run.trashed)},
          {"erased", IdList(run.erased)},
          {"kept_for_forks", IdList(run.kept_for_forks)},
          {"receipt_id", run.receipt_id},
          {"ledger_id", run.ledger_id}};
}

Result<RetentionPolicy> RetentionPolicyFromJson(const Json& body) {
  RETURN_IF_ERROR(CheckMembers(body, "the policy", {"trash_grace_days", "rules"}));
  RetentionPolicy policy;
  RETURN_IF_ERROR(ReadInt(body, "trash_grace_days", &policy.trash_grace_days));
  auto rules = body.find("rules");
  if (rules == body.end()) return policy;
  if (!rules->is_array()) return Err(WrongType("rules", "a list of rules"));
  for (const Json& r : *rules) {
    RETURN_IF_ERROR(CheckMembers(r, "a rule",
                                 {"project", "trash_after_idle_days", "keep_newest",
                                  "archive_after_idle_days", "erase_archived_after_idle_days"}));
    RetentionRule rule;
    RETURN_IF_ERROR(ReadString(r, "project", &rule.project));
    RETURN_IF_ERROR(ReadInt(r, "trash_after_idle_days", &rule.trash_after_idle_days));
    RETURN_IF_ERROR(ReadInt(r, "keep_newest", &rule.keep_newest));
    RETURN_IF_ERROR(ReadInt(r, "archive_after_idle_days", &rule.archive_after_idle_days));
    RETURN_IF_ERROR(
        ReadInt(r, "erase_archived_after_idle_days", &rule.erase_archived_after_idle_days));
    policy.rules.push_back(std::move(rule));
  }
  return policy;
}

Result<EraseRequest> EraseRequestFromJson(const Json& body) {
  RETURN_IF_ERROR(
      CheckMembers(body, "the erasure",
                   {"session_ids", "project", "before", "everything", "messages", "reason"}));
  EraseRequest request;
  if (auto ids = body.find("session_ids"); ids != body.end()) {
    if (!ids->is_array()) return Err(WrongType("session_ids", "a list of session ids"));
    for (const Json& id : *ids) {
      if (!id.is_string()) return Err(WrongType("session_ids", "a list of session ids"));
      request.session_ids.push_back(id.get<std::string>());
    }
  }
  RETURN_IF_ERROR(ReadString(body, "project", &request.project));
  std::string before;
  RETURN_IF_ERROR(ReadString(body, "before", &before));
  if (!before.empty()) {
    std::optional<int64_t> ms = ParseIsoTime(before);
    if (!ms) {
      return Err(Status::InvalidArgument("\"before\" is not an ISO-8601 date or time: " + before));
    }
    request.before_ms = *ms;
  }
  if (auto everything = body.find("everything"); everything != body.end()) {
    if (!everything->is_boolean()) return Err(WrongType("everything", "true or false"));
    request.everything = everything->get<bool>();
  }
  if (auto messages = body.find("messages"); messages != body.end()) {
    if (!messages->is_array()) return Err(WrongType("messages", "a list of messages"));
    for (const Json& m : *messages) {
      RETURN_IF_ERROR(CheckMembers(m, "a message", {"session_id", "seq"}));
      MessageRef ref;
      RETURN_IF_ERROR(ReadString(m, "session_id", &ref.session_id));
      RETURN_IF_ERROR(ReadInt(m, "seq", &ref.seq));
      request.messages.push_back(std::move(ref));
    }
  }
  RETURN_IF_ERROR(ReadString(body, "reason", &request.reason));
  return request;
}

}  // namespace sessiondb
