// The web history browser's files (src/server/web/), compiled into the
// binary by cmake/embed_web_assets.cmake, so `sessiondb serve` needs nothing
// on disk and nothing from the network.
// Thread-safety: constant data.
#pragma once

#include <string_view>

namespace sessiondb::server {

struct WebAsset {
  std::string_view path;          // "/app.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view bytes;
  std::string_view etag;          // "\"<16 hex digits of its SHA-256>\""
};

// The asset served at `path`, or nullptr.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace sessiondb::server
