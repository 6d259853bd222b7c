// The jsonl export: one JSON object per message per line, for scripts (jq,
// pandas). Attachments appear as their descriptors, never as bytes. Events
// that are not messages (resource views, compactions) are not written.
// Sessions in id order, messages in seq order; keys sorted; so the same
// sessions give the same bytes.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/json_parse.h"
#include "core/message_codec.h"
#include "interop/formats.h"
#include "interop/output_file.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The line for message `m` of session `session_id` (a fork's inherited
// messages are written as the fork's, at their seq in its history).
Result<std::string> MessageLine(const Message& m, std::string_view session_id) {
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
  try {
    return j.dump() + "\n";
  } catch (const json::exception& e) {
    return Err(Status::InvalidArgument("message " + m.id + " cannot be written: " + e.what()));
  }
}

Status ExportJsonl(Store& store, std::span<const Session> sessions, const fs::path& out,
                   ExportReport* report) {
  OutputFile file;
  RETURN_IF_ERROR(file.Open(out));
  std::vector<const Session*> order;
  for (const Session& s : sessions) order.push_back(&s);
  std::sort(order.begin(), order.end(),
            [](const Session* a, const Session* b) { return a->id < b->id; });
  for (const Session* s : order) {
    ASSIGN_OR_RETURN(std::vector<Event> events, store.ReadEvents(s->id));
    for (const Event& e : events) {
      if (e.type != EventType::kMessage) continue;
      ASSIGN_OR_RETURN(std::string line, MessageLine(e.message, s->id));
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

ExportFormatSpec JsonlExport() { return {"jsonl", ExportJsonl}; }

}  // namespace sessiondb::interop
