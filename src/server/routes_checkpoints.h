// The HTTP face of code checkpoints (include/sessiondb/code_checkpoints.h,
// docs/http-api.md, "Code checkpoints"): a file's history, its blame, the
// restore of one version, and the code half of POST /v1/sessions/{id}/rewind.
// The rules are the library's; these routes read requests and answer.
//
// Each path a request names is outside input pointing at the server's own
// disk: it is refused unless it is absolute, normal, at most
// kMaxCheckpointPathBytes, and a path the store holds recorded versions of,
// all before anything reads or writes the file. So the routes reach only the
// files the agents' recorded tool calls wrote, never /etc/passwd.
//
// Thread-safety: the routes run on any handler thread (Store is safe to share).
#pragma once

#include <cstdint>
#include <string>

#include "server/api_state.h"

namespace sessiondb::server {

// The longest file path a request may name (PATH_MAX on Linux).
inline constexpr size_t kMaxCheckpointPathBytes = 4096;

// GET /v1/files/history, GET /v1/files/blame, POST /v1/files/restore.
void AddCheckpointRoutes(Router& router, ApiState& api);

// What POST /v1/sessions/{id}/rewind asks of the code ("code": "both" or
// "only"; "none" is the conversation alone, routes_harness.cc).
struct CodeRewindRequest {
  int64_t to_seq = 0;
  bool conversation = true;  // "both": the conversation after the files
  bool force = false;
  bool dry_run = false;
};

// Answers a rewind with code: plans it; a dry run answers 200 with the
// files (and their diffs) and changes nothing; a refused or (without force)
// conflicting file answers 409 with the files and changes nothing;
// otherwise writes the files, then rewinds the conversation ("both") and
// answers 201 {"event" (null: "only"), "conversation", "files"}.
void RewindCode(ApiState& api, const std::string& session_id, const CodeRewindRequest& request,
                HttpResponse& res);

}  // namespace sessiondb::server
