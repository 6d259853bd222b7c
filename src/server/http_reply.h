// How the HTTP API answers: JSON bodies, errors as {"error":{"code","message"}}
// with the status each library error maps to, and the parsing of bodies and
// query parameters with errors that say what was expected.
//
// Example (inside a route):
//   auto body = ParseJsonBody(req, res);
//   if (!body) return;  // 400 or 415 already answered
//   auto limit = IntParam(req, "limit", 50, 1, 1000);
//   if (!limit) return ReplyError(res, limit.error());
//   ReplyJson(res, 200, ToJson(*page));
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/json_fields.h"
#include "api/json_forms.h"
#include "server/http_message.h"
#include "sessiondb/status.h"

namespace sessiondb::server {

// 400, 404, 409, 503, 500 for the library's codes (status.h lists them).
int HttpStatusFor(StatusCode code);

// Sends `body` as compact JSON (bytes that are not UTF-8 become U+FFFD).
void ReplyJson(HttpResponse& res, int http_status, const Json& body);
// Sends {"error":{"code","message"}} with the status `status` maps to. For
// kInternal, kIo and kCorruption the message is GenericMessage's and the
// status's own message goes to stderr (it may hold SQL or paths).
void ReplyError(HttpResponse& res, const Status& status);
// What a client is told for an internal, I/O or corruption error.
std::string GenericMessage(StatusCode code);
// The same for the errors the library has no code for (401, 403, 405, 413...).
void ReplyError(HttpResponse& res, int http_status, std::string_view code,
                std::string_view message);

// The body as a JSON object; an empty body is {}. On failure answers 415 (a
// form or media body) or 400 (does not parse, or not an object) and returns
// nullopt.
std::optional<Json> ParseJsonBody(const HttpRequest& req, HttpResponse& res);

// The query parameter `name`, or "" when absent.
std::string Param(const HttpRequest& req, const char* name);
// An integer parameter within [min, max]; `fallback` when absent;
// kInvalidArgument naming the parameter and the range otherwise.
Result<int64_t> IntParam(const HttpRequest& req, const char* name, int64_t fallback, int64_t min,
                         int64_t max);
// "1", "true", "yes" are true; absent or "0", "false", "no" false; else an error.
Result<bool> BoolParam(const HttpRequest& req, const char* name);

}  // namespace sessiondb::server
