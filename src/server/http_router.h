// The /v1 routes: a table of (method, path pattern, handler) that answers 404
// for a path no route knows and 405 (with Allow) for a known path asked with
// another method, both as JSON errors. Path captures arrive decoded.
//
// Example:
//   router.Add("GET", R"(/v1/sessions/([^/]+))", [&](auto& req, auto& res, auto& path) {
//     ... path[0] is the session id ...
//   });
//   http.Get("/v1/.*", [&](auto& req, auto& res) { router.Dispatch(req, res); });
//
// Thread-safety: Add before serving; Dispatch from any number of threads.
#pragma once

#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "server/http_message.h"

namespace sessiondb::server {

using PathCaptures = std::vector<std::string>;
using RouteHandler = std::function<void(const HttpRequest&, HttpResponse&, const PathCaptures&)>;

class Router {
 public:
  void Add(std::string method, const std::string& pattern, RouteHandler handler);
  // Runs the matching route. A handler that throws (a JSON field of the wrong
  // type deep in a body) answers 400; anything else unexpected 500.
  void Dispatch(const HttpRequest& req, HttpResponse& res) const;

 private:
  struct Route {
    std::string method;
    std::regex pattern;
    RouteHandler handler;
  };
  std::vector<Route> routes_;
};

}  // namespace sessiondb::server
