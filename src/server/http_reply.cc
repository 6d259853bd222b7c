#include "server/http_reply.h"

#include <charconv>

#include "core/json_parse.h"

namespace sessiondb::server {

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

void ReplyJson(httplib::Response& res, int http_status, const Json& body) {
  res.status = http_status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void ReplyError(httplib::Response& res, const Status& status) {
  ReplyError(res, HttpStatusFor(status.code()), StatusCodeName(status.code()), status.message());
}

void ReplyError(httplib::Response& res, int http_status, std::string_view code,
                std::string_view message) {
  ReplyJson(res, http_status, {{"error", {{"code", code}, {"message", message}}}});
}

std::optional<Json> ParseJsonBody(const httplib::Request& req, httplib::Response& res) {
  // Any label that could hold text is read as JSON (curl -d sends
  // application/x-www-form-urlencoded); forms and media cannot be.
  const std::string type = req.get_header_value("Content-Type");
  if (type.rfind("multipart/", 0) == 0 || type.rfind("image/", 0) == 0 ||
      type.rfind("audio/", 0) == 0 || type.rfind("video/", 0) == 0) {
    ReplyError(res, 415, "unsupported_media_type",
               "expected a JSON body (Content-Type: application/json), got " + type);
    return std::nullopt;
  }
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

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

Result<int64_t> IntParam(const httplib::Request& req, const char* name, int64_t fallback,
                         int64_t min, int64_t max) {
  if (!req.has_param(name)) return fallback;
  const std::string text = req.get_param_value(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return Err(Status::InvalidArgument(std::string(name) + " must be an integer from " +
                                       std::to_string(min) + " to " + std::to_string(max) +
                                       ", got '" + text + "'"));
  }
  return value;
}

Result<bool> BoolParam(const httplib::Request& req, const char* name) {
  const std::string v = Param(req, name);
  if (v.empty() || v == "0" || v == "false" || v == "no") return false;
  if (v == "1" || v == "true" || v == "yes") return true;
  return Err(Status::InvalidArgument(std::string(name) + " must be 1 or 0, got '" + v + "'"));
}

Result<std::string> StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return Err(Status::InvalidArgument(std::string("\"") + key + "\" must be a string"));
  }
  return it->get<std::string>();
}

Result<int64_t> IntField(const Json& object, const char* key, int64_t fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) {
    return Err(Status::InvalidArgument(std::string("\"") + key + "\" must be an integer"));
  }
  return it->get<int64_t>();
}

}  // namespace sessiondb::server
