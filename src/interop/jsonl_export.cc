// The jsonl export: one JSON object per message per line, for scripts (jq,
// pandas). Attachments appear as their descriptors, never as bytes. Events
// that are not messages (resource views, compactions, rewinds) are not
// written, nor messages a rewind took out of the session's view. Every
// line of a fork, side branch or sub-agent session says where it branched
// from ("lineage"), so a line stands on its own.
// Sessions in id order, messages in seq order; keys sorted; so the same
// sessions give the same bytes.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/json_parse.h"
#include "core/message_codec.h"
#include "interop/formats.h"
#include "interop/output_file.h"
#include "interop/session_lineage.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The "lineage" member of every line of a session that has one.
json LineageJson(const Lineage& l) {
  json j = {{"kind", LineageKindName(l.kind)}, {"parent_session_id", l.parent_session_id}};
  if (l.kind == Lineage::Kind::kFork) {
    j["at_seq"] = l.at_seq;
    if (!l.at_event_id.empty()) j["at_event_id"] = l.at_event_id;
  }
  if (!l.at_source_record.empty()) j["at_source_record"] = l.at_source_record;
  if (!l.source_parent_id.empty()) j["source_parent_id"] = l.source_parent_id;
  if (l.sidechain) j["sidechain"] = true;
  if (!l.agent_id.empty()) j["agent_id"] = l.agent_id;
  return j;
}

// The line for message `m` of session `session_id` (a fork's inherited
// messages are written as the fork's, at their seq in its history).
Result<std::string> MessageLine(const Message& m, std::string_view session_id,
                                const std::optional<json>& lineage) {
  ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(m));
  json j = body ? ParseJson(*body).value_or(json::object())
                : json{{"parts", json::array({{{"type", "text"}, {"text", m.Text()}}})}};
  j.erase("v");
  j["id"] = m.id;
  j["session_id"] = session_id;
  j["seq"] = m.seq;
  j["ts_ms"] = m.ts_ms;
  j["role"] = RoleName(m.role);
  j["text"] = m.Text();
  if (lineage) j["lineage"] = *lineage;
  try {
    return j.dump() + "\n";
  } catch (const json::exception& e) {
    return Err(Status::InvalidArgument("message " + m.id + " cannot be written: " + e.what()));
  }
}

Status ExportJsonl(Store& store, std::span<const Session> sessions, const fs::path& out,
                   FileSystem& file_system, ExportReport* report) {
  OutputFile file(file_system);
  RETURN_IF_ERROR(file.Open(out));
  std::vector<const Session*> order;
  for (const Session& s : sessions) order.push_back(&s);
  std::sort(order.begin(), order.end(),
            [](const Session* a, const Session* b) { return a->id < b->id; });
  for (const Session* s : order) {
    ASSIGN_OR_RETURN(std::vector<Event> events, store.ReadEvents(s->id));
    std::optional<json> lineage;
    if (std::optional<Lineage> l = SessionLineage(*s, events)) lineage = LineageJson(*l);
    events = ApplyRewinds(std::move(events));  // the session's view, as a reader sees it
    for (const Event& e : events) {
      if (e.type != EventType::kMessage) continue;
      ASSIGN_OR_RETURN(std::string line, MessageLine(e.message, s->id, lineage));
      file.Write(line);
      ++report->messages;
      for (const Part& p : e.message.parts) report->images += p.type == PartType::kImage;
    }
    ++report->sessions;
  }
  RETURN_IF_ERROR(file.Commit());
  report->files.push_back(out.string());
  return Status::Ok();
}

}  // namespace

ExportFormatSpec JsonlExport() { return {ExportFormat::kJsonl, ExportJsonl}; }

}  // namespace sessiondb::interop
