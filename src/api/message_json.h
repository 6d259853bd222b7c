// A message to append (or a session to create), read from the JSON a face was
// sent (the shape in docs/http-api.md, "Messages"): role and parts, each
// attachment as a data URI, as the name of an attachment sent beside the JSON
// (an HTTP multipart field, a Node Buffer), or, where the caller allows it, a
// path on this machine. Errors name the part and the field that is wrong.
//
// Example:
//   auto m = MessageFromJson(body, {.attachments = &req.files});
//   if (!m) return ReplyError(res, m.error());
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "api/json_forms.h"
#include "sessiondb/status.h"
#include "sessiondb/types.h"

namespace sessiondb {

// Bytes sent beside the JSON, which a part names with {"upload": "<key>"}.
struct Attachment {
  std::string filename;      // as the client named it; may be empty
  std::string content_type;  // as the client labelled it; may be empty
  std::string content;
};
using Attachments = std::map<std::string, Attachment, std::less<>>;

struct MessageJsonOptions {
  // The attachments a part may name; nullptr when none were sent.
  const Attachments* attachments = nullptr;
  // Whether an image or file part may give {"path": "..."} for the engine to
  // read. Only for a caller in this machine's own process (the Node package):
  // never over HTTP or MCP, where the path would be the server's.
  bool allow_paths = false;
};

Result<Message> MessageFromJson(const Json& j, const MessageJsonOptions& options);

// {"id"?, "title"?, "metadata"?: {...}}: a new session, or a fork's child.
Result<NewSession> NewSessionFromJson(const Json& body);

}  // namespace sessiondb
