// The pure checks of the HTTP face: which Host names the server (the DNS
// rebinding defence) and how a Range header is answered.
#include <gtest/gtest.h>

#include "server/http_daemon.h"
#include "server/http_server.h"

namespace sessiondb::server {
namespace {

TEST(HostIsOurs, LoopbackNamesAndAddressesWithOrWithoutAPortAreOurs) {
  const ServerOptions o;
  for (const char* host : {"localhost", "localhost:7411", "LocalHost.", "127.0.0.1", "127.0.0.1:80",
                           "[::1]", "[::1]:7411", "10.0.0.5:7411"}) {
    EXPECT_TRUE(HostIsOurs(host, o)) << host;
  }
}

TEST(HostIsOurs, OtherNamesLookalikesAndGarbageAreNot) {
  const ServerOptions o;
  for (const char* host : {"", "evil.example", "evil.example:7411", "127.0.0.1.evil.example",
                           "localhost.evil.example", "[::1", "[::1]x", "[evil]", ":7411"}) {
    EXPECT_FALSE(HostIsOurs(host, o)) << host;
  }
}

TEST(HostIsOurs, TheConfiguredHostAndAllowedNamesAreOurs) {
  ServerOptions o;
  o.host = "box.lan";
  o.allowed_hosts = {"Chats.Example"};
  EXPECT_TRUE(HostIsOurs("box.lan:7411", o));
  EXPECT_TRUE(HostIsOurs("chats.example", o));
  EXPECT_FALSE(HostIsOurs("other.example", o));
}

HttpResponse Blob(std::string bytes) {
  HttpResponse res;
  res.SetBody(std::move(bytes), "application/octet-stream");
  res.ranges_allowed = true;
  return res;
}

TEST(ApplyRange, OneRangeIsServedAsPartialContent) {
  HttpResponse res = Blob("0123456789");
  ApplyRange("bytes=2-4", res);
  EXPECT_EQ(res.status, 206);
  EXPECT_EQ(res.body, "234");
  EXPECT_EQ(res.Header("Content-Range"), "bytes 2-4/10");
  res = Blob("0123456789");
  ApplyRange("bytes=-3", res);
  EXPECT_EQ(res.body, "789");
  res = Blob("0123456789");
  ApplyRange("bytes=8-100", res);
  EXPECT_EQ(res.body, "89");
}

TEST(ApplyRange, SeveralRangesGetTheWholeBodyAndBadOnes416) {
  HttpResponse res = Blob("0123456789");
  ApplyRange("bytes=0-1,2-3,4-5", res);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "0123456789");
  for (const char* bad :
       {"bytes=10-", "bytes=x-1", "bytes=3-1", "items=1-2", "bytes=-0", "bytes=1"}) {
    res = Blob("0123456789");
    ApplyRange(bad, res);
    EXPECT_EQ(res.status, 416) << bad;
    EXPECT_EQ(res.Header("Content-Range"), "bytes */10") << bad;
  }
}

TEST(ApplyRange, AnswersThatDoNotAllowRangesAreLeftWhole) {
  HttpResponse res;
  res.SetBody("{}", "application/json");
  ApplyRange("bytes=0-0", res);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "{}");
}

}  // namespace
}  // namespace sessiondb::server
