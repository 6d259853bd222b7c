// Sessions, the active session, messages and blobs (docs/http-api.md).
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "api/message_json.h"
#include "blob/media_type.h"
#include "blob/verified_blob.h"
#include "core/json_parse.h"
#include "server/api_state.h"
#include "server/http_reply.h"
#include "server/session_facets.h"

namespace sessiondb::server {

namespace {

constexpr const char* kSession = R"(/v1/sessions/([^/]+))";
// The most sessions GET /v1/facets reads (a page of 1,000 at a time).
constexpr int64_t kFacetSessions = 20'000;

Result<ArchiveFilter> ParseArchiveFilter(const std::string& value) {
  if (value.empty() || value == "active") return ArchiveFilter::kActive;
  if (value == "archived") return ArchiveFilter::kArchived;
  if (value == "all") return ArchiveFilter::kAll;
  return Err(
      Status::InvalidArgument("archived must be active, archived or all, got '" + value + "'"));
}

void ListSessions(ApiState& api, const HttpRequest& req, HttpResponse& res) {
  auto limit = IntParam(req, "limit", 50, 1, 1000);
  if (!limit) return ReplyError(res, limit.error());
  auto archived = ParseArchiveFilter(Param(req, "archived"));
  if (!archived) return ReplyError(res, archived.error());
  ListOptions options{.limit = static_cast<int>(*limit),
                      .cursor = Param(req, "cursor"),
                      .archived = *archived,
                      .metadata_key = Param(req, "meta_key"),
                      .metadata_value = Param(req, "meta_value")};
  auto page = api.store.ListSessions(options);
  if (!page) return ReplyError(res, page.error());
  ReplyJson(res, 200, ToJson(*page));
}

void PatchSession(ApiState& api, const std::string& id, const HttpRequest& req, HttpResponse& res) {
  auto body = ParseJsonBody(req, res);
  if (!body) return;
  auto title = body->find("title");
  auto archived = body->find("archived");
  if (title != body->end() && !title->is_string()) {
    return ReplyError(res, Status::InvalidArgument("\"title\" must be a string"));
  }
  if (archived != body->end() && !archived->is_boolean()) {
    return ReplyError(res, Status::InvalidArgument("\"archived\" must be true or false"));
  }
  if (title == body->end() && archived == body->end()) {
    return ReplyError(res, Status::InvalidArgument("give \"title\" and/or \"archived\""));
  }
  // Checked first so that a bad title does not leave the archive flag changed.
  auto session = api.store.GetSession(id);
  if (!session) return ReplyError(res, session.error());
  if (title != body->end()) {
    if (Status s = api.store.RenameSession(id, title->get<std::string>()); !s.ok()) {
      return ReplyError(res, s);
    }
  }
  if (archived != body->end()) {
    if (Status s = api.store.SetArchived(id, archived->get<bool>()); !s.ok()) {
      return ReplyError(res, s);
    }
  }
  api.hub.NotifySessionChanged(id);
  session = api.store.GetSession(id);
  if (!session) return ReplyError(res, session.error());
  ReplyJson(res, 200, ToJson(*session));
}

// The messages asked for, each image with its bytes as "data_uri" when asked.
void ReadMessages(ApiState& api, const std::string& id, const HttpRequest& req, HttpResponse& res) {
  auto from = IntParam(req, "from_seq", 1, 1, INT64_MAX);
  auto limit = IntParam(req, "limit", -1, -1, INT64_MAX);
  auto last = IntParam(req, "last", 0, 0, INT64_MAX);
  auto data_uris = BoolParam(req, "data_uris");
  for (const Status& s : {internal::ToStatus(from), internal::ToStatus(limit),
                          internal::ToStatus(last), internal::ToStatus(data_uris)}) {
    if (!s.ok()) return ReplyError(res, s);
  }
  auto messages =
      *last > 0 ? api.store.ReadLastMessages(id, *last) : api.store.ReadMessages(id, *from, *limit);
  if (!messages) return ReplyError(res, messages.error());
  Json out = Json::array();
  for (const Message& m : *messages) {
    Json jm = ToJson(m);
    for (size_t i = 0; *data_uris && i < m.parts.size(); ++i) {
      const Part& p = m.parts[i];
      if (!p.resource || p.resource->missing || p.resource->content_sha256.empty()) continue;
      auto uri = api.store.ReadDataUri(*p.resource);
      jm["parts"][i]["data_uri"] = uri ? Json(std::move(*uri)) : Json(nullptr);
      // A damaged blob is named, never sent (invariant 5: the part says so).
      if (!uri && uri.error().code() == StatusCode::kCorruption) {
        jm["parts"][i]["data_uri_error"] = uri.error().message();
      }
    }
    out.push_back(std::move(jm));
  }
  ReplyJson(res, 200, {{"messages", std::move(out)}});
}

void AppendMessages(ApiState& api, const std::string& id, const HttpRequest& req,
                    HttpResponse& res) {
  Json body;
  const UploadedFiles* uploads = nullptr;
  if (req.IsMultipartFormData()) {
    auto field = req.files.find("message");
    if (field == req.files.end()) {
      return ReplyError(res, Status::InvalidArgument(
                                 "a multipart append needs a form field \"message\" holding the "
                                 "message JSON"));
    }
    body = ParseJson(field->second.content).value_or(Json(Json::value_t::discarded));
    if (body.is_discarded() || !body.is_object()) {
      return ReplyError(res, Status::InvalidArgument("the \"message\" field is not a JSON object"));
    }
    uploads = &req.files;
  } else {
    auto parsed = ParseJsonBody(req, res);
    if (!parsed) return;
    body = std::move(*parsed);
  }

  if (auto batch = body.find("messages"); batch != body.end()) {
    if (!batch->is_array() || batch->empty()) {
      return ReplyError(res, Status::InvalidArgument("\"messages\" must be a non-empty list"));
    }
    std::vector<Message> messages;
    for (size_t i = 0; i < batch->size(); ++i) {
      auto m = MessageFromJson((*batch)[i], {.attachments = uploads});
      if (!m) {
        return ReplyError(res, Status::InvalidArgument("messages[" + std::to_string(i) +
                                                       "]: " + m.error().message()));
      }
      messages.push_back(std::move(*m));
    }
    auto results = api.store.AppendBatch(id, messages);
    if (!results) return ReplyError(res, results.error());
    api.hub.NotifyAppended(id);
    Json out = Json::array();
    for (const AppendResult& r : *results) out.push_back(ToJson(r));
    return ReplyJson(res, 201, {{"results", std::move(out)}});
  }
  auto message = MessageFromJson(body, {.attachments = uploads});
  if (!message) return ReplyError(res, message.error());
  auto result = api.store.Append(id, *message);
  if (!result) return ReplyError(res, result.error());
  api.hub.NotifyAppended(id);
  ReplyJson(res, 201, ToJson(*result));
}

// A blob never changes (its name is its hash), so caches may keep it forever.
// One "Range: bytes=..." is answered with 206; several with the whole blob.
// The bytes are streamed a piece at a time (a Range of a large blob costs a
// piece of memory, not the blob), after the whole blob was hashed, also a
// piece at a time: bytes damaged on disk must never go out under the name
// (and ETag, and "immutable") of what they were.
void ServeBlob(ApiState& api, const std::string& sha256, const HttpRequest& req,
               HttpResponse& res) {
  const std::string etag = "\"" + sha256 + "\"";
  if (req.Header("If-None-Match") == etag) {
    res.status = 304;
    res.SetHeader("ETag", etag);
    return;
  }
  auto opened = api.store.OpenBlob(sha256);
  if (!opened) return ReplyError(res, opened.error());
  // The reader stands at the start; what the type is sniffed from is kept
  // and sent first, so the blob is read once more at most.
  struct Stream {
    std::unique_ptr<BlobReader> reader;
    std::string head;
    int64_t position = 0;  // of the reader
  };
  auto stream = std::make_shared<Stream>();
  stream->reader = std::move(*opened);
  const int64_t size = stream->reader->size();
  auto head = stream->reader->Read(blob::kBlobPieceBytes);
  if (!head) return ReplyError(res, head.error());
  stream->head = std::move(*head);
  stream->position = std::ssize(stream->head);
  auto media = blob::SniffMedia(stream->head);
  const std::string type = media ? media->mime : "application/octet-stream";
  res.SetHeader("ETag", etag);
  res.SetHeader("Cache-Control", "public, max-age=31536000, immutable");
  res.SetHeader("X-Content-Type-Options", "nosniff");
  // Never rendered as a page of this origin, whatever the bytes hold.
  res.SetHeader("Content-Security-Policy", "sandbox; default-src 'none'");
  res.status = 200;
  // Bytes [offset, offset + length), a piece per call; an error (the bytes
  // changed since they were hashed) ends the answer short, never complete.
  auto part = [stream, sha256](int64_t offset, int64_t length) -> ContentSource {
    return [stream, sha256, next = offset, end = offset + length](ContentSink& sink) mutable {
      if (next >= end) {
        sink.Done();
        return true;
      }
      const auto held = std::ssize(stream->head);
      if (next < held) {
        const int64_t n = std::min(end, held) - next;
        sink.Write(std::string_view(stream->head)
                       .substr(static_cast<size_t>(next), static_cast<size_t>(n)));
        next += n;
        return true;
      }
      if (stream->position != next) {
        if (Status s = stream->reader->Skip(next - stream->position); !s.ok()) {
          std::cerr << "sessiondb serve: blob " << sha256 << ": " << s.message() << "\n";
          return false;
        }
        stream->position = next;
      }
      auto piece = stream->reader->Read(
          static_cast<size_t>(std::min<int64_t>(end - next, blob::kBlobPieceBytes)));
      if (!piece || piece->empty()) {
        std::cerr << "sessiondb serve: blob " << sha256 << ": "
                  << (piece ? std::string("ended early") : piece.error().message()) << "\n";
        return false;
      }
      next += std::ssize(*piece);
      stream->position = next;
      sink.Write(*piece);
      return true;
    };
  };
  res.SetRangedSource(std::move(part), type, size);
}

}  // namespace

void AddSessionRoutes(Router& router, ApiState& api) {
  router.Add("GET", "/v1/sessions",
             [&api](auto& req, auto& res, auto&) { ListSessions(api, req, res); });
  // The sources and projects the list can be narrowed to (meta_key, meta_value).
  router.Add("GET", "/v1/facets", [&api](auto&, auto& res, auto&) {
    auto facets = SessionFacets(api.store, kFacetSessions);
    if (!facets) return ReplyError(res, facets.error());
    ReplyJson(res, 200, *facets);
  });
  router.Add("POST", "/v1/sessions", [&api](auto& req, auto& res, auto&) {
    auto body = ParseJsonBody(req, res);
    if (!body) return;
    auto request = NewSessionFromJson(*body);
    if (!request) return ReplyError(res, request.error());
    auto session = api.store.CreateSession(*request);
    if (!session) return ReplyError(res, session.error());
    api.hub.NotifySessionChanged(session->id);
    ReplyJson(res, 201, ToJson(*session));
  });
  router.Add("GET", kSession, [&api](auto&, auto& res, auto& path) {
    auto session = api.store.GetSession(path[0]);
    if (!session) return ReplyError(res, session.error());
    ReplyJson(res, 200, ToJson(*session));
  });
  router.Add("PATCH", kSession,
             [&api](auto& req, auto& res, auto& path) { PatchSession(api, path[0], req, res); });
  // DELETE kSession (to the trash, or erased) is routes_forget's.

  router.Add("GET", "/v1/active", [&api](auto&, auto& res, auto&) {
    auto active = api.store.GetActiveSession();
    if (!active) return ReplyError(res, active.error());
    ReplyJson(res, 200, {{"session_id", *active ? Json(**active) : Json(nullptr)}});
  });
  router.Add("PUT", "/v1/active", [&api](auto& req, auto& res, auto&) {
    auto body = ParseJsonBody(req, res);
    if (!body) return;
    // An absent body is {}: clearing the active session takes an explicit "".
    if (!body->contains("session_id")) {
      return ReplyError(
          res, Status::InvalidArgument("give \"session_id\": a session's id, or \"\" to clear it"));
    }
    auto id = StringField(*body, "session_id");
    if (!id) return ReplyError(res, id.error());
    if (Status s = api.store.SetActiveSession(*id); !s.ok()) return ReplyError(res, s);
    ReplyJson(res, 200, {{"session_id", id->empty() ? Json(nullptr) : Json(*id)}});
  });

  router.Add("GET", R"(/v1/sessions/([^/]+)/messages)",
             [&api](auto& req, auto& res, auto& path) { ReadMessages(api, path[0], req, res); });
  router.Add("POST", R"(/v1/sessions/([^/]+)/messages)",
             [&api](auto& req, auto& res, auto& path) { AppendMessages(api, path[0], req, res); });
  router.Add("GET", R"(/v1/blobs/([0-9a-f]{64}))",
             [&api](auto& req, auto& res, auto& path) { ServeBlob(api, path[0], req, res); });
}

}  // namespace sessiondb::server
