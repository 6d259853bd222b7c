// Cross-site writes and DNS rebinding against the real `sessiondb serve`
// (loopback, no token): what a web page in the user's browser can send
// without a CORS preflight (text/plain, form and multipart POSTs, no
// Content-Type at all), writes from a foreign Origin, and any request whose
// Host is not the server's. Each is refused before its handler runs, the
// store is unchanged, and a proper request still works.
#include <string>

#include "server/raw_http.h"
#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kJson = "application/json";
constexpr const char* kForm = "application/x-www-form-urlencoded";

class AttackCrossSiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"), std::vector<std::string>{});
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
    // One live session with two messages and one archived session.
    ASSERT_EQ(client_->Post("/v1/sessions", R"({"id":"live"})", kJson)->status, 201);
    for (const char* text : {"one", "two"}) {
      json m = {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", text}}})}};
      ASSERT_EQ(client_->Post("/v1/sessions/live/messages", m.dump(), kJson)->status, 201);
    }
    ASSERT_EQ(client_->Post("/v1/sessions", R"({"id":"old"})", kJson)->status, 201);
    ASSERT_EQ(client_->Patch("/v1/sessions/old", R"({"archived":true})", kJson)->status, 200);
    ASSERT_EQ(client_
                  ->Post("/v1/sessions/live/compactions",
                         R"({"from_seq":1,"to_seq":1,"summary":"s"})", kJson)
                  ->status,
              201);
    before_ = Snapshot();
  }

  // Everything a refused write could have changed.
  json Snapshot() {
    return {Body(client_->Get("/v1/sessions?archived=all")),
            Body(client_->Get("/v1/sessions/live/messages")), Body(client_->Get("/v1/stats"))};
  }
  void ExpectUnchangedAndServing() {
    EXPECT_EQ(Snapshot(), before_);
    auto ok = client_->Post("/v1/sessions", R"({"id":"after"})", kJson);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 201) << ok->body;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
  json before_;
};

TEST_F(AttackCrossSiteTest, TextPlainCreateIsRefusedWith415) {
  auto r = client_->Post("/v1/sessions", R"({"id":"evil","title":"x"})", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  EXPECT_EQ(ErrorCode(r), "unsupported_media_type");
  ExpectUnchangedAndServing();
}

TEST_F(AttackCrossSiteTest, FormPurgeIsRefusedAndArchivedSessionsSurvive) {
  auto form = client_->Post("/v1/purge?older_than_days=0", "", kForm);
  EXPECT_EQ(form->status, 415);
  // No Content-Type at all (fetch with mode: "no-cors" and no body), as a
  // browser sends it: with its Origin and Fetch Metadata. (Without them it is
  // `curl -X POST`, which is allowed: bodiless_writes_test.cc.)
  RawSocket s(server_->port());
  ASSERT_TRUE(
      s.Send("POST /v1/purge?older_than_days=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Origin: https://evil.example\r\nSec-Fetch-Site: cross-site\r\n"
             "Content-Length: 0\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(StatusOf(s.ReadAll(10)), 403);
  EXPECT_EQ(Body(client_->Get("/v1/sessions/old"))["archived"], true);
  ExpectUnchangedAndServing();
}

TEST_F(AttackCrossSiteTest, FormGcAndPruneAreRefused) {
  EXPECT_EQ(client_->Post("/v1/gc?grace_minutes=0", "a=b", kForm)->status, 415);
  EXPECT_EQ(client_->Post("/v1/sessions/live/compactions/3/prune", "", "text/plain")->status, 415);
  ExpectUnchangedAndServing();
}

TEST_F(AttackCrossSiteTest, MultipartImportNeedsTheRequestHeader) {
  const std::string snapshot = client_->Get("/v1/sessions/live/export")->body;
  TempDir other_dir;
  ServerProcess other(other_dir.Sub("store"), {});
  ASSERT_TRUE(other.listening()) << other.log();
  auto c = other.Client();
  httplib::MultipartFormDataItems items = {{"file", snapshot, "live.json", "application/json"}};
  auto refused = c->Post("/v1/import", items);
  EXPECT_EQ(refused->status, 415);
  auto plain = c->Post("/v1/import", snapshot, "text/plain");
  EXPECT_EQ(plain->status, 415);
  EXPECT_EQ(Body(c->Get("/v1/sessions?archived=all"))["sessions"].size(), 0u);
  // With the header a page cannot send cross-site without a preflight.
  auto allowed = c->Post("/v1/import", {{"X-Sessiondb-Request", "1"}}, snapshot, "text/plain");
  EXPECT_EQ(allowed->status, 200) << allowed->body;
  EXPECT_EQ(Body(c->Get("/v1/sessions?archived=all"))["sessions"].size(), 1u);
  auto multipart = c->Post("/v1/import", {{"X-Sessiondb-Request", "1"}}, items);
  EXPECT_EQ(multipart->status, 200) << multipart->body;
  EXPECT_EQ(Body(multipart)["sessions_unchanged"], 1);
}

TEST_F(AttackCrossSiteTest, WritesFromAForeignOriginAreRefusedEvenAsJson) {
  auto r =
      client_->Post("/v1/sessions", {{"Origin", "http://evil.example"}}, R"({"id":"evil"})", kJson);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(ErrorCode(r), "permission_denied");
  auto del = client_->Delete("/v1/sessions/old", {{"Origin", "null"}});
  EXPECT_EQ(del->status, 403);
  ExpectUnchangedAndServing();
  // The server's own page may write.
  const std::string own = "http://127.0.0.1:" + std::to_string(server_->port());
  EXPECT_EQ(client_->Post("/v1/sessions", {{"Origin", own}}, R"({"id":"page"})", kJson)->status,
            201);
}

TEST_F(AttackCrossSiteTest, AForeignHostIsRefusedForReadsAndThePage) {
  for (const char* path : {"/v1/sessions", "/v1/sessions/live/messages", "/"}) {
    RawSocket s(server_->port());
    ASSERT_TRUE(s.Send(std::string("GET ") + path +
                       " HTTP/1.1\r\nHost: evil.example:7411\r\nConnection: close\r\n\r\n"));
    const std::string answer = s.ReadAll(10);
    EXPECT_EQ(StatusOf(answer), 421) << path;
    EXPECT_EQ(answer.find("\"live\""), std::string::npos) << path;
    EXPECT_EQ(json::parse(BodyOf(answer), nullptr, false)["error"]["code"], "misdirected_request");
  }
  // A write with a foreign Host is refused before its body is read.
  RawSocket w(server_->port());
  ASSERT_TRUE(
      w.Send("POST /v1/purge?older_than_days=0 HTTP/1.1\r\nHost: evil.example\r\n"
             "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"));
  EXPECT_EQ(StatusOf(w.ReadAll(10)), 421);
  // Loopback names, with or without the port, are the server's own.
  for (const std::string& host :
       {std::string("localhost"), "127.0.0.1:" + std::to_string(server_->port()),
        std::string("[::1]:7411"), std::string("LOCALHOST.")}) {
    RawSocket s(server_->port());
    ASSERT_TRUE(
        s.Send("GET /v1/health HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n"));
    EXPECT_EQ(StatusOf(s.ReadAll(10)), 200) << host;
  }
  ExpectUnchangedAndServing();
}

TEST(AttackCrossSiteOptionsTest, AllowHostAddsANameForAReverseProxy) {
  TempDir dir;
  ServerProcess server(dir.Sub("store"), {"--allow-host", "chats.example"});
  ASSERT_TRUE(server.listening()) << server.log();
  auto c = server.Client();
  EXPECT_EQ(c->Get("/v1/health", {{"Host", "chats.example"}})->status, 200);
  EXPECT_EQ(c->Get("/v1/health", {{"Host", "other.example"}})->status, 421);
}

}  // namespace
}  // namespace sessiondb::testing
