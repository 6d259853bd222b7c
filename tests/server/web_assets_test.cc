// The web page's files compiled into the binary (src/server/web_assets.h);
// tests/web drives the page itself in a browser.
#include "server/web_assets.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace sessiondb::server {
namespace {

TEST(WebAssets, TheRootIsTheIndexPage) {
  const WebAsset* root = FindWebAsset("/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root, FindWebAsset("/index.html"));
  EXPECT_EQ(root->content_type, "text/html; charset=utf-8");
  EXPECT_TRUE(root->bytes.starts_with("<!doctype html>"));
}

TEST(WebAssets, EveryAssetHasATypeAQuotedEtagAndItsBytes) {
  ASSERT_FALSE(WebAssets().empty());
  for (const WebAsset& asset : WebAssets()) {
    SCOPED_TRACE(std::string(asset.path));
    EXPECT_TRUE(asset.path.starts_with("/"));
    EXPECT_FALSE(asset.content_type.empty());
    EXPECT_TRUE(std::regex_match(std::string(asset.etag), std::regex(R"("[0-9a-f]{16}")")));
    EXPECT_FALSE(asset.bytes.empty());
    EXPECT_EQ(asset.bytes.find('\0'), std::string_view::npos)
        << "the array's own terminator leaked in";
  }
}

TEST(WebAssets, EveryFileTheIndexPageLoadsIsCompiledIn) {
  const std::string html(FindWebAsset("/")->bytes);
  const std::regex reference(R"re((?:src|href)="(/[^"]*)")re");
  int found = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), reference);
       it != std::sregex_iterator(); ++it, ++found) {
    EXPECT_NE(FindWebAsset((*it)[1].str()), nullptr) << (*it)[1].str();
  }
  EXPECT_GE(found, 3);  // the stylesheet, the script, the icon
}

TEST(WebAssets, AnUnknownPathHasNone) {
  EXPECT_EQ(FindWebAsset("/nothing.js"), nullptr);
  EXPECT_EQ(FindWebAsset("/v1/sessions"), nullptr);
  EXPECT_EQ(FindWebAsset(""), nullptr);
}

}  // namespace
}  // namespace sessiondb::server
