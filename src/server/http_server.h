// `sessiondb serve`: the HTTP JSON API under /v1 (docs/http-api.md), live
// events, and the web history browser at /, over one Store.
//
// Every request passes these checks once its headers are read and before
// any of its body is (docs/http-api.md, "Safety"):
//   1. Host must be the server's own: a loopback name, an IP address, the
//      --host given, or an --allow-host name (421 otherwise). A web page that
//      rebinds its own name to 127.0.0.1 sends its own name, and is refused.
//   2. A write (POST, PUT, PATCH, DELETE) with an Origin must come from this
//      server's own origin or a --cors-origin (403).
//   3. A write must be one a browser cannot send cross-site without asking
//      first (a CORS preflight): Content-Type: application/json, or an
//      "X-Sessiondb-Request" or "Authorization" header (for uploads of other
//      types), or a bodiless PUT, PATCH or DELETE (415 otherwise).
//   4. The token, when one is set, on every /v1 request (401).
//
// Example:
//   ASSIGN_OR_RETURN(auto server, HttpServer::Start(*store, path, {.port = 0}));
//   std::cout << server->url() << "\n";
//   server->Run();  // until Stop() from another thread
//
// Thread-safety: Run blocks the calling thread; Stop may be called from any
// other thread (or a signal-watching one), once.
#pragma once

#include <memory>
#include <semaphore>
#include <string>

#include "core/mutex.h"
#include "server/api_state.h"
#include "server/http_daemon.h"
#include "server/http_message.h"
#include "server/http_router.h"
#include "server/server_options.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

class HttpServer {
 public:
  // Checks the options and binds. kInvalidArgument for a host other than
  // loopback without a token, or a bad option; kBusy ("address in use") when
  // the port is taken. `store` must outlive the server.
  static Result<std::unique_ptr<HttpServer>> Start(Store& store, const std::string& store_path,
                                                   const ServerOptions& options);
  ~HttpServer();

  int port() const { return daemon_->port(); }
  // "http://127.0.0.1:7411/"
  std::string url() const;

  // Serves until Stop. Returns an error if serving could not continue.
  Status Run() EXCLUDES(mu_);
  // Ends the live streams, saves open drafts and stops accepting; Run returns.
  void Stop() EXCLUDES(mu_);

 private:
  explicit HttpServer(Store& store, const std::string& store_path, const ServerOptions& options);
  // Checks 1 to 4 above, and CORS; answers preflight requests.
  bool CheckHeaders(const HttpRequest& req, HttpResponse& res) const;
  // Runs the route, at most options.threads at once.
  void Handle(const HttpRequest& req, HttpResponse& res);

  ApiState api_;
  Router router_;
  std::counting_semaphore<1024> handlers_;
  std::unique_ptr<HttpDaemon> daemon_;
  Mutex mu_;
  CondVar stopped_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;  // Stop has begun
  bool stopped_ GUARDED_BY(mu_) = false;   // Stop has ended
};

// True when `host_header` (a request's Host, "name" or "name:port") names
// this server: "localhost", an IP address, `options.host` or one of
// `options.allowed_hosts`, compared without case.
bool HostIsOurs(std::string_view host_header, const ServerOptions& options);

}  // namespace sessiondb::server
