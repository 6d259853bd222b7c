#include "server/http_router.h"

#include <exception>
#include <nlohmann/json.hpp>

#include "server/http_reply.h"

namespace sessiondb::server {

void Router::Add(std::string method, const std::string& pattern, RouteHandler handler) {
  routes_.push_back({std::move(method), std::regex(pattern), std::move(handler)});
}

void Router::Dispatch(const HttpRequest& req, HttpResponse& res) const {
  std::string allowed;
  for (const Route& route : routes_) {
    std::smatch m;
    if (!std::regex_match(req.path, m, route.pattern)) continue;
    if (route.method != req.method) {
      allowed += (allowed.empty() ? "" : ", ") + route.method;
      continue;
    }
    PathCaptures captures;
    for (size_t i = 1; i < m.size(); ++i) captures.push_back(m[i].str());
    try {
      route.handler(req, res, captures);
    } catch (const nlohmann::json::exception& e) {
      ReplyError(res, Status::InvalidArgument(std::string("malformed JSON body: ") + e.what()));
    } catch (const std::exception& e) {
      ReplyError(res, Status::Internal(e.what()));
    }
    return;
  }
  if (!allowed.empty()) {
    res.SetHeader("Allow", allowed);
    return ReplyError(res, 405, "method_not_allowed",
                      req.method + " is not supported on " + req.path + "; use " + allowed);
  }
  ReplyError(res, 404, "not_found",
             "no route " + req.method + " " + req.path + "; docs/http-api.md lists the routes");
}

}  // namespace sessiondb::server
