// GET /v1/sessions/{id}/events: the session's log from a seq on, then live,
// as Server-Sent Events (or one JSON page without Accept: text/event-stream).
// GET /v1/events: the session list's changes, live (session_feed.h).
//
// The log is the only source: a stream remembers the last seq it sent and
// reads what follows whenever it wakes (another route appended, or every
// poll interval, for writers in other processes). So a client that
// reconnects with its last id misses nothing and sees nothing twice.
#include <charconv>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "server/api_state.h"
#include "server/http_reply.h"
#include "server/session_feed.h"

namespace sessiondb::server {

namespace {

// Events sent per read of the log; a longer backlog goes out in several.
constexpr int64_t kBatch = 500;

std::string SseFrame(const Event& e) {
  const std::string data =
      ToJson(e).dump(-1, ' ', false, Json::error_handler_t::replace);  // one line: no raw \n
  return "id: " + std::to_string(e.seq) + "\nevent: " + std::string(EventTypeName(e.type)) +
         "\ndata: " + data + "\n\n";
}

// Holds one of the --max-streams places until the answer is dropped (the
// client left, the stream ended, or the server stops).
struct Stream {
  Stream(ApiState& api, const std::string& session, int64_t since)
      : api(api), session_id(session), last_seq(since), subscription(api.hub, session) {}
  ~Stream() { api.open_streams.fetch_sub(1); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ApiState& api;
  const std::string session_id;
  int64_t last_seq;
  EventHub::Subscription subscription;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  // False right after a turn sent events: the next turn waits first (news
  // that came meanwhile ends the wait at once), so each wake reads the log once.
  bool read_first = true;
};

// Waits for news (at most poll_ms), sending the drafts published meanwhile and
// a keep-alive comment when the stream has been quiet.
bool Wait(Stream& s, ContentSink& sink) {
  auto write = [&](const std::string& frame) {
    s.last_write = std::chrono::steady_clock::now();
    return sink.Write(frame);
  };
  if (s.api.hub.closed() || !sink.Connected()) return false;
  for (const std::string& draft :
       s.subscription.Wait(std::chrono::milliseconds(s.api.options.poll_ms))) {
    if (!write("event: draft\ndata: " + draft + "\n\n")) return false;
  }
  if (std::chrono::steady_clock::now() - s.last_write >=
      std::chrono::milliseconds(s.api.options.keepalive_ms)) {
    if (!write(": keep-alive\n\n")) return false;
  }
  return !s.api.hub.closed();
}

// One turn of a stream: what the log gained, sent at once; or, when there
// was nothing, a wait for news (drafts arrive during it). Returns false to end
// the stream.
bool Pump(Stream& s, ContentSink& sink) {
  auto write = [&](const std::string& frame) {
    s.last_write = std::chrono::steady_clock::now();
    return sink.Write(frame);
  };
  if (!s.read_first) {
    s.read_first = true;
    return Wait(s, sink);
  }
  auto events = s.api.store.ReadEvents(s.session_id, s.last_seq + 1, kBatch);
  if (!events) {
    // The session was deleted (or the store failed): say why, then end.
    const StatusCode code = events.error().code();
    const bool internal = HttpStatusFor(code) >= 500 && code != StatusCode::kBusy;
    if (internal) std::cerr << "sessiondb serve: events: " << events.error().message() << "\n";
    write("event: error\ndata: " +
          Json({{"code", StatusCodeName(code)},
                {"message", internal ? GenericMessage(code) : events.error().message()}})
              .dump(-1, ' ', false, Json::error_handler_t::replace) +
          "\n\n");
    sink.Done();
    return true;
  }
  for (const Event& e : *events) {
    if (!write(SseFrame(e))) return false;
    s.last_seq = e.seq;
  }
  if (!events->empty()) {
    // Sent when this turn returns; a full batch means more backlog to read.
    s.read_first = static_cast<int64_t>(events->size()) == kBatch;
    return true;
  }
  return Wait(s, sink);
}

void Events(ApiState& api, const std::string& id, const HttpRequest& req, HttpResponse& res) {
  // A browser reconnecting sends Last-Event-ID with the URL it first used; the
  // header is the newer news.
  // Below INT64_MAX: the log is read from since + 1.
  auto since = IntParam(req, "since", 0, 0, INT64_MAX - 1);
  if (!since) return ReplyError(res, since.error());
  if (const std::string last = req.Header("Last-Event-ID"); !last.empty()) {
    int64_t seq = -1;
    auto [end, ec] = std::from_chars(last.data(), last.data() + last.size(), seq);
    if (ec != std::errc() || end != last.data() + last.size() || seq < 0 || seq == INT64_MAX) {
      return ReplyError(res,
                        Status::InvalidArgument("Last-Event-ID must be a seq, got '" + last + "'"));
    }
    since = seq;
  }
  auto session = api.store.GetSession(id);
  if (!session) return ReplyError(res, session.error());

  if (req.Header("Accept").find("text/event-stream") == std::string::npos) {
    auto limit = IntParam(req, "limit", -1, -1, INT64_MAX);
    if (!limit) return ReplyError(res, limit.error());
    auto events = api.store.ReadEvents(id, *since + 1, *limit);
    if (!events) return ReplyError(res, events.error());
    Json out = Json::array();
    for (const Event& e : *events) out.push_back(ToJson(e));
    return ReplyJson(res, 200, {{"events", std::move(out)}});
  }

  if (api.open_streams.fetch_add(1) >= api.options.max_streams) {
    api.open_streams.fetch_sub(1);
    return ReplyError(res, Status::Busy("too many live event streams are open (" +
                                        std::to_string(api.options.max_streams) +
                                        "); close one or start the server with a larger "
                                        "--max-streams"));
  }
  auto stream = std::make_shared<Stream>(api, id, *since);
  res.SetHeader("Cache-Control", "no-cache");
  res.SetSource([stream](ContentSink& sink) { return Pump(*stream, sink); }, "text/event-stream");
}

// The store-wide stream: the session list's changes. It holds one of the
// --max-streams places like a session's stream.
struct ListStream {
  explicit ListStream(ApiState& api)
      : api(api), feed(api.store), subscription(api.hub, std::string(EventHub::kAllSessions)) {}
  ~ListStream() { api.open_streams.fetch_sub(1); }
  ListStream(const ListStream&) = delete;
  ListStream& operator=(const ListStream&) = delete;
  ApiState& api;
  SessionFeed feed;
  EventHub::Subscription subscription;
  std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  bool started = false;
};

std::string OneLine(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// One turn of the list stream: the first says `ready` (a client lists the
// sessions then, so nothing falls between its list and the stream); each
// later one waits for news (at most poll_ms: other processes write too) and
// sends what changed.
bool PumpList(ListStream& s, ContentSink& sink) {
  auto write = [&](const std::string& frame) {
    s.last_write = std::chrono::steady_clock::now();
    return sink.Write(frame);
  };
  auto fail = [&](const Status& status) {
    const bool internal = HttpStatusFor(status.code()) >= 500 && status.code() != StatusCode::kBusy;
    if (internal) std::cerr << "sessiondb serve: session list: " << status.message() << "\n";
    write("event: error\ndata: " +
          OneLine({{"code", StatusCodeName(status.code())},
                   {"message", internal ? GenericMessage(status.code()) : status.message()}}) +
          "\n\n");
    sink.Done();
    return true;
  };
  if (!s.started) {
    s.started = true;
    if (Status st = s.feed.Start(); !st.ok()) return fail(st);
    return write("event: ready\ndata: {}\n\n");
  }
  if (s.api.hub.closed() || !sink.Connected()) return false;
  (void)s.subscription.Wait(std::chrono::milliseconds(s.api.options.poll_ms));
  if (s.api.hub.closed()) return false;
  auto changes = s.feed.Poll(s.subscription.TakeChangedSessions());
  if (!changes) return fail(changes.error());
  for (const Session& session : changes->changed) {
    if (!write("event: session\ndata: " + OneLine(ToJson(session)) + "\n\n")) return false;
  }
  for (const std::string& id : changes->deleted) {
    if (!write("event: session_deleted\ndata: " + OneLine({{"id", id}}) + "\n\n")) return false;
  }
  if (std::chrono::steady_clock::now() - s.last_write >=
      std::chrono::milliseconds(s.api.options.keepalive_ms)) {
    if (!write(": keep-alive\n\n")) return false;
  }
  return true;
}

void ListEvents(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  if (req.Header("Accept").find("text/event-stream") == std::string::npos) {
    return ReplyError(
        res, Status::InvalidArgument("/v1/events is a live stream: send Accept: text/event-stream "
                                     "(GET /v1/sessions lists the sessions)"));
  }
  if (api.open_streams.fetch_add(1) >= api.options.max_streams) {
    api.open_streams.fetch_sub(1);
    return ReplyError(res, Status::Busy("too many live event streams are open (" +
                                        std::to_string(api.options.max_streams) +
                                        "); close one or start the server with a larger "
                                        "--max-streams"));
  }
  auto stream = std::make_shared<ListStream>(api);
  res.SetHeader("Cache-Control", "no-cache");
  res.SetSource([stream](ContentSink& sink) { return PumpList(*stream, sink); },
                "text/event-stream");
}

}  // namespace

void AddEventRoutes(Router& router, ApiState& api) {
  router.Add("GET", R"(/v1/sessions/([^/]+)/events)",
             [&api](auto& req, auto& res, auto& path) { Events(api, path[0], req, res); });
  router.Add("GET", "/v1/events",
             [&api](auto& req, auto& res, auto&) { ListEvents(api, req, res); });
}

}  // namespace sessiondb::server
