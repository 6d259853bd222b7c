// Search over the history and the code memory (docs/http-api.md, "Search").
#include <string>

#include "api/search_args.h"
#include "server/api_state.h"
#include "server/http_reply.h"

namespace sessiondb::server {

namespace {

Result<SearchRequest> SearchRequestFrom(const HttpRequest& req) {
  SearchRequest r;
  r.query = Param(req, "q");
  if (r.query.empty()) return Err(Status::InvalidArgument("give the query as q=..."));
  ASSIGN_OR_RETURN(r.mode, ParseSearchMode(Param(req, "mode"), "mode"));
  ASSIGN_OR_RETURN(int64_t limit, IntParam(req, "limit", 20, 1, 1000));
  ASSIGN_OR_RETURN(int64_t offset, IntParam(req, "offset", 0, 0, 1'000'000));
  r.limit = static_cast<int>(limit);
  r.offset = static_cast<int>(offset);
  SearchFilter& f = r.filter;
  f.session_id = Param(req, "session");
  if (const std::string role = Param(req, "role"); !role.empty()) {
    ASSIGN_OR_RETURN(f.role, ParseRole(role));
  }
  ASSIGN_OR_RETURN(f.since_ms, ParseSearchTime(Param(req, "since"), "since"));
  ASSIGN_OR_RETURN(f.until_ms, ParseSearchTime(Param(req, "until"), "until"));
  f.project = Param(req, "project");
  ASSIGN_OR_RETURN(f.archived, ParseArchivedFilter(Param(req, "archived"), "archived"));
  RETURN_IF_ERROR(ApplySearchKind(Param(req, "kind"), "kind", f));
  return r;
}

}  // namespace

void AddSearchRoutes(Router& router, ApiState& api) {
  router.Add("GET", "/v1/search", [&api](auto& req, auto& res, auto&) {
    auto request = SearchRequestFrom(req);
    if (!request) return ReplyError(res, request.error());
    auto results = api.search.Search(*request);
    if (!results) return ReplyError(res, results.error());
    Json out = {{"query", request->query},
                {"mode", request->mode == SearchMode::kKeyword  ? "keyword"
                         : request->mode == SearchMode::kVector ? "vector"
                                                                : "hybrid"}};
    out.update(ToJson(*results));
    ReplyJson(res, 200, out);
  });
  router.Add("POST", "/v1/memory/recall", [&api](auto& req, auto& res, auto&) {
    auto body = ParseJsonBody(req, res);
    if (!body) return;
    auto path = StringField(*body, "path");
    auto code = StringField(*body, "code");
    auto limit = IntField(*body, "limit", 3);
    if (!path) return ReplyError(res, path.error());
    if (!code) return ReplyError(res, code.error());
    if (!limit) return ReplyError(res, limit.error());
    if (path->empty()) return ReplyError(res, Status::InvalidArgument("give the file's \"path\""));
    if (*limit < 1 || *limit > 100) {
      return ReplyError(res, Status::InvalidArgument("\"limit\" must be from 1 to 100"));
    }
    auto recalled = api.search.Recall(*path, *code, static_cast<int>(*limit));
    if (!recalled) return ReplyError(res, recalled.error());
    Json out = Json::array();
    for (const RecalledCode& r : *recalled) out.push_back(ToJson(r));
    ReplyJson(res, 200, {{"results", std::move(out)}});
  });
  router.Add("GET", "/v1/memory/churn", [&api](auto& req, auto& res, auto&) {
    auto functions = BoolParam(req, "functions");
    auto limit = IntParam(req, "limit", 20, 1, 1000);
    if (!functions) return ReplyError(res, functions.error());
    if (!limit) return ReplyError(res, limit.error());
    auto hot = api.search.Hotspots({.path_prefix = Param(req, "path"),
                                    .functions = *functions,
                                    .limit = static_cast<int>(*limit)});
    if (!hot) return ReplyError(res, hot.error());
    Json out = Json::array();
    for (const ChurnEntry& e : *hot) out.push_back(ToJson(e));
    ReplyJson(res, 200, {{"entries", std::move(out)}});
  });
}

}  // namespace sessiondb::server
