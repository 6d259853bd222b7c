#include "server/web_routes.h"

#include "server/web_assets.h"

namespace sessiondb::server {

namespace {

constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

void Serve(const WebAsset& asset, const httplib::Request& req, httplib::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("ETag", std::string(asset.etag));
  // The page changes with the binary: revalidate, which costs a 304.
  res.set_header("Cache-Control", "no-cache");
  if (req.get_header_value("If-None-Match") == asset.etag) {
    res.status = 304;
    return;
  }
  res.status = 200;
  res.set_content(asset.bytes.data(), asset.bytes.size(), std::string(asset.content_type).c_str());
}

}  // namespace

void AddWebRoutes(httplib::Server& http) {
  http.Get("/", [](const httplib::Request& req, httplib::Response& res) {
    Serve(*FindWebAsset("/index.html"), req, res);
  });
  http.Get(R"(/[A-Za-z0-9_.-]+)", [](const httplib::Request& req, httplib::Response& res) {
    const WebAsset* asset = FindWebAsset(req.path);
    if (!asset) {
      res.status = 404;  // the error handler words it
      return;
    }
    Serve(*asset, req, res);
  });
}

}  // namespace sessiondb::server
