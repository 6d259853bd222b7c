// The HTTP transport of `sessiondb serve`, on libmicrohttpd: it listens,
// reads each request within its caps, and hands the routes a whole
// HttpRequest (http_message.h).
//
// Model: one thread per connection (MHD_USE_THREAD_PER_CONNECTION), up to
// `max_connections`. Handlers block on the store and live event streams block
// while they wait for news, so a thread each is the simple way to keep one
// slow answer from delaying another; the caps below bound how many there are.
//
// What it enforces while reading, before allocating:
//   - headers: at most `header_memory_bytes` per request (431 past it);
//   - time: a request's headers must arrive within `header_timeout_seconds`
//     of the connection opening or of the previous answer (a watchdog shuts
//     the socket otherwise), and any connection idle for
//     `idle_timeout_seconds` is closed;
//   - framing: a request whose body's end two readers could see differently
//     (a header name that is not a token, Content-Length with
//     Transfer-Encoding, two Content-Lengths, a coding but "chunked") gets
//     400 before its body is read, and the connection is closed, so nothing
//     after it is read as a request; a chunk line too long for MHD's buffer
//     gets 400 rather than MHD's own 500;
//   - the body, however framed: a Content-Length over `max_body_bytes` is
//     refused (413) before any of it is read; a chunked body is counted as it
//     arrives and nothing past the cap is kept: the 413 is written to the
//     socket at once (MHD cannot queue an answer in the middle of a body),
//     what follows is dropped for another min(cap, 8 MiB) so the client
//     reads it, then the connection is cut; multipart bodies are split into
//     fields as they arrive (MHD's post processor);
//   - connections: `max_connections` in all and `max_connections_per_ip` per
//     client address; beyond them a new connection is closed at once.
// The listening socket is our own: SO_REUSEADDR but never SO_REUSEPORT, so a
// second server on the same port fails with "address in use", and a backlog
// of kListenBacklog so clients connecting at once all wait their turn.
//
// Example:
//   auto daemon = HttpDaemon::Listen("127.0.0.1", 0, limits,
//       [](const HttpRequest& req, HttpResponse& res) { return true; },  // headers ok
//       [](const HttpRequest& req, HttpResponse& res) { res.SetBody("hi", "text/plain"); });
//   ... daemon->port() ...
//   daemon->Stop();
//
// Thread-safety: the callbacks run on many threads at once; Stop once, from
// any thread other than a callback's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "core/mutex.h"
#include "server/http_message.h"
#include "sessiondb/status.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace sessiondb::server {

inline constexpr int kListenBacklog = 1024;  // the kernel caps it at net.core.somaxconn

struct DaemonLimits {
  int64_t max_body_bytes = int64_t{64} * 1024 * 1024;
  size_t header_memory_bytes = size_t{64} * 1024;
  int max_connections = 1024;
  int max_connections_per_ip = 256;
  int header_timeout_seconds = 10;
  int idle_timeout_seconds = 60;
};

// Runs once a request's headers are in, before any of its body is read.
// Returns false with `res` filled to answer at once (the body is never read);
// true to go on, and the handler then gets `res` with what the check set.
using HeaderCheck = std::function<bool(const HttpRequest& req, HttpResponse& res)>;
// Answers a request read in full.
using RequestHandler = std::function<void(const HttpRequest& req, HttpResponse& res)>;

class HttpDaemon {
 public:
  // Binds `host`:`port` (0: any free port) and starts serving. kBusy with
  // "address in use" when another socket holds the port; kInvalidArgument
  // for a host that is not an address of this machine; kFailedPrecondition,
  // saying what to install, when libmicrohttpd cannot be loaded (the first
  // Listen loads it: server/libmicrohttpd.h).
  static Result<std::unique_ptr<HttpDaemon>> Listen(const std::string& host, int port,
                                                    const DaemonLimits& limits, HeaderCheck check,
                                                    RequestHandler handler);
  ~HttpDaemon();
  HttpDaemon(const HttpDaemon&) = delete;
  HttpDaemon& operator=(const HttpDaemon&) = delete;

  int port() const { return port_; }
  // Stops accepting, ends every connection and joins their threads.
  void Stop() EXCLUDES(mu_);

  // Called by libmicrohttpd (http_daemon.cc); not for other callers.
  struct Watch;
  struct Exchange;
  int OnRequest(MHD_Connection* c, const char* url, const char* method, const char* upload_data,
                size_t* upload_size, void** exchange);
  void OnConnection(MHD_Connection* c, void** socket_context, bool opened) EXCLUDES(mu_);
  void OnCompleted(MHD_Connection* c, void** exchange) EXCLUDES(mu_);

 private:
  HttpDaemon(const DaemonLimits& limits, HeaderCheck check, RequestHandler handler)
      : limits_(limits), check_(std::move(check)), handler_(std::move(handler)) {}
  // Shuts connections that took longer than header_timeout_seconds to send a
  // request's headers, until Stop.
  void WatchHeaders() EXCLUDES(mu_);
  void SetBusy(MHD_Connection* c, bool busy) EXCLUDES(mu_);

  const DaemonLimits limits_;
  const HeaderCheck check_;
  const RequestHandler handler_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;

  Mutex mu_;
  CondVar stop_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::set<Watch*> watches_ GUARDED_BY(mu_);  // the open connections
  std::thread watchdog_;
};

// Sends part of `res`'s body for a single "Range: bytes=..." (206), the whole
// body when `range` names several ranges (allowed by RFC 9110), or 416 for a
// range that is malformed or outside the body. Only for a 200 answer with an
// in-memory body and ranges_allowed; a no-op otherwise.
void ApplyRange(std::string_view range, HttpResponse& res);

}  // namespace sessiondb::server
