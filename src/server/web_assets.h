// The web history browser's files (src/server/web/), compiled into the binary
// by cmake/embed_web_assets.cmake, so `sessiondb serve` needs nothing on disk
// and the page works with no network at all.
//
// Example:
//   if (const WebAsset* a = FindWebAsset("/app.js")) res.set_content(a->bytes, a->content_type);
//
// Thread-safety: the table is constant; read it from any thread.
#pragma once

#include <span>
#include <string_view>

namespace sessiondb::server {

struct WebAsset {
  std::string_view path;          // "/app.js": where it is served
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view bytes;
  std::string_view etag;  // "\"<16 hex digits of the SHA-256>\"", quotes included
};

// Every asset, sorted by path. Defined in the generated source.
std::span<const WebAsset> WebAssets();

// The asset served at `path` ("/" is "/index.html"), or nullptr.
const WebAsset* FindWebAsset(std::string_view path);

}  // namespace sessiondb::server
