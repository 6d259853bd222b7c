#include "server/http_server.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>

#include "server/bounded_pool.h"
#include "server/http_reply.h"
#include "server/web_routes.h"

namespace sessiondb::server {

namespace {

std::array<unsigned char, SHA256_DIGEST_LENGTH> Digest(std::string_view text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> d{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), d.data());
  return d;
}

// Compares digests of equal length with CRYPTO_memcmp, so the time taken says
// nothing about how much of a guess was right, nor about the token's length.
bool TokenMatches(std::string_view given, std::string_view token) {
  const auto a = Digest(given);
  const auto b = Digest(token);
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The token the request carries: "Authorization: Bearer T", or "?token=T"
// where a browser cannot set headers: the event stream (EventSource), blobs
// (<img src>) and exports (a download link), all reads.
std::string GivenToken(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.rfind(kBearer, 0) == 0) return auth.substr(kBearer.size());
  const bool header_less = req.path.ends_with("/events") || req.path.ends_with("/export") ||
                           req.path.rfind("/v1/blobs/", 0) == 0;
  if (req.method == "GET" && header_less) return Param(req, "token");
  return "";
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

HttpServer::HttpServer(Store& store, const std::string& store_path, const ServerOptions& options)
    : api_(store, store_path, options) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(Store& store, const std::string& store_path,
                                                      const ServerOptions& options) {
  if (!IsLoopbackHost(options.host) && options.token.empty()) {
    return Err(Status::InvalidArgument(
        "refusing to listen on " + options.host +
        " without a token: anyone who can reach it could read every conversation. Set one with "
        "--token or $SESSIONDB_TOKEN, or listen on 127.0.0.1"));
  }
  if (options.threads < 2 || options.threads > 1024) {
    return Err(Status::InvalidArgument("--threads must be from 2 to 1024"));
  }
  if (options.max_streams < 1 || options.max_streams >= options.threads) {
    return Err(Status::InvalidArgument(
        "--max-streams must be at least 1 and below --threads (each stream holds a worker)"));
  }
  if (options.max_body_bytes < 1024) return Err(Status::InvalidArgument("--max-body must be at least 1KiB"));
  std::unique_ptr<HttpServer> server(new HttpServer(store, store_path, options));
  server->Configure();
  const int port = options.port == 0 ? server->http_.bind_to_any_port(options.host)
                                     : (server->http_.bind_to_port(options.host, options.port)
                                            ? options.port
                                            : -1);
  if (port < 0) {
    return Err(Status::Busy("cannot listen on " + options.host + ":" +
                            std::to_string(options.port) +
                            " (in use, or not an address of this machine); pick another with "
                            "--port, or --port 0 for any free one"));
  }
  server->port_ = port;
  return server;
}

std::string HttpServer::url() const {
  const std::string& h = api_.options.host;
  const bool v6 = h.find(':') != std::string::npos && h.front() != '[';
  return "http://" + (v6 ? "[" + h + "]" : h) + ":" + std::to_string(port_) + "/";
}

void HttpServer::Configure() {
  const ServerOptions& o = api_.options;
  const int threads = o.threads;
  http_.new_task_queue = [threads] { return new BoundedPool(threads); };
  http_.set_payload_max_length(static_cast<size_t>(o.max_body_bytes));
  http_.set_keep_alive_max_count(1000);
  // Without it a small answer written in two pieces waits for the client's
  // delayed ACK (Nagle): 40 ms a request.
  http_.set_tcp_nodelay(true);
  http_.set_read_timeout(30, 0);
  http_.set_write_timeout(30, 0);

  AddSessionRoutes(router_, api_);
  AddHarnessRoutes(router_, api_);
  AddEventRoutes(router_, api_);
  AddSearchRoutes(router_, api_);
  AddInteropRoutes(router_, api_);

  http_.set_pre_routing_handler(
      [this](const httplib::Request& req, httplib::Response& res) { return BeforeRouting(req, res); });
  auto dispatch = [this](const httplib::Request& req, httplib::Response& res) {
    router_.Dispatch(req, res);
  };
  http_.Get("/v1/.*", dispatch);
  http_.Post("/v1/.*", dispatch);
  http_.Put("/v1/.*", dispatch);
  http_.Patch("/v1/.*", dispatch);
  http_.Delete("/v1/.*", dispatch);
  // The web history browser: / and its files, outside /v1 (so no token).
  AddWebRoutes(http_);

  // Errors cpp-httplib answers by itself (413, a request it cannot parse, a
  // path outside /v1 that no page serves) get the same JSON as ours.
  http_.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    switch (res.status) {
      case 413:
        ReplyError(res, 413, "payload_too_large",
                   "the request body is larger than this server accepts (--max-body)");
        break;
      case 404:
        ReplyError(res, 404, "not_found", "nothing at " + req.path);
        break;
      default:
        if (res.status >= 400) {
          ReplyError(res, res.status, res.status >= 500 ? "internal" : "invalid_argument",
                     "the server could not handle this request (HTTP " +
                         std::to_string(res.status) + ")");
        }
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
}

httplib::Server::HandlerResponse HttpServer::BeforeRouting(const httplib::Request& req,
                                                           httplib::Response& res) {
  const ServerOptions& o = api_.options;
  const std::string origin = req.get_header_value("Origin");
  const bool cors = !origin.empty() && std::find(o.cors_origins.begin(), o.cors_origins.end(),
                                                 origin) != o.cors_origins.end();
  if (cors) {
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
    if (req.method == "OPTIONS") {
      res.set_header("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE");
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID");
      res.set_header("Access-Control-Max-Age", "600");
      res.status = 204;
      return httplib::Server::HandlerResponse::Handled;
    }
  }
  if (o.token.empty() || req.path.rfind("/v1/", 0) != 0) {
    return httplib::Server::HandlerResponse::Unhandled;
  }
  if (TokenMatches(GivenToken(req), o.token)) return httplib::Server::HandlerResponse::Unhandled;
  res.set_header("WWW-Authenticate", "Bearer");
  ReplyError(res, 401, "unauthenticated",
             "this server needs its token: send \"Authorization: Bearer TOKEN\" (the event "
             "stream, blobs and exports also take ?token=TOKEN)");
  return httplib::Server::HandlerResponse::Handled;
}

Status HttpServer::Run() {
  if (!http_.listen_after_bind()) {
    if (api_.hub.closed()) return Status::Ok();
    return Status::Io("the server stopped accepting connections");
  }
  return Status::Ok();
}

void HttpServer::Stop() {
  if (api_.hub.closed()) return;
  api_.hub.Close();
  api_.drafts.CloseAll();
  http_.stop();
}

}  // namespace sessiondb::server
