// Forks, compaction, rewinds, resource views, projections, usage and drafts
// (docs/http-api.md, "Forks, compaction..." and "Drafts").
#include <string>

#include "api/message_json.h"
#include "server/api_state.h"
#include "server/http_reply.h"
#include "server/routes_checkpoints.h"
#include "sessiondb/projection.h"

namespace sessiondb::server {

namespace {

void Fork(ApiState& api, const std::string& parent, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  if (!body->contains("at_seq")) {
    return ReplyError(res, Status::InvalidArgument("give \"at_seq\": the last seq the fork keeps"));
  }
  auto at = IntField(*body, "at_seq", 0);
  if (!at) return ReplyError(res, at.error());
  auto child = NewSessionFromJson(*body);
  if (!child) return ReplyError(res, child.error());
  auto session = api.store.ForkSession(parent, *at, *child);
  if (!session) return ReplyError(res, session.error());
  api.hub.NotifySessionChanged(session->id);
  ReplyJson(res, 201, ToJson(*session));
}

void Compact(ApiState& api, const std::string& id, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  CompactionRequest c;
  auto from = IntField(*body, "from_seq", 0);
  auto to = IntField(*body, "to_seq", 0);
  if (!from) return ReplyError(res, from.error());
  if (!to) return ReplyError(res, to.error());
  c.from_seq = *from;
  c.to_seq = *to;
  for (auto [key, field] :
       {std::pair{"summary", &c.summary}, std::pair{"strategy", &c.strategy},
        std::pair{"model", &c.model}, std::pair{"limitations", &c.limitations}}) {
    auto value = StringField(*body, key);
    if (!value) return ReplyError(res, value.error());
    *field = std::move(*value);
  }
  auto event = api.store.Compact(id, c);
  if (!event) return ReplyError(res, event.error());
  api.hub.NotifyAppended(id);
  ReplyJson(res, 201, ToJson(*event));
}

// POST /v1/sessions/{id}/rewind {"to_seq": K, "code"?, "force"?, "dry_run"?}:
// the rewind event, 201; with "code" "both" or "only", the files too
// (RewindCode, routes_checkpoints.h).
void Rewind(ApiState& api, const std::string& id, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  if (!body->contains("to_seq")) {
    return ReplyError(
        res, Status::InvalidArgument("give \"to_seq\": the last seq the session's view keeps"));
  }
  auto to = IntField(*body, "to_seq", -1);
  if (!to) return ReplyError(res, to.error());
  auto code = StringField(*body, "code");
  if (!code) return ReplyError(res, code.error());
  auto force = BoolField(*body, "force", false);
  if (!force) return ReplyError(res, force.error());
  auto dry_run = BoolField(*body, "dry_run", false);
  if (!dry_run) return ReplyError(res, dry_run.error());
  if (*code == "both" || *code == "only") {
    return RewindCode(
        api, id,
        {.to_seq = *to, .conversation = *code == "both", .force = *force, .dry_run = *dry_run},
        res);
  }
  if (!code->empty() && *code != "none") {
    return ReplyError(res, Status::InvalidArgument("\"code\" must be \"none\", \"both\" or "
                                                   "\"only\", not \"" +
                                                   code->substr(0, 40) + "\""));
  }
  // A client asking for a dry run must never get the real thing.
  if (*dry_run) {
    return ReplyError(res, Status::InvalidArgument(
                               "\"dry_run\" needs \"code\": \"both\" or \"only\"; a rewind of "
                               "the conversation alone has nothing to preview"));
  }
  auto event = api.store.Rewind(id, *to);
  if (!event) return ReplyError(res, event.error());
  api.hub.NotifyAppended(id);
  api.hub.NotifySessionChanged(id);  // its message_count changed
  ReplyJson(res, 201, ToJson(*event));
}

void OpenDraft(ApiState& api, const std::string& id, const HttpRequest& req, HttpResponse& res) {
  Json body = Json::object();
  if (!req.body.empty()) {
    auto parsed = ParseJsonBody(req, res);
    if (!parsed) return;
    body = std::move(*parsed);
  }
  auto role_name = StringField(body, "role");
  auto model = StringField(body, "model");
  if (!role_name) return ReplyError(res, role_name.error());
  if (!model) return ReplyError(res, model.error());
  Role role = Role::kAssistant;
  if (!role_name->empty()) {
    auto parsed = ParseRole(*role_name);
    if (!parsed) return ReplyError(res, parsed.error());
    role = *parsed;
  }
  auto draft = api.drafts.Open(id, role, *model);
  if (!draft) return ReplyError(res, draft.error());
  ReplyJson(res, 201, ToJson(*draft));
}

void FinishDraft(ApiState& api, const std::string& draft_id, const HttpRequest& req,
                 HttpResponse& res) {
  Message message;
  if (!req.body.empty()) {
    auto body = ParseJsonBody(req, res);
    if (!body) return;
    if (!body->empty()) {
      // A final message given in full. The store gives it the draft's role
      // whatever the body says; "assistant" only lets the body parse.
      if (!body->contains("parts")) (*body)["parts"] = Json::array();
      if (!body->contains("role")) (*body)["role"] = "assistant";
      auto parsed = MessageFromJson(*body, {});
      if (!parsed) return ReplyError(res, parsed.error());
      message = std::move(*parsed);
    }
  }
  auto result = api.drafts.Finish(draft_id, message);
  if (!result) return ReplyError(res, result.error());
  ReplyJson(res, 201, ToJson(*result));
}

}  // namespace

// The query of GET /v1/usage. Parameters are outside input: a bad group or
// day, or more than 500 session ids, is kInvalidArgument (400) naming it.
Result<UsageQuery> UsageQueryOf(const HttpRequest& req) {
  UsageQuery q;
  ASSIGN_OR_RETURN(q.group, ParseUsageGroups(Param(req, "group")));
  q.since = Param(req, "since");
  q.until = Param(req, "until");
  q.project = Param(req, "project");
  const std::string all = Param(req, "session");
  std::string_view rest = all;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view id = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (id.empty()) continue;
    if (q.session_ids.size() == 500) {
      return Err(Status::InvalidArgument("session names more than 500 ids; the limit is 500"));
    }
    q.session_ids.emplace_back(id);
  }
  return q;
}

void AddHarnessRoutes(Router& router, ApiState& api) {
  router.Add("POST", R"(/v1/sessions/([^/]+)/fork)",
             [&api](auto& req, auto& res, auto& path) { Fork(api, path[0], req, res); });
  router.Add("POST", R"(/v1/sessions/([^/]+)/compactions)",
             [&api](auto& req, auto& res, auto& path) { Compact(api, path[0], req, res); });
  router.Add("POST", R"(/v1/sessions/([^/]+)/compactions/([0-9]{1,18})/prune)",
             [&api](auto&, auto& res, auto& path) {
               auto report = api.store.PruneCompaction(path[0], std::stoll(path[1]));
               if (!report) return ReplyError(res, report.error());
               ReplyJson(res, 200, ToJson(*report));
             });
  router.Add("POST", R"(/v1/sessions/([^/]+)/rewind)",
             [&api](auto& req, auto& res, auto& path) { Rewind(api, path[0], req, res); });
  router.Add("POST", R"(/v1/sessions/([^/]+)/views)", [&api](auto& req, auto& res, auto& path) {
    auto body = ParseJsonBody(req, res);
    if (!body) return;
    auto resource = StringField(*body, "resource_id");
    auto reason = StringField(*body, "reason");
    if (!resource) return ReplyError(res, resource.error());
    if (!reason) return ReplyError(res, reason.error());
    if (resource->empty()) return ReplyError(res, Status::InvalidArgument("give \"resource_id\""));
    auto event = api.store.RecordResourceView(path[0], *resource, *reason);
    if (!event) return ReplyError(res, event.error());
    api.hub.NotifyAppended(path[0]);
    ReplyJson(res, 201, ToJson(*event));
  });
  router.Add("GET", R"(/v1/sessions/([^/]+)/projection)", [&api](auto& req, auto& res, auto& path) {
    const std::string name = Param(req, "format");
    auto format = ParseProviderFormat(name.empty() ? "openai-chat" : name);
    if (!format) return ReplyError(res, format.error());
    auto body = ProjectSession(api.store, path[0], {.format = *format});
    if (!body) return ReplyError(res, body.error());
    res.status = 200;
    res.SetBody(std::move(*body), "application/json");
  });
  router.Add("GET", R"(/v1/sessions/([^/]+)/usage)", [&api](auto& req, auto& res, auto& path) {
    auto list = BoolParam(req, "turns");
    if (!list) return ReplyError(res, list.error());
    auto report = api.store.GetUsage(path[0]);
    if (!report) return ReplyError(res, report.error());
    auto turns = api.store.GetTurnUsage(path[0]);
    if (!turns) return ReplyError(res, turns.error());
    ReplyJson(res, 200, ToJson(*report, *turns, *list));
  });
  router.Add("GET", R"(/v1/usage)", [&api](auto& req, auto& res, auto&) {
    auto query = UsageQueryOf(req);
    if (!query) return ReplyError(res, query.error());
    auto summary = api.store.GetUsageSummary(*query);
    if (!summary) return ReplyError(res, summary.error());
    ReplyJson(res, 200, ToJson(*summary, query->group));
  });

  router.Add("POST", R"(/v1/sessions/([^/]+)/drafts)",
             [&api](auto& req, auto& res, auto& path) { OpenDraft(api, path[0], req, res); });
  router.Add("GET", R"(/v1/sessions/([^/]+)/drafts)", [&api](auto&, auto& res, auto& path) {
    auto drafts = api.store.ListDrafts(path[0]);
    if (!drafts) return ReplyError(res, drafts.error());
    Json out = Json::array();
    for (const Draft& d : *drafts) out.push_back(ToJson(d));
    ReplyJson(res, 200, {{"drafts", std::move(out)}});
  });
  router.Add("POST", R"(/v1/drafts/([^/]+)/delta)", [&api](auto& req, auto& res, auto& path) {
    auto body = ParseJsonBody(req, res);
    if (!body) return;
    auto text = StringField(*body, "text");
    auto reasoning = StringField(*body, "reasoning");
    if (!text) return ReplyError(res, text.error());
    if (!reasoning) return ReplyError(res, reasoning.error());
    if (Status s = api.drafts.Delta(path[0], *text, *reasoning); !s.ok()) return ReplyError(res, s);
    res.status = 204;
  });
  router.Add("POST", R"(/v1/drafts/([^/]+)/finish)",
             [&api](auto& req, auto& res, auto& path) { FinishDraft(api, path[0], req, res); });
  router.Add("DELETE", R"(/v1/drafts/([^/]+))", [&api](auto&, auto& res, auto& path) {
    if (Status s = api.drafts.Discard(path[0]); !s.ok()) return ReplyError(res, s);
    res.status = 204;
  });
}

}  // namespace sessiondb::server
