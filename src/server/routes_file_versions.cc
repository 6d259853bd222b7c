// GET /v1/sessions/{id}/file-versions: the file versions a session's agent
// recorded (code checkpoints, include/sessiondb/code_checkpoints.h), each
// placed at its seq in the session, so the page can show under a message
// the files its tool calls wrote (docs/http-api.md, "Code checkpoints").
// Metadata only: a version's content is GET /v1/blobs/{sha256}, its diff
// GET /v1/files/history.
#include <string>

#include "server/api_state.h"
#include "server/http_reply.h"
#include "sessiondb/code_checkpoints.h"

namespace sessiondb::server {

namespace {

Json PlacedFileVersionJson(const PlacedFileVersion& placed) {
  const FileVersion& v = placed.version;
  return {{"version_id", v.id},
          {"path", v.file_path},
          {"phase", FileVersionPhaseName(v.phase)},
          {"exists", v.exists},
          {"seq", placed.seq},
          {"tool", v.tool},
          {"tool_use_id", v.tool_use_id.empty() ? Json(nullptr) : Json(v.tool_use_id)},
          {"source", v.source},
          {"size", v.size},
          {"sha256", v.exists && !v.sha256.empty() ? Json(v.sha256) : Json(nullptr)},
          {"time_ms", v.time_ms}};
}

}  // namespace

void AddFileVersionRoutes(Router& router, ApiState& api) {
  router.Add("GET", R"(/v1/sessions/([^/]+)/file-versions)", [&api](auto&, auto& res, auto& path) {
    auto placed = SessionFileVersions(api.store, path[0]);
    if (!placed) return ReplyError(res, placed.error());  // 404: no such session
    Json versions = Json::array();
    for (const PlacedFileVersion& p : *placed) versions.push_back(PlacedFileVersionJson(p));
    ReplyJson(res, 200, {{"versions", std::move(versions)}});
  });
}

}  // namespace sessiondb::server
