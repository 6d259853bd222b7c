// `sessiondb serve`: the HTTP JSON API under /v1 (docs/http-api.md), live
// events, and the web history browser at /, over one Store.
//
// Example:
//   ASSIGN_OR_RETURN(auto server, HttpServer::Start(*store, path, {.port = 0}));
//   std::cout << server->url() << "\n";
//   server->Run();  // until Stop() from another thread
//
// Thread-safety: Run blocks the calling thread; Stop may be called from any
// other thread (or a signal-watching one), once.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>

#include "server/api_state.h"
#include "server/http_router.h"
#include "server/server_options.h"
#include "sessiondb/store.h"

namespace sessiondb::server {

class HttpServer {
 public:
  // Checks the options and binds. kInvalidArgument for a host other than
  // loopback without a token, or a bad option; kBusy when the port is taken.
  // `store` must outlive the server.
  static Result<std::unique_ptr<HttpServer>> Start(Store& store, const std::string& store_path,
                                                   const ServerOptions& options);
  ~HttpServer();

  int port() const { return port_; }
  // "http://127.0.0.1:7411/"
  std::string url() const;

  // Serves until Stop. Returns an error if serving could not continue.
  Status Run();
  // Ends the live streams, saves open drafts and stops accepting; Run returns.
  void Stop();

 private:
  explicit HttpServer(Store& store, const std::string& store_path, const ServerOptions& options);
  void Configure();
  // The token check (401) and CORS; answers preflight requests.
  httplib::Server::HandlerResponse BeforeRouting(const httplib::Request& req,
                                                 httplib::Response& res);

  ApiState api_;
  Router router_;
  httplib::Server http_;
  int port_ = 0;
};

}  // namespace sessiondb::server
