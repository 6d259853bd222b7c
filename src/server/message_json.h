// A message to append (or a session to create), read from the JSON an API client sends (the shape
// in docs/http-api.md, "Messages"): role and parts, attachments as data URIs or as the names of
// uploaded multipart fields, and the optional fields of Message. Errors name the part and the field
// that is wrong.
//
// Example:
//   auto m = MessageFromJson(body, /*uploads=*/nullptr);
//   if (!m) return ReplyError(res, m.error());
//
// Thread-safety: pure function.
#pragma once

#include "api/json_forms.h"
#include "server/http_message.h"
#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb::server {

// `uploads`: the request's multipart files, for parts that say
// {"upload": "field"}; nullptr when the request was plain JSON.
Result<Message> MessageFromJson(const Json& j, const UploadedFiles* uploads);

// {"id"?, "title"?, "metadata"?: {...}}: a new session, or a fork's child.
Result<NewSession> NewSessionFromJson(const Json& body);

}  // namespace sessiondb::server
