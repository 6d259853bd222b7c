// Code checkpoints over HTTP (routes_checkpoints.h): /v1/files/history,
// /v1/files/blame, /v1/files/restore and the code half of a rewind.
#include "server/routes_checkpoints.h"

#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http_reply.h"
#include "sessiondb/code_checkpoints.h"

namespace sessiondb::server {

namespace {

// The diffs of a dry run and of file history, per file or version.
constexpr size_t kDiffLines = 400;

// `path` when a request may name it: at most kMaxCheckpointPathBytes,
// absolute and normal (the rule of the recorded paths, so CheckpointFilePath
// leaves it as it is), and holding recorded versions. Nothing touches the
// disk before this passes: kInvalidArgument for a path of the wrong form,
// kNotFound "no recorded versions of PATH" for any other file of the server.
Result<std::string> RecordedFilePath(Store& store, std::string path) {
  if (path.empty()) {
    return Err(Status::InvalidArgument("give \"path\": the absolute path of a file"));
  }
  if (path.size() > kMaxCheckpointPathBytes) {
    return Err(Status::InvalidArgument("the path is " + std::to_string(path.size()) +
                                       " bytes; the limit is " +
                                       std::to_string(kMaxCheckpointPathBytes)));
  }
  if (path.find('\0') != std::string::npos) {
    return Err(Status::InvalidArgument("the path holds a NUL byte"));
  }
  if (path.front() != '/' || path.size() == 1 || CheckpointFilePath(path, "") != path) {
    return Err(Status::InvalidArgument(
        "'" + path.substr(0, 200) +
        "' is not an absolute normal path to a file (no '.', '..', '//' or trailing '/')"));
  }
  FileVersionQuery query;
  query.file_path = path;
  query.limit = 1;
  ASSIGN_OR_RETURN(std::vector<FileVersion> versions, store.ListFileVersions(query));
  if (versions.empty()) return Err(Status::NotFound("no recorded versions of " + path));
  return path;
}

// Records what was just written (RecordFileRestores), so that a later
// rewind or restore does not take the server's own write for someone
// else's. A failure leaves the files written and unrecorded: the operator
// reads why in the log; the answer stands.
void RecordWrites(Store& store, const std::vector<FileRestore>& files,
                  const std::string& agent_session, std::string_view tool) {
  if (Status s = RecordFileRestores(store, files, agent_session, tool); !s.ok()) {
    std::cerr << "sessiondb serve: the files are written but not recorded as versions: "
              << s.message() << "\n";
  }
}

// The agent session of version `number` of `path`, under which its
// restore is recorded; "" when the history no longer has it.
std::string AgentSessionOfVersion(Store& store, const std::string& path, int64_t number) {
  auto history = ReadFileHistory(store, path, /*with_diffs=*/false);
  if (!history || number < 1 || number > std::ssize(*history)) return "";
  return (*history)[number - 1].placed.version.agent_session;
}

Json FilesJson(const std::vector<FileRestore>& files, bool with_diffs) {
  Json out = Json::array();
  for (const FileRestore& f : files) out.push_back(ToJson(f, with_diffs, kDiffLines));
  return out;
}

// The error of `status` as ReplyError sends it, with the files beside it:
// which were refused or in conflict, and which were already written when a
// later write failed.
void ReplyErrorWithFiles(HttpResponse& res, const Status& status,
                         const std::vector<FileRestore>& files, bool with_diffs) {
  const StatusCode code = status.code();
  std::string message = status.message();
  if (code == StatusCode::kInternal || code == StatusCode::kIo || code == StatusCode::kCorruption) {
    // As ReplyError: the operator reads the details in the log.
    std::cerr << "sessiondb serve: " << StatusCodeName(code) << ": " << message << "\n";
    message = GenericMessage(code);
  }
  ReplyJson(res, HttpStatusFor(code),
            {{"error", {{"code", StatusCodeName(code)}, {"message", message}}},
             {"files", FilesJson(files, with_diffs)}});
}

// GET /v1/files/history?path=ABS&diffs=0|1 (default 1).
void FileHistory(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  bool diffs = true;
  if (req.HasParam("diffs")) {
    auto given = BoolParam(req, "diffs");
    if (!given) return ReplyError(res, given.error());
    diffs = *given;
  }
  auto path = RecordedFilePath(api.store, Param(req, "path"));
  if (!path) return ReplyError(res, path.error());
  auto history = ReadFileHistory(api.store, *path, diffs, kDiffLines);
  if (!history) return ReplyError(res, history.error());
  Json versions = Json::array();
  for (const FileHistoryEntry& e : *history) versions.push_back(ToJson(e, diffs));
  ReplyJson(res, 200, {{"path", *path}, {"versions", std::move(versions)}});
}

// GET /v1/files/blame?path=ABS.
void Blame(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto path = RecordedFilePath(api.store, Param(req, "path"));
  if (!path) return ReplyError(res, path.error());
  auto lines = BlameFile(api.store, *path);
  if (!lines) return ReplyError(res, lines.error());
  Json out = Json::array();
  for (const BlameLine& l : *lines) out.push_back(ToJson(l));
  ReplyJson(res, 200, {{"path", *path}, {"lines", std::move(out)}});
}

// POST /v1/files/restore {"path", "version": N, "force"?, "dry_run"?}.
void Restore(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  auto given_path = StringField(*body, "path");
  if (!given_path) return ReplyError(res, given_path.error());
  if (!body->contains("version")) {
    return ReplyError(res, Status::InvalidArgument(
                               "give \"version\": the number GET /v1/files/history gives it"));
  }
  auto number = IntField(*body, "version", 0);
  if (!number) return ReplyError(res, number.error());
  auto force = BoolField(*body, "force", false);
  if (!force) return ReplyError(res, force.error());
  auto dry_run = BoolField(*body, "dry_run", false);
  if (!dry_run) return ReplyError(res, dry_run.error());
  if (*number < 1) {
    return ReplyError(res, Status::InvalidArgument("\"version\" must be 1 or more"));
  }
  auto path = RecordedFilePath(api.store, std::move(*given_path));
  if (!path) return ReplyError(res, path.error());
  auto planned = PlanFileRestore(api.store, *path, *number);
  if (!planned) return ReplyError(res, planned.error());
  std::vector<FileRestore> files = {std::move(*planned)};
  // A dry run lists a refusal or a conflict rather than failing on it, as
  // a rewind's does.
  if (!*dry_run) {
    Status s = ApplyFileRestores(files, *force);
    if (files[0].done) {
      const std::string agent = AgentSessionOfVersion(api.store, *path, *number);
      if (!agent.empty()) RecordWrites(api.store, files, agent, "restore");
    }
    if (!s.ok()) return ReplyErrorWithFiles(res, s, files, /*with_diffs=*/false);
  }
  ReplyJson(res, *dry_run ? 200 : 201,
            {{"path", *path},
             {"version", *number},
             {"dry_run", *dry_run},
             {"files", FilesJson(files, *dry_run)}});
}

}  // namespace

void RewindCode(ApiState& api, const std::string& session_id, const CodeRewindRequest& request,
                HttpResponse& res) {
  auto plan = PlanCodeRewind(api.store, session_id, request.to_seq);
  if (!plan) return ReplyError(res, plan.error());
  if (request.dry_run) {
    // Refusals and conflicts are listed, not errors: a dry run says what
    // the real one would meet.
    return ReplyJson(res, 200,
                     {{"dry_run", true},
                      {"conversation", request.conversation},
                      {"files", FilesJson(plan->files, /*with_diffs=*/true)}});
  }
  Status applied = ApplyFileRestores(plan->files, request.force);
  RecordWrites(api.store, plan->files, plan->agent_session, "rewind");  // the done ones
  if (!applied.ok()) return ReplyErrorWithFiles(res, applied, plan->files, /*with_diffs=*/false);
  Json event = nullptr;
  if (request.conversation) {
    auto rewound = api.store.Rewind(plan->session_id, plan->to_seq);
    // The files are written but the conversation is not rewound: say both.
    if (!rewound) return ReplyErrorWithFiles(res, rewound.error(), plan->files, false);
    api.hub.NotifyAppended(plan->session_id);
    api.hub.NotifySessionChanged(plan->session_id);  // its message_count changed
    event = ToJson(*rewound);
  }
  ReplyJson(res, 201,
            {{"dry_run", false},
             {"conversation", request.conversation},
             {"event", std::move(event)},
             {"files", FilesJson(plan->files, /*with_diffs=*/false)}});
}

void AddCheckpointRoutes(Router& router, ApiState& api) {
  router.Add("GET", R"(/v1/files/history)",
             [&api](auto& req, auto& res, auto&) { FileHistory(api, req, res); });
  router.Add("GET", R"(/v1/files/blame)",
             [&api](auto& req, auto& res, auto&) { Blame(api, req, res); });
  router.Add("POST", R"(/v1/files/restore)",
             [&api](auto& req, auto& res, auto&) { Restore(api, req, res); });
}

}  // namespace sessiondb::server
