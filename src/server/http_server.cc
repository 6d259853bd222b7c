#include "server/http_server.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <iostream>

#include "server/http_reply.h"
#include "server/routes_checkpoints.h"
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
std::string GivenToken(const HttpRequest& req) {
  const std::string auth = req.Header("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.rfind(kBearer, 0) == 0) return auth.substr(kBearer.size());
  const bool header_less = req.path.ends_with("/events") || req.path.ends_with("/export") ||
                           req.path.rfind("/v1/blobs/", 0) == 0;
  if (req.method == "GET" && header_less) return req.ParamValue("token");
  return "";
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsWrite(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

// No body, however framed.
bool Bodiless(const HttpRequest& req) {
  const std::string length = req.Header("Content-Length");
  return !req.HasHeader("Transfer-Encoding") && (length.empty() || length == "0");
}

// A browser's own word that another site sent the request (Fetch Metadata).
// A foreign Origin is refused anyway; this also covers a browser that leaves
// Origin out.
bool FromAnotherSite(const HttpRequest& req) {
  const std::string site = Lower(req.Header("Sec-Fetch-Site"));
  return site == "cross-site" || site == "same-site";
}

// A write with no body a web page could have sent without a preflight is
// refused, except the one `curl -X POST` sends: no body and no Content-Type at
// all (the body then means {}). A form or text/plain label, even empty, is
// what a cross-site <form> sends, so it stays refused for a POST.
bool BodilessWriteAllowed(const HttpRequest& req) {
  if (!Bodiless(req)) return false;
  if (req.method != "POST") return true;
  return !req.HasHeader("Content-Type") && !FromAnotherSite(req);
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

bool HostIsOurs(std::string_view host_header, const ServerOptions& options) {
  std::string_view name = host_header;
  if (name.starts_with('[')) {
    const size_t close = name.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = name.substr(close + 1);
    if (!rest.empty() && (rest[0] != ':' || rest.size() == 1)) return false;
    name = name.substr(0, close + 1);
  } else if (const size_t colon = name.rfind(':'); colon != std::string_view::npos) {
    name = name.substr(0, colon);
  }
  std::string host = Lower(name);
  if (host.ends_with('.')) host.pop_back();
  if (host.empty()) return false;
  if (host == "localhost") return true;
  // An address typed as such: DNS rebinding always sends the attacker's own
  // name, never an address.
  unsigned char address[sizeof(in6_addr)];
  if (inet_pton(AF_INET, host.c_str(), address) == 1) return true;
  if (host.size() > 2 && host.front() == '[' &&
      inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), address) == 1) {
    return true;
  }
  if (host == Lower(options.host) || "[" + host + "]" == Lower(options.host)) return true;
  return std::any_of(options.allowed_hosts.begin(), options.allowed_hosts.end(),
                     [&](const std::string& allowed) { return Lower(allowed) == host; });
}

HttpServer::HttpServer(Store& store, const std::string& store_path, const ServerOptions& options)
    : api_(store, store_path, options), handlers_(options.threads) {
  AddSessionRoutes(router_, api_);
  AddHarnessRoutes(router_, api_);
  AddEventRoutes(router_, api_);
  AddSearchRoutes(router_, api_);
  AddInteropRoutes(router_, api_);
  AddForgetRoutes(router_, api_);
  AddFileVersionRoutes(router_, api_);
  AddCheckpointRoutes(router_, api_);
}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(Store& store, const std::string& store_path,
                                                      const ServerOptions& options) {
  if (!IsLoopbackHost(options.host) && options.token.empty()) {
    return Err(Status::InvalidArgument(
        "refusing to listen on " + options.host +
        " without a token: anyone who can reach it could read every conversation. Set one with "
        "$SESSIONDB_TOKEN or --token-file PATH, or listen on 127.0.0.1"));
  }
  if (options.threads < 2 || options.threads > 1024) {
    return Err(Status::InvalidArgument("--threads must be from 2 to 1024"));
  }
  if (options.max_streams < 1 || options.max_streams >= options.max_connections) {
    return Err(Status::InvalidArgument(
        "--max-streams must be at least 1 and below --max-connections (each stream holds a "
        "connection)"));
  }
  if (options.max_connections < 4 || options.max_connections > 65'536) {
    return Err(Status::InvalidArgument("--max-connections must be from 4 to 65536"));
  }
  if (options.max_connections_per_ip < 1) {
    return Err(Status::InvalidArgument("--max-per-ip must be at least 1"));
  }
  if (options.header_timeout_seconds < 1 || options.idle_timeout_seconds < 1) {
    return Err(Status::InvalidArgument("--header-timeout must be at least 1 second"));
  }
  if (options.max_body_bytes < 1024)
    return Err(Status::InvalidArgument("--max-body must be at least 1KiB"));
  std::unique_ptr<HttpServer> server(new HttpServer(store, store_path, options));
  HttpServer* raw = server.get();
  ASSIGN_OR_RETURN(
      server->daemon_,
      HttpDaemon::Listen(
          options.host, options.port,
          {.max_body_bytes = options.max_body_bytes,
           .max_connections = options.max_connections,
           .max_connections_per_ip = options.max_connections_per_ip,
           .header_timeout_seconds = options.header_timeout_seconds,
           .idle_timeout_seconds =
               std::max(options.idle_timeout_seconds, options.keepalive_ms / 1000 + 5)},
          [raw](const HttpRequest& req, HttpResponse& res) { return raw->CheckHeaders(req, res); },
          [raw](const HttpRequest& req, HttpResponse& res) { raw->Handle(req, res); }));
  if (options.background_embedding) {
    raw->api_.search.StartBackgroundEmbedding(
        [](const std::string& line) { std::cerr << "sessiondb serve: " << line << "\n"; });
  }
  return server;
}

std::string HttpServer::url() const {
  const std::string& h = api_.options.host;
  const bool v6 = h.find(':') != std::string::npos && h.front() != '[';
  return "http://" + (v6 ? "[" + h + "]" : h) + ":" + std::to_string(port()) + "/";
}

bool HttpServer::CheckHeaders(const HttpRequest& req, HttpResponse& res) const {
  const ServerOptions& o = api_.options;
  const std::string host = req.Header("Host");
  if (!HostIsOurs(host, o)) {
    ReplyError(res, 421, "misdirected_request",
               "this server does not answer for Host '" + host +
                   "' (it answers for localhost, IP addresses, --host and --allow-host names); "
                   "behind a proxy that keeps the name, start it with --allow-host NAME");
    return false;
  }
  const std::string origin = req.Header("Origin");
  const bool cors = !origin.empty() && std::find(o.cors_origins.begin(), o.cors_origins.end(),
                                                 origin) != o.cors_origins.end();
  if (cors) {
    res.SetHeader("Access-Control-Allow-Origin", origin);
    res.SetHeader("Vary", "Origin");
    if (req.method == "OPTIONS") {
      res.SetHeader("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE");
      res.SetHeader("Access-Control-Allow-Headers",
                    "Authorization, Content-Type, Last-Event-ID, X-Sessiondb-Request");
      res.SetHeader("Access-Control-Max-Age", "600");
      res.status = 204;
      return false;
    }
  }
  if (IsWrite(req.method)) {
    if (!origin.empty() && !cors && Lower(origin) != "http://" + Lower(host)) {
      ReplyError(res, 403, "permission_denied",
                 "writes from the web origin " + origin +
                     " are refused: only this server's own page, or an origin given with "
                     "--cors-origin, may write");
      return false;
    }
    const bool json = req.MediaType() == "application/json";
    const bool preflighted = req.HasHeader("X-Sessiondb-Request") || req.HasHeader("Authorization");
    if (!json && !preflighted && !BodilessWriteAllowed(req)) {
      const std::string type = req.Header("Content-Type");
      ReplyError(res, 415, "unsupported_media_type",
                 "a write must be sent as Content-Type: application/json (got " +
                     (type.empty() ? std::string("none") : "'" + type + "'") +
                     "); uploads of other types also need the header X-Sessiondb-Request: 1");
      return false;
    }
  }
  if (o.token.empty() || req.path.rfind("/v1/", 0) != 0) return true;
  if (TokenMatches(GivenToken(req), o.token)) return true;
  res.SetHeader("WWW-Authenticate", "Bearer");
  ReplyError(res, 401, "unauthenticated",
             "this server needs its token: send \"Authorization: Bearer TOKEN\" (the event "
             "stream, blobs and exports also take ?token=TOKEN)");
  return false;
}

void HttpServer::Handle(const HttpRequest& req, HttpResponse& res) {
  handlers_.acquire();
  try {
    if (req.path.rfind("/v1/", 0) == 0) {
      router_.Dispatch(req, res);
    } else if (!ServeWebPage(req, res)) {
      ReplyError(res, 404, "not_found", "nothing at " + req.path);
    }
  } catch (const std::exception& e) {
    std::cerr << "sessiondb serve: " << req.method << " " << req.path << ": " << e.what() << "\n";
    ReplyError(res, 500, "internal", "the server failed on this request; see the server's log");
  }
  handlers_.release();
}

Status HttpServer::Run() {
  MutexLock lock(&mu_);
  while (!stopped_) stopped_cv_.Wait(&mu_);
  return Status::Ok();
}

void HttpServer::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) {
      // Another thread is stopping: wait for it, so that the caller may then
      // destroy the server.
      while (!stopped_) stopped_cv_.Wait(&mu_);
      return;
    }
    stopping_ = true;
  }
  api_.hub.Close();
  api_.drafts.CloseAll();
  if (daemon_) daemon_->Stop();
  {
    MutexLock lock(&mu_);
    stopped_ = true;
  }
  stopped_cv_.SignalAll();
}

}  // namespace sessiondb::server
