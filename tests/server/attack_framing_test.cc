// Attacks on where a request ends, against the real `sessiondb serve`: a
// request whose framing two readers could read differently smuggles a second
// request inside its body (RFC 9112 section 6.3). Each ambiguous framing gets
// one 4xx and the connection closed; the bytes after it are never answered as
// a request of their own, nothing is stored, and the server serves the next
// connection.
#include <sys/time.h>

#include <atomic>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

#include "server/raw_http.h"
#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

bool Healthy(const ServerProcess& server) {
  auto r = server.Client()->Get("/v1/health");
  return r && r->status == 200;
}

size_t SessionCount(const ServerProcess& server) {
  return Body(server.Client()->Get("/v1/sessions?archived=all"))["sessions"].size();
}

// How many answers a raw reply holds: status lines ("HTTP/1.1 201 "), which
// follow the previous answer's body directly.
int Answers(const std::string& reply) {
  static const std::regex status_line("HTTP/1\\.[01] [1-5][0-9][0-9] ");
  return static_cast<int>(
      std::distance(std::sregex_iterator(reply.begin(), reply.end(), status_line), {}));
}

// A request that creates session `id`, smuggled after the first one.
std::string Smuggled(const std::string& id) {
  const std::string body = R"({"id":")" + id + R"("})";
  return "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Sends `bytes` on a new connection and returns all the server sends back
// before it closes; fails the test if it does not close within 10 s.
std::string Exchange(const ServerProcess& server, const std::string& bytes) {
  RawSocket s(server.port());
  EXPECT_TRUE(s.ok());
  s.Send(bytes);
  const auto start = std::chrono::steady_clock::now();
  std::string reply = s.ReadAll(10);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(9))
      << "the server kept the connection open";
  return reply;
}

// One 400 with a JSON error, a single answer, nothing stored, and the server
// still answering others.
void ExpectOneRefusal(const ServerProcess& server, const std::string& reply, int status,
                      const std::string& says) {
  EXPECT_EQ(StatusOf(reply), status) << reply.substr(0, 400);
  EXPECT_EQ(Answers(reply), 1) << "the bytes after the request were answered:\n" << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply.substr(0, 400);
  const json error = json::parse(BodyOf(reply), nullptr, false);
  ASSERT_TRUE(error.is_object()) << reply;
  EXPECT_NE(error["error"]["message"].get<std::string>().find(says), std::string::npos) << reply;
  EXPECT_EQ(SessionCount(server), 0u) << "a request was stored";
  EXPECT_TRUE(Healthy(server));
}

constexpr const char* kHead =
    "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";

TEST(AttackFramingTest, ContentLengthBesideChunkedIsRefusedAndNothingAfterItIsAnswered) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  // Content-Length says the body is "0\r\n\r\n" and more; chunked says it ends
  // at the empty chunk, and the rest is a second request.
  const std::string chunked = "b\r\n{\"id\":\"a\"}\r\n0\r\n\r\n";
  const std::string reply = Exchange(
      server, std::string(kHead) + "Content-Length: " + std::to_string(chunked.size()) +
                  "\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + Smuggled("smuggled"));
  ExpectOneRefusal(server, reply, 400, "both Content-Length and Transfer-Encoding");
}

TEST(AttackFramingTest, TwoDifferentContentLengthsAreRefused) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  const std::string body = R"({"id":"a"})";
  const std::string second = Smuggled("smuggled");
  const std::string reply =
      Exchange(server, std::string(kHead) + "Content-Length: " + std::to_string(body.size()) +
                           "\r\nContent-Length: " + std::to_string(body.size() + second.size()) +
                           "\r\n\r\n" + body + second);
  ExpectOneRefusal(server, reply, 400, "one Content-Length");
}

TEST(AttackFramingTest, ContentLengthThatIsNotADecimalNumberIsRefused) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  const std::string body = R"({"id":"a"})";
  const std::string reply =
      Exchange(server, std::string(kHead) + "Content-Length: +" + std::to_string(body.size()) +
                           "\r\n\r\n" + body + Smuggled("smuggled"));
  // libmicrohttpd refuses this one itself, before our code sees it, with
  // its own HTML 400 (whose header block it sends twice); what matters is
  // that the bytes after it are never answered as a request.
  EXPECT_EQ(StatusOf(reply), 400) << reply.substr(0, 400);
  EXPECT_EQ(reply.find("HTTP/1.1 201"), std::string::npos) << reply;
  EXPECT_EQ(SessionCount(server), 0u);
  EXPECT_TRUE(Healthy(server));
}

TEST(AttackFramingTest, SpaceBeforeTheColonIsRefusedNotReadAsAnotherHeader) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  // Read as a header named "Transfer-Encoding " the body would be empty and
  // the chunks a second request; a proxy that trims the name reads one.
  const std::string reply =
      Exchange(server, std::string(kHead) + "Transfer-Encoding : chunked\r\n\r\n" +
                           "b\r\n{\"id\":\"a\"}\r\n0\r\n\r\n" + Smuggled("smuggled"));
  ExpectOneRefusal(server, reply, 400, "is not a token");
}

TEST(AttackFramingTest, ATransferCodingOtherThanChunkedIsRefused) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  for (const char* coding : {"gzip, chunked", "chunked, chunked", "identity"}) {
    const std::string reply =
        Exchange(server, std::string(kHead) + "Transfer-Encoding: " + coding + "\r\n\r\n" +
                             "b\r\n{\"id\":\"a\"}\r\n0\r\n\r\n" + Smuggled("smuggled"));
    ExpectOneRefusal(server, reply, 400, "Transfer-Encoding");
  }
}

TEST(AttackFramingTest, AHundredKilobyteChunkExtensionGets400Not500) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  RawSocket s(server.port());
  ASSERT_TRUE(s.ok());
  timeval timeout{5, 0};
  setsockopt(s.fd(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  s.Send(std::string(kHead) + "Transfer-Encoding: chunked\r\n\r\n" + "b;ext=" +
         std::string(100 * 1024, 'x') + "\r\n{\"id\":\"a\"}\r\n0\r\n\r\n" + Smuggled("smuggled"));
  const std::string reply = s.ReadAll(10);
  ExpectOneRefusal(server, reply, 400, "chunked body");
}

TEST(AttackFramingTest, AChunkedBodyFarPastMaxBodyGets413BeforeTheConnectionIsCut) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {"--max-body", "1MiB"});
  ASSERT_TRUE(server.listening()) << server.log();
  RawSocket s(server.port());
  ASSERT_TRUE(s.ok());
  // A client that sends 64 MiB without pausing to read: the server stops
  // reading long before the end, and the 413 must be waiting for it.
  std::atomic<bool> stopped{false};
  std::thread sender([&] {
    timeval timeout{5, 0};
    setsockopt(s.fd(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    if (!s.Send(std::string(kHead) + "Transfer-Encoding: chunked\r\n\r\n")) return;
    const std::string chunk = "10000\r\n" + std::string(0x10000, 'a') + "\r\n";
    for (int i = 0; i < 1024 && !stopped; ++i) {
      if (!s.Send(chunk)) break;
    }
  });
  const std::string reply = s.ReadAll(20);
  stopped = true;
  sender.join();
  EXPECT_EQ(StatusOf(reply), 413) << reply.substr(0, 400);
  EXPECT_EQ(Answers(reply), 1) << reply.substr(0, 400);
  EXPECT_EQ(json::parse(BodyOf(reply), nullptr, false)["error"]["code"], "payload_too_large");
  EXPECT_EQ(SessionCount(server), 0u);
  EXPECT_TRUE(Healthy(server));
}

TEST(AttackFramingTest, WellFramedRequestsOnOneConnectionAreAllAnswered) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {});
  ASSERT_TRUE(server.listening()) << server.log();
  // The checks refuse ambiguity, not keep-alive: a chunked request and then
  // a Content-Length one on the same connection are both served.
  RawSocket s(server.port());
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s.Send(std::string(kHead) + "Transfer-Encoding: chunked\r\n\r\n" +
                     "b\r\n{\"id\":\"a\"}\r\n0\r\n\r\n" + Smuggled("b") + "GET /v1/health " +
                     "HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  const std::string reply = s.ReadAll(10);
  EXPECT_EQ(Answers(reply), 3) << reply;
  EXPECT_EQ(StatusOf(reply), 201) << reply;
  EXPECT_EQ(SessionCount(server), 2u);
}

}  // namespace
}  // namespace sessiondb::testing
