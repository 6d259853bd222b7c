#include "server/web_routes.h"

#include <string>

#include "server/http_reply.h"
#include "server/web_assets.h"

namespace sessiondb::server {

namespace {

// Nothing by default; then only what the page uses: its own scripts, styles
// and API, and images from the API, data: (the favicon fallback) and blob:
// (images fetched with the token). No inline script or style, no framing.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

void ServeAsset(const WebAsset& asset, const HttpRequest& req, HttpResponse& res) {
  res.SetHeader("Content-Security-Policy", kContentSecurityPolicy);
  res.SetHeader("X-Content-Type-Options", "nosniff");
  res.SetHeader("Referrer-Policy", "no-referrer");
  res.SetHeader("ETag", std::string(asset.etag));
  res.SetHeader("Cache-Control", "no-cache");
  if (req.Header("If-None-Match") == asset.etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.SetBody(std::string(asset.bytes.data(), asset.bytes.size()), asset.content_type);
}

}  // namespace

bool ServeWebPage(const HttpRequest& req, HttpResponse& res) {
  const WebAsset* asset = FindWebAsset(req.path == "/" ? "/index.html" : req.path);
  if (!asset) return false;
  if (req.method != "GET" && req.method != "HEAD") {
    // The page's files are read-only, like a /v1 route asked with the wrong method.
    res.SetHeader("Allow", "GET, HEAD");
    ReplyError(res, 405, "method_not_allowed",
               req.method + " is not supported on " + req.path + "; use GET, HEAD");
    return true;
  }
  ServeAsset(*asset, req, res);
  return true;
}

}  // namespace sessiondb::server
