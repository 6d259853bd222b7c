// SessionLineage: the Store's fork origin first (it is exact), else what an
// importer wrote in the session's metadata.
#include "interop/session_lineage.h"

#include <nlohmann/json.hpp>

#include "core/json_parse.h"

namespace sessiondb::interop {
namespace {

using nlohmann::json;

std::string StringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The source's id of the record a branch starts after, under the key its
// importer uses.
std::string SourceRecord(const json& meta) {
  for (const char* key : {"fork_uuid", "fork_node", "fork_message"}) {
    std::string id = StringAt(meta, key);
    if (!id.empty()) return id;
  }
  return "";
}

}  // namespace

std::string_view LineageKindName(Lineage::Kind kind) {
  switch (kind) {
    case Lineage::Kind::kFork:
      return "fork";
    case Lineage::Kind::kBranch:
      return "branch";
    case Lineage::Kind::kSubagent:
      return "subagent";
  }
  return "fork";
}

std::optional<Lineage> SessionLineage(const Session& session, std::span<const Event> events) {
  if (!session.parent_id.empty()) {
    Lineage l{.kind = Lineage::Kind::kFork,
              .parent_session_id = session.parent_id,
              .at_seq = session.fork_seq};
    for (const Event& e : events) {
      if (e.seq == session.fork_seq) l.at_event_id = e.id;
    }
    return l;
  }
  json meta = ParseJson(session.metadata_json).value_or(json());
  if (!meta.is_object()) return std::nullopt;
  if (std::string parent = StringAt(meta, "forked_from"); !parent.empty()) {
    auto sidechain = meta.find("sidechain");
    return Lineage{.kind = Lineage::Kind::kBranch,
                   .parent_session_id = parent,
                   .at_source_record = SourceRecord(meta),
                   .source_parent_id = StringAt(meta, "forked_from_id"),
                   .sidechain = sidechain != meta.end() && *sidechain == true};
  }
  if (std::string parent = StringAt(meta, "subagent_of"); !parent.empty()) {
    return Lineage{.kind = Lineage::Kind::kSubagent,
                   .parent_session_id = parent,
                   .agent_id = StringAt(meta, "agent_id")};
  }
  return std::nullopt;
}

}  // namespace sessiondb::interop
