// The web history browser: GET / and each file of src/server/web/ at its own
// path, from the copies compiled into the binary (web_assets.h). The page
// talks only to /v1 (docs/web.md).
//
// Every answer carries a Content-Security-Policy that allows nothing but this
// origin's scripts, styles and connections (no inline script, no framing) and
// images from this origin, data: and blob: URLs; X-Content-Type-Options:
// nosniff; and an ETag with Cache-Control: no-cache, so a browser revalidates
// (304, no body) and picks up a new binary's page at once.
//
// Example:
//   if (!ServeWebPage(req, res)) ReplyError(res, 404, "not_found", ...);
//
// Thread-safety: a pure function of the request and the compiled-in files.
#pragma once

#include "server/http_message.h"

namespace sessiondb::server {

// Answers a GET or HEAD for / or one of the page's files, and 405 (with
// Allow) for another method on them; false (nothing answered) for any other
// path.
bool ServeWebPage(const HttpRequest& req, HttpResponse& res);

}  // namespace sessiondb::server
