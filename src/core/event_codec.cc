#include "core/event_codec.h"

#include <nlohmann/json.hpp>

#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/message_codec.h"

namespace sessiondb {
namespace {

using nlohmann::json;

json ResourceJson(const Resource& r) { return ParseJson(ResourceToJson(r)).value_or(json()); }

Result<json> ParseBody(const EventRow& row) {
  if (!row.body) {
    return Err(Status::Corruption("event " + std::string(row.id) + " (" + std::string(row.type) +
                                  ") has no body"));
  }
  json body = ParseJson(*row.body).value_or(json());
  if (!body.is_object()) {
    return Err(Status::Corruption("event " + std::string(row.id) +
                                  " has a body that is not a JSON object"));
  }
  int version = MemberOr(body, "v", 0);
  if (version > kEventBodyVersion) {
    return Err(Status::FailedPrecondition(
        "event " + std::string(row.id) + " uses body format version " + std::to_string(version) +
        "; this build reads up to " + std::to_string(kEventBodyVersion) + ". Upgrade sessiondb."));
  }
  return body;
}

Result<Resource> DecodeResourceJson(const json& j) {
  if (!j.is_object()) return Err(Status::Corruption("a resource descriptor is not an object"));
  return ResourceFromJson(j.dump());
}

Status DecodeResourceView(const json& body, ResourceView* view) {
  view->resource_id = MemberOr(body, "resource_id", "");
  view->reason = MemberOr(body, "reason", "");
  view->message_seq = MemberOr(body, "message_seq", int64_t{0});
  if (auto it = body.find("resource"); it != body.end()) {
    ASSIGN_OR_RETURN(view->resource, DecodeResourceJson(*it));
  }
  return Status::Ok();
}

Status DecodeCompaction(const json& body, Compaction* c) {
  c->from_seq = MemberOr(body, "from_seq", int64_t{0});
  c->to_seq = MemberOr(body, "to_seq", int64_t{0});
  c->summary = MemberOr(body, "summary", "");
  c->strategy = MemberOr(body, "strategy", "");
  c->model = MemberOr(body, "model", "");
  c->limitations = MemberOr(body, "limitations", "");
  if (auto it = body.find("images"); it != body.end() && it->is_array()) {
    for (const json& r : *it) {
      ASSIGN_OR_RETURN(Resource resource, DecodeResourceJson(r));
      c->images.push_back(std::move(resource));
    }
  }
  return Status::Ok();
}

Status DecodeRewind(const json& body, const std::string& id, RewindPoint* rewind) {
  rewind->to_seq = MemberOr(body, "to_seq", int64_t{-1});
  if (rewind->to_seq < 0) {
    return Status::Corruption("rewind event " + id + " has no to_seq, or a negative one");
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeResourceViewBody(const ResourceView& view) {
  json body = {{"v", kEventBodyVersion},
               {"resource_id", view.resource_id},
               {"reason", view.reason},
               {"message_seq", view.message_seq},
               {"resource", ResourceJson(view.resource)}};
  return body.dump();
}

std::string EncodeCompactionBody(const Compaction& c) {
  json images = json::array();
  for (const Resource& r : c.images) images.push_back(ResourceJson(r));
  json body = {{"v", kEventBodyVersion},       {"from_seq", c.from_seq},     {"to_seq", c.to_seq},
               {"summary", c.summary},         {"strategy", c.strategy},     {"model", c.model},
               {"limitations", c.limitations}, {"images", std::move(images)}};
  return body.dump();
}

std::string EncodeRewindBody(const RewindPoint& rewind) {
  json body = {{"v", kEventBodyVersion}, {"to_seq", rewind.to_seq}};
  return body.dump();
}

Status DecodeMessageRowInto(const EventRow& row, Message* m) {
  m->id.assign(row.id);
  m->session_id.assign(row.session_id);
  m->seq = row.seq;
  m->ts_ms = row.ts_ms;
  auto role = ParseRole(row.role);
  if (!role) return Status::Corruption("message " + m->id + ": " + role.error().message());
  m->role = *role;
  // DecodeMessageBody fences the JSON library's exceptions itself.
  return DecodeMessageBody(row.body, row.text, m);
}

Status DecodeEventRowInto(const EventRow& row, Event* out) {
  Event& e = *out;
  e.id.assign(row.id);
  e.session_id.assign(row.session_id);
  e.seq = row.seq;
  e.ts_ms = row.ts_ms;
  auto type = ParseEventType(row.type);
  if (!type) {
    return Status::Corruption("event " + e.id + " has an unknown type '" + std::string(row.type) +
                              "'; upgrade sessiondb to read it");
  }
  e.type = *type;
  try {
    switch (e.type) {
      case EventType::kMessage:
        RETURN_IF_ERROR(DecodeMessageRowInto(row, &e.message));
        break;
      case EventType::kResourceView: {
        ASSIGN_OR_RETURN(json body, ParseBody(row));
        RETURN_IF_ERROR(DecodeResourceView(body, &e.resource_view));
        break;
      }
      case EventType::kCompaction: {
        ASSIGN_OR_RETURN(json body, ParseBody(row));
        RETURN_IF_ERROR(DecodeCompaction(body, &e.compaction));
        break;
      }
      case EventType::kRewind: {
        ASSIGN_OR_RETURN(json body, ParseBody(row));
        RETURN_IF_ERROR(DecodeRewind(body, e.id, &e.rewind));
        break;
      }
    }
  } catch (const json::exception& ex) {
    return Status::Corruption("event " + e.id + " has a malformed body: " + ex.what());
  }
  return Status::Ok();
}

Result<Event> DecodeEventRow(const EventRow& row) {
  Event e;
  RETURN_IF_ERROR(DecodeEventRowInto(row, &e));
  return e;
}

}  // namespace sessiondb
