#include "server/http_daemon.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <string_view>
#include <vector>

#include "server/http_reply.h"
#include "server/libmicrohttpd.h"

namespace sessiondb::server {

// One connection, for the header watchdog. Its fields are read and written
// under the daemon's mu_ (an annotation cannot name that lock from here).
struct HttpDaemon::Watch {
  int fd = -1;
  bool busy = false;  // headers read: a request is being answered
  bool cut = false;   // shut by the watchdog
  std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
};

// One request while it is read and answered.
struct HttpDaemon::Exchange {
  HttpRequest req;
  // The answer: decided before the body was read when refused, else the
  // handler's, begun by the check (CORS headers).
  HttpResponse early;
  bool refused = false;  // `early` is the answer
  bool queued = false;   // an answer was handed to MHD
  bool written = false;  // the answer went out on the socket itself (WriteRefusal)
  uint64_t received = 0;
  MHD_PostProcessor* post = nullptr;
  ~Exchange() {
    if (post) Mhd().destroy_post_processor(post);
  }
};

namespace {

constexpr size_t kStreamBlock = size_t{64} * 1024;
// How much of a body past --max-body is read (and dropped) so that the client
// gets its 413, before the connection is closed instead.
constexpr uint64_t kDiscardAfterCap = uint64_t{8} * 1024 * 1024;

// A streamed answer: MHD asks for bytes, the route's source produces them.
class Stream final : public ContentSink {
 public:
  Stream(ContentSource source, int fd) : source_(std::move(source)), fd_(fd) {}

  // Buffers only: MHD sends what Read hands it, and a send to a client that
  // left ends the answer there. Not polling the socket here saves a system
  // call per event frame (per frame of a backlog, 500 per turn); a waiting
  // stream still asks Connected() before it blocks.
  bool Write(std::string_view bytes) override {
    pending_.append(bytes);
    return true;
  }
  void Done() override { done_ = true; }
  bool Connected() const override {
    if (fd_ < 0) return true;
    pollfd p{fd_, POLLRDHUP, 0};
    return !(poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
  }

  // MHD's content reader: blocks (this connection's own thread) until the
  // source has produced something or ended.
  static ssize_t Read(void* cls, uint64_t, char* buf, size_t max) {
    auto* s = static_cast<Stream*>(cls);
    while (s->offset_ == s->pending_.size()) {
      s->pending_.clear();
      s->offset_ = 0;
      if (s->done_) return MHD_CONTENT_READER_END_OF_STREAM;
      if (!s->source_(*s)) return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    const size_t n = std::min(max, s->pending_.size() - s->offset_);
    // A piece of the body, not a C string: no terminator belongs in it.
    // NOLINTNEXTLINE(bugprone-not-null-terminated-result)
    std::memcpy(buf, s->pending_.data() + s->offset_, n);
    s->offset_ += n;
    return static_cast<ssize_t>(n);
  }
  static void Free(void* cls) { delete static_cast<Stream*>(cls); }

 private:
  ContentSource source_;
  const int fd_;
  std::string pending_;
  size_t offset_ = 0;
  bool done_ = false;
};

// What this connection's thread is doing, for OnLibraryMessage: libmicrohttpd
// gives its log no connection, but each connection has a thread of its own.
struct ThreadExchange {
  int fd = -1;                // the connection's socket
  bool reading_body = false;  // our handler accepted the headers; the body is being read
};
thread_local ThreadExchange this_thread_exchange;

// True when header names (or codings) `a` and `b` differ only in case.
bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// True for the characters RFC 9110 allows in a header name (a token).
bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool IsDecimal(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

std::string Trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

// Why the request's framing (where its body ends) cannot be trusted, or ""
// when it can. A request whose framing two readers could read differently is
// how one request is smuggled inside another (RFC 9112 section 6.3), so
// anything ambiguous is refused rather than guessed: a header name that is
// not a token ("Transfer-Encoding : chunked", which MHD files under another
// name), Content-Length beside Transfer-Encoding, two Content-Lengths, one
// that is not a decimal number, and any transfer coding but one "chunked".
std::string FramingFault(const HttpRequest& req) {
  int lengths = 0;
  int encodings = 0;
  for (const auto& [name, value] : req.headers) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
          return IsTokenChar(static_cast<unsigned char>(c));
        })) {
      std::string shown;
      for (char c : name) shown += (c >= 0x20 && c < 0x7F) ? c : '?';
      return "the header name '" + shown +
             "' is not a token (no spaces, even before the colon: RFC 9112 section 5.1)";
    }
    if (SameName(name, "Content-Length")) {
      ++lengths;
      if (!IsDecimal(Trimmed(value))) return "Content-Length must be a decimal number of bytes";
    } else if (SameName(name, "Transfer-Encoding")) {
      ++encodings;
      const std::string coding = Trimmed(value);
      if (!SameName(coding, "chunked")) {
        return "Transfer-Encoding may only be \"chunked\" (this server decodes no other coding)";
      }
    }
  }
  if (lengths > 0 && encodings > 0) {
    return "a request may not carry both Content-Length and Transfer-Encoding (RFC 9112 "
           "section 6.3): send one";
  }
  if (lengths > 1)
    return "a request may carry one Content-Length header, not " + std::to_string(lengths);
  if (encodings > 1)
    return "a request may carry one Transfer-Encoding header, not " + std::to_string(encodings);
  return "";
}

// The reason phrase for the statuses WriteRefusal sends.
const char* ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 413:
      return "Content Too Large";
    default:
      return "Error";
  }
}

// Writes `res` (a small error answer) to `fd` itself, with "Connection:
// close", and shuts the socket's sending side. For refusals MHD cannot make:
// it queues an answer only before the body is read or after all of it, and
// answers some faults in the middle of one (a chunk line past its buffer)
// with 500 of its own. Anything MHD sends afterwards fails (EPIPE) and it
// closes the connection. Gives up after a second if the client reads nothing.
void WriteRefusal(int fd, const HttpResponse& res) {
  if (fd < 0) return;
  std::string out =
      "HTTP/1.1 " + std::to_string(res.status) + " " + ReasonPhrase(res.status) + "\r\n";
  for (const auto& [name, value] : res.headers) {
    if (SameName(name, "Connection") || SameName(name, "Content-Length")) {
      continue;
    }
    out += name + ": " + value + "\r\n";
  }
  out += "Content-Length: " + std::to_string(res.body.size()) + "\r\nConnection: close\r\n\r\n";
  out += res.body;
  std::string_view rest = out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!rest.empty() && std::chrono::steady_clock::now() < deadline) {
    const ssize_t n = send(fd, rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      rest.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 100);
    } else {
      break;
    }
  }
  shutdown(fd, SHUT_WR);
}

// libmicrohttpd's log (MHD_OPTION_EXTERNAL_LOGGER). Silent, as the server
// was before it had one, but for one message: MHD is about to answer a fault
// in the middle of a body we accepted with its own 5xx (a chunk size line,
// extensions included, longer than its buffer). That is the client's fault,
// and too large: it gets our 400 first, and the connection ends.
void OnLibraryMessage(void*, const char* format, va_list args) {
  ThreadExchange& ex = this_thread_exchange;
  if (!ex.reading_body || format == nullptr) return;
  constexpr std::string_view kErrorAnswer = "Error processing request (HTTP response code is %u";
  if (std::string_view(format).substr(0, kErrorAnswer.size()) != kErrorAnswer) return;
  const unsigned status = va_arg(args, unsigned);
  if (status < 500) return;  // MHD's own 4xx (a malformed chunk) is right as it is
  HttpResponse res;
  ReplyError(res, 400, "invalid_argument",
             "a line of the chunked body (a chunk size with its extensions) is longer than this "
             "server reads; send chunks without extensions");
  WriteRefusal(ex.fd, res);
  ex.reading_body = false;
}

MHD_Result AddValue(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* out = static_cast<std::multimap<std::string, std::string, CaseInsensitiveLess>*>(cls);
  out->emplace(key ? key : "", value ? value : "");
  return MHD_YES;
}

MHD_Result AddParam(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* out = static_cast<std::multimap<std::string, std::string, std::less<>>*>(cls);
  out->emplace(key ? key : "", value ? value : "");
  return MHD_YES;
}

// A field of a multipart body, as it arrives (in pieces for large fields).
MHD_Result AddField(void* cls, MHD_ValueKind, const char* key, const char* filename,
                    const char* content_type, const char*, const char* data, uint64_t offset,
                    size_t size) {
  auto* files = static_cast<UploadedFiles*>(cls);
  UploadedFile& f = (*files)[key ? key : ""];
  if (offset == 0) {
    f = UploadedFile{filename ? filename : "", content_type ? content_type : "", ""};
  }
  f.content.append(data, size);
  return MHD_YES;
}

MHD_Result Send(MHD_Connection* c, HttpResponse& res) {
  MHD_Response* r = nullptr;
  if (res.source) {
    const MHD_ConnectionInfo* info =
        Mhd().get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    auto* stream = new Stream(std::move(res.source), info ? info->connect_fd : -1);
    r = Mhd().create_response_from_callback(
        res.content_length < 0 ? MHD_SIZE_UNKNOWN : static_cast<uint64_t>(res.content_length),
        kStreamBlock, &Stream::Read, stream, &Stream::Free);
    if (!r) delete stream;
  } else {
    auto* body = new std::string(std::move(res.body));
    r = Mhd().create_response_from_buffer_with_free_callback_cls(
        body->size(), body->data(), [](void* p) { delete static_cast<std::string*>(p); }, body);
    if (!r) delete body;
  }
  if (!r) return MHD_NO;
  for (const auto& [name, value] : res.headers) {
    Mhd().add_response_header(r, name.c_str(), value.c_str());
  }
  const MHD_Result queued = Mhd().queue_response(c, static_cast<unsigned>(res.status), r);
  Mhd().destroy_response(r);
  return queued;
}

void TooLarge(HttpResponse& res, int64_t max) {
  ReplyError(res, 413, "payload_too_large",
             "the request body is larger than this server accepts (" + std::to_string(max) +
                 " bytes, --max-body); send less, or start the server with a larger --max-body");
}

MHD_Result OnRequestThunk(void* cls, MHD_Connection* c, const char* url, const char* method,
                          const char*, const char* upload_data, size_t* upload_size,
                          void** exchange) {
  return static_cast<HttpDaemon*>(cls)->OnRequest(c, url, method, upload_data, upload_size,
                                                  exchange) == MHD_YES
             ? MHD_YES
             : MHD_NO;
}

void OnCompletedThunk(void* cls, MHD_Connection* c, void** exchange, MHD_RequestTerminationCode) {
  this_thread_exchange = ThreadExchange{};
  static_cast<HttpDaemon*>(cls)->OnCompleted(c, exchange);
}

void OnConnectionThunk(void* cls, MHD_Connection* c, void** socket_context,
                       MHD_ConnectionNotificationCode code) {
  static_cast<HttpDaemon*>(cls)->OnConnection(c, socket_context,
                                              code == MHD_CONNECTION_NOTIFY_STARTED);
}

// A listening socket on host:port without SO_REUSEPORT.
Result<int> BindSocket(const std::string& host, int port, int* family) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  std::string name = host;
  if (name.size() > 2 && name.front() == '[' && name.back() == ']')
    name = name.substr(1, name.size() - 2);
  if (int rc = getaddrinfo(name.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Err(Status::InvalidArgument("cannot listen on " + host + ": " + gai_strerror(rc) +
                                       "; give --host an address of this machine"));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, &freeaddrinfo);
  const std::string where = host + ":" + service;
  int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0)
    return Err(Status::Io("cannot open a socket for " + where + ": " + std::strerror(errno)));
  // SO_REUSEADDR lets a restarted server bind while old connections linger in
  // TIME_WAIT; unlike SO_REUSEPORT it never lets two servers share the port.
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, kListenBacklog) != 0) {
    const int error = errno;
    close(fd);
    if (error == EADDRINUSE) {
      return Err(Status::Busy("cannot listen on " + where +
                              ": address in use (is another server running there?); pick "
                              "another with --port, or --port 0 for any free one"));
    }
    return Err(Status::InvalidArgument("cannot listen on " + where + ": " + std::strerror(error) +
                                       " (not an address of this machine?); give --host an "
                                       "address of this machine"));
  }
  *family = found->ai_family;
  return fd;
}

}  // namespace

Result<std::unique_ptr<HttpDaemon>> HttpDaemon::Listen(const std::string& host, int port,
                                                       const DaemonLimits& limits,
                                                       HeaderCheck check, RequestHandler handler) {
  // Before the socket: a missing library is said without binding a port.
  ASSIGN_OR_RETURN(const LibMicrohttpd* mhd, LoadLibMicrohttpd());
  int family = AF_INET;
  ASSIGN_OR_RETURN(int fd, BindSocket(host, port, &family));
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  const int bound_port =
      ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                               : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  std::unique_ptr<HttpDaemon> d(new HttpDaemon(limits, std::move(check), std::move(handler)));
  d->port_ = bound_port;
  // MHD_USE_ERROR_LOG: its messages go to OnLibraryMessage (which must be
  // the first option), the one way to see a fault it answers by itself.
  unsigned flags =
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
  if (family == AF_INET6) flags |= MHD_USE_IPv6;
  d->daemon_ = mhd->start_daemon(
      flags, 0, nullptr, nullptr, &OnRequestThunk, d.get(), MHD_OPTION_EXTERNAL_LOGGER,
      &OnLibraryMessage, nullptr, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      limits.header_memory_bytes, MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned>(limits.max_connections), MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      static_cast<unsigned>(limits.max_connections_per_ip), MHD_OPTION_CONNECTION_TIMEOUT,
      static_cast<unsigned>(limits.idle_timeout_seconds), MHD_OPTION_NOTIFY_COMPLETED,
      &OnCompletedThunk, d.get(), MHD_OPTION_NOTIFY_CONNECTION, &OnConnectionThunk, d.get(),
      MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_END);
  if (!d->daemon_) {
    close(fd);
    return Err(Status::Internal("the HTTP server (libmicrohttpd) did not start on " + host + ":" +
                                std::to_string(bound_port)));
  }
  d->watchdog_ = std::thread([raw = d.get()] { raw->WatchHeaders(); });
  return d;
}

HttpDaemon::~HttpDaemon() { Stop(); }

void HttpDaemon::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.SignalAll();
  if (watchdog_.joinable()) watchdog_.join();
  if (daemon_) Mhd().stop_daemon(daemon_);
  daemon_ = nullptr;
}

void HttpDaemon::WatchHeaders() {
  const auto limit = std::chrono::seconds(limits_.header_timeout_seconds);
  MutexLock lock(&mu_);
  while (!stopping_) {
    stop_cv_.WaitFor(&mu_, std::chrono::milliseconds(500));
    const auto now = std::chrono::steady_clock::now();
    for (Watch* w : watches_) {
      if (w->busy || w->cut || now - w->since < limit) continue;
      // Read side and write side: MHD's thread sees the end of the stream and
      // closes the connection itself.
      shutdown(w->fd, SHUT_RDWR);
      w->cut = true;
    }
  }
}

void HttpDaemon::OnConnection(MHD_Connection* c, void** socket_context, bool opened) {
  MutexLock lock(&mu_);
  if (opened) {
    auto* w = new Watch;
    const MHD_ConnectionInfo* info =
        Mhd().get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    w->fd = info ? info->connect_fd : -1;
    // Small answers and stream frames go out at once, not after the client's
    // delayed ACK (Nagle: up to 40 ms each).
    const int on = 1;
    if (w->fd >= 0) setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    if (w->fd >= 0) watches_.insert(w);
    *socket_context = w;
    return;
  }
  auto* w = static_cast<Watch*>(*socket_context);
  watches_.erase(w);
  delete w;
  *socket_context = nullptr;
}

void HttpDaemon::SetBusy(MHD_Connection* c, bool busy) {
  const MHD_ConnectionInfo* info = Mhd().get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (!info || !info->socket_context) return;
  MutexLock lock(&mu_);
  auto* w = static_cast<Watch*>(info->socket_context);
  w->busy = busy;
  w->since = std::chrono::steady_clock::now();
}

void HttpDaemon::OnCompleted(MHD_Connection* c, void** exchange) {
  delete static_cast<Exchange*>(*exchange);
  *exchange = nullptr;
  SetBusy(c, false);
}

int HttpDaemon::OnRequest(MHD_Connection* c, const char* url, const char* method,
                          const char* upload_data, size_t* upload_size, void** exchange) {
  auto* ex = static_cast<Exchange*>(*exchange);
  auto answer = [&](HttpResponse& res) {
    ex->queued = true;
    if (ex->req.method == "GET" && res.ranges_allowed) ApplyRange(ex->req.Header("Range"), res);
    return Send(c, res);
  };
  // Before the body: MHD closes the connection after an answer queued now,
  // and reads nothing more of it; the header says so to the client.
  auto refuse = [&] {
    ex->early.SetHeader("Connection", "close");
    return answer(ex->early);
  };
  if (!ex) {
    // The headers are in; none of the body is read yet.
    ex = new Exchange;
    *exchange = ex;
    SetBusy(c, true);
    HttpRequest& req = ex->req;
    req.method = method;
    req.path = url;
    Mhd().get_connection_values(c, MHD_HEADER_KIND, &AddValue, &req.headers);
    Mhd().get_connection_values(c, MHD_GET_ARGUMENT_KIND, &AddParam, &req.params);
    if (const MHD_ConnectionInfo* info =
            Mhd().get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        info && info->client_addr) {
      char text[INET6_ADDRSTRLEN] = "";
      const sockaddr* a = info->client_addr;
      if (a->sa_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, text, sizeof(text));
      } else if (a->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, text,
                  sizeof(text));
      }
      req.remote_address = text;
    }
    // Framing first: where this request ends decides what the next one is.
    if (const std::string fault = FramingFault(req); !fault.empty()) {
      ReplyError(ex->early, 400, "invalid_argument", fault);
      return refuse();
    }
    if (!check_(req, ex->early)) return refuse();
    const std::string length = Trimmed(req.Header("Content-Length"));
    uint64_t declared = 0;
    if (!length.empty() &&
        (std::from_chars(length.data(), length.data() + length.size(), declared).ec !=
             std::errc() ||
         declared > static_cast<uint64_t>(limits_.max_body_bytes))) {
      TooLarge(ex->early, limits_.max_body_bytes);
      return refuse();
    }
    if (req.IsMultipartFormData()) {
      ex->post = Mhd().create_post_processor(c, kStreamBlock, &AddField, &req.files);
      if (!ex->post) {
        ReplyError(ex->early, 400, "invalid_argument",
                   "a multipart/form-data body needs a boundary in its Content-Type");
        return refuse();
      }
    }
    const MHD_ConnectionInfo* fd = Mhd().get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    this_thread_exchange = {.fd = fd ? fd->connect_fd : -1, .reading_body = true};
    return MHD_YES;
  }
  if (*upload_size > 0) {
    const size_t size = *upload_size;
    *upload_size = 0;
    if (ex->queued) return MHD_YES;  // answered already; the rest is dropped
    ex->received += size;
    const uint64_t cap = static_cast<uint64_t>(limits_.max_body_bytes);
    if (ex->refused) {
      // Past the cap: the 413 is out (WriteRefusal) and what arrives is
      // dropped, for a while, so that a client still sending reads its
      // answer before the connection closes (closing on unread bytes resets
      // it); one that goes on is cut off.
      return ex->received > cap + std::min<uint64_t>(cap, kDiscardAfterCap) ? MHD_NO : MHD_YES;
    }
    if (ex->received > cap) {
      // A chunked body (no Content-Length) reached the cap: nothing of it is
      // kept, and the 413 goes out now, as MHD cannot queue one mid-body.
      ex->refused = true;
      ex->written = true;
      ex->req.body.clear();
      ex->req.body.shrink_to_fit();
      ex->req.files.clear();
      TooLarge(ex->early, limits_.max_body_bytes);
      this_thread_exchange.reading_body = false;
      WriteRefusal(this_thread_exchange.fd, ex->early);
      return MHD_YES;
    }
    if (ex->post) {
      if (Mhd().post_process(ex->post, upload_data, size) != MHD_YES) {
        ex->refused = true;
        ReplyError(ex->early, 400, "invalid_argument", "the multipart/form-data body is malformed");
      }
    } else {
      ex->req.body.append(upload_data, size);
    }
    return MHD_YES;
  }
  // The whole body is in.
  this_thread_exchange.reading_body = false;
  if (ex->written) return MHD_NO;  // answered on the socket: MHD closes it
  if (ex->queued) return MHD_YES;
  if (ex->refused) return refuse();
  // `early` holds what the check added for an accepted request (CORS headers).
  handler_(ex->req, ex->early);
  return answer(ex->early);
}

void ApplyRange(std::string_view range, HttpResponse& res) {
  if (range.empty() || res.status != 200 || !res.ranges_allowed) return;
  if (res.source && (!res.ranged_source || res.content_length < 0)) return;
  // A ranged source (a blob streamed in pieces) is cut by asking it for the
  // part; a body in memory, by cutting the body.
  const bool streamed = res.source != nullptr;
  const uint64_t size = streamed ? static_cast<uint64_t>(res.content_length) : res.body.size();
  res.SetHeader("Accept-Ranges", "bytes");
  auto unsatisfiable = [&] {
    const std::string type = res.Header("Content-Type");
    res.headers.clear();
    ReplyError(res, 416, "range_not_satisfiable",
               "the Range must be one range of bytes within the " + std::to_string(size) +
                   "-byte body, e.g. bytes=0-1023");
    res.SetHeader("Content-Range", "bytes */" + std::to_string(size));
  };
  constexpr std::string_view kUnit = "bytes=";
  if (!range.starts_with(kUnit)) return unsatisfiable();
  std::string_view spec = range.substr(kUnit.size());
  // Several ranges: the whole body, as RFC 9110 allows; never a multipart
  // answer that could be many times the body's size.
  if (spec.find(',') != std::string_view::npos) return;
  const size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return unsatisfiable();
  auto number = [](std::string_view text, uint64_t* out) {
    return !text.empty() &&
           std::from_chars(text.data(), text.data() + text.size(), *out).ec == std::errc() &&
           std::from_chars(text.data(), text.data() + text.size(), *out).ptr ==
               text.data() + text.size();
  };
  uint64_t first = 0;
  uint64_t last = size == 0 ? 0 : size - 1;
  const std::string_view a = spec.substr(0, dash);
  const std::string_view b = spec.substr(dash + 1);
  if (a.empty()) {  // bytes=-N: the last N bytes
    uint64_t n = 0;
    if (!number(b, &n) || n == 0 || size == 0) return unsatisfiable();
    first = n >= size ? 0 : size - n;
  } else {
    if (!number(a, &first) || first >= size) return unsatisfiable();
    if (!b.empty()) {
      uint64_t end = 0;
      if (!number(b, &end) || end < first) return unsatisfiable();
      last = std::min(end, size - 1);
    }
  }
  if (streamed) {
    const auto length = static_cast<int64_t>(last - first + 1);
    res.source = res.ranged_source(static_cast<int64_t>(first), length);
    res.content_length = length;
  } else {
    res.body = res.body.substr(first, last - first + 1);
  }
  res.status = 206;
  res.SetHeader("Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                     "/" + std::to_string(size));
}

}  // namespace sessiondb::server
