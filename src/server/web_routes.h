// Serves the web history browser: GET / is the page, and each compiled-in
// asset is served at its path, with a Content-Security-Policy that allows
// only this origin's scripts and styles (no inline script), so message text
// rendered by the page can never run as code.
// Thread-safety: registration before serving.
#pragma once

#include <httplib.h>

namespace sessiondb::server {

void AddWebRoutes(httplib::Server& http);

}  // namespace sessiondb::server
