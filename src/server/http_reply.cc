#include "server/http_reply.h"

#include <charconv>
#include <iostream>

#include "core/json_parse.h"

namespace sessiondb::server {

std::string GenericMessage(StatusCode code) {
  switch (code) {
    case StatusCode::kCorruption:
      return "the store holds damaged data for this request; the server's log names it, and "
             "`sessiondb verify` checks the whole store";
    case StatusCode::kIo:
      return "the server could not read or write its files for this request; see the server's "
             "log";
    default:
      return "the server failed on this request; see the server's log";
  }
}

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kBusy:
      return 503;
    case StatusCode::kCorruption:
    case StatusCode::kIo:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

void ReplyJson(HttpResponse& res, int http_status, const Json& body) {
  res.status = http_status;
  res.SetBody(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void ReplyError(HttpResponse& res, const Status& status) {
  const StatusCode code = status.code();
  if (code == StatusCode::kInternal || code == StatusCode::kIo || code == StatusCode::kCorruption) {
    // Their messages can hold SQL, file paths and library text that mean
    // nothing to a client and tell an attacker about the server: the
    // operator gets them in the log, the client what to do.
    std::cerr << "sessiondb serve: " << StatusCodeName(code) << ": " << status.message() << "\n";
    return ReplyError(res, HttpStatusFor(code), StatusCodeName(code), GenericMessage(code));
  }
  ReplyError(res, HttpStatusFor(code), StatusCodeName(code), status.message());
}

void ReplyError(HttpResponse& res, int http_status, std::string_view code,
                std::string_view message) {
  ReplyJson(res, http_status, {{"error", {{"code", code}, {"message", message}}}});
}

std::optional<Json> ParseJsonBody(const HttpRequest& req, HttpResponse& res) {
  // Any label that could hold text is read as JSON (curl -d sends
  // application/x-www-form-urlencoded); forms and media cannot be.
  const std::string type = req.Header("Content-Type");
  if (type.rfind("multipart/", 0) == 0 || type.rfind("image/", 0) == 0 ||
      type.rfind("audio/", 0) == 0 || type.rfind("video/", 0) == 0) {
    ReplyError(res, 415, "unsupported_media_type",
               "expected a JSON body (Content-Type: application/json), got " + type);
    return std::nullopt;
  }
  // No body at all (curl -X POST without -d) is the empty object: routes whose
  // fields are all optional then work, the others name the missing field.
  if (req.body.empty() && req.files.empty()) return Json::object();
  Result<Json> parsed = ParseJson(req.body);
  Json body = parsed.value_or(Json(Json::value_t::discarded));
  if (body.is_discarded()) {
    ReplyError(res,
               Status::InvalidArgument("the body is not valid JSON: " + parsed.error().message()));
    return std::nullopt;
  }
  if (!body.is_object()) {
    ReplyError(res, Status::InvalidArgument("the body must be a JSON object"));
    return std::nullopt;
  }
  return body;
}

std::string Param(const HttpRequest& req, const char* name) {
  return req.HasParam(name) ? req.ParamValue(name) : std::string();
}

Result<int64_t> IntParam(const HttpRequest& req, const char* name, int64_t fallback, int64_t min,
                         int64_t max) {
  if (!req.HasParam(name)) return fallback;
  const std::string text = req.ParamValue(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return Err(Status::InvalidArgument(std::string(name) + " must be an integer from " +
                                       std::to_string(min) + " to " + std::to_string(max) +
                                       ", got '" + text + "'"));
  }
  return value;
}

Result<bool> BoolParam(const HttpRequest& req, const char* name) {
  const std::string v = Param(req, name);
  if (v.empty() || v == "0" || v == "false" || v == "no") return false;
  if (v == "1" || v == "true" || v == "yes") return true;
  return Err(Status::InvalidArgument(std::string(name) + " must be 1 or 0, got '" + v + "'"));
}

}  // namespace sessiondb::server
