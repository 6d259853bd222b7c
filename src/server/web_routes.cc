#include "server/web_routes.h"

#include <string>

#include "server/web_assets.h"

namespace sessiondb::server {

namespace {

// Nothing by default; then only what the page uses: its own scripts, styles
// and API, and images from the API, data: (the favicon fallback) and blob:
// (images fetched with the token). No inline script or style, no framing.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// "/app.js" as a regular expression that matches only that path.
std::string ExactPattern(std::string_view path) {
  std::string pattern;
  for (char c : path) {
    if (c == '.' || c == '-') pattern += '\\';
    pattern += c;
  }
  return pattern;
}

void ServeAsset(const WebAsset& asset, const httplib::Request& req, httplib::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("ETag", std::string(asset.etag));
  res.set_header("Cache-Control", "no-cache");
  if (req.get_header_value("If-None-Match") == asset.etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(asset.bytes.data(), asset.bytes.size(), std::string(asset.content_type));
}

}  // namespace

void AddWebRoutes(httplib::Server& http) {
  const WebAsset* index = FindWebAsset("/index.html");
  if (index) {
    http.Get("/", [index](const httplib::Request& req, httplib::Response& res) {
      ServeAsset(*index, req, res);
    });
  }
  for (const WebAsset& asset : WebAssets()) {
    http.Get(ExactPattern(asset.path), [&asset](const httplib::Request& req, httplib::Response& res) {
      ServeAsset(asset, req, res);
    });
  }
}

}  // namespace sessiondb::server
