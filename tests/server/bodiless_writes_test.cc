// Writes sent with no body at all (`curl -X POST .../v1/gc`), and wrong
// methods, against the real `sessiondb serve`: an absent body means {} on the
// routes whose fields are all optional, names the missing field on the others,
// and the cross-site and size checks still refuse what a web page or a flood
// could send. A wrong method on a known path is 405 with Allow.
#include <string>

#include "server/raw_http.h"
#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kJson = "application/json";

class BodilessWritesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"),
                                              std::vector<std::string>{"--max-body", "4KiB"});
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
    ASSERT_EQ(client_->Post("/v1/sessions", R"({"id":"s","title":"kept"})", kJson)->status, 201);
    json m = {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", "hi"}}})}};
    ASSERT_EQ(client_->Post("/v1/sessions/s/messages", m.dump(), kJson)->status, 201);
    ASSERT_EQ(client_->Post("/v1/sessions", R"({"id":"old"})", kJson)->status, 201);
    ASSERT_EQ(client_->Patch("/v1/sessions/old", R"({"archived":true})", kJson)->status, 200);
    ASSERT_EQ(client_->Put("/v1/active", R"({"session_id":"s"})", kJson)->status, 200);
  }

  // Sends `head` (request line and headers, without the blank line) raw.
  std::string Raw(const std::string& head, const std::string& body = "") {
    RawSocket s(server_->port());
    EXPECT_TRUE(s.Send(head + "Host: 127.0.0.1\r\nConnection: close\r\n\r\n" + body));
    return s.ReadAll(10);
  }
  int SessionCount() {
    return static_cast<int>(Body(client_->Get("/v1/sessions?archived=all"))["sessions"].size());
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(BodilessWritesTest, HousekeepingPostsWorkWithNoBodyAndNoContentType) {
  // No Content-Length at all, as `curl -X POST` sends it.
  const std::string gc = Raw("POST /v1/gc?dry_run=1 HTTP/1.1\r\n");
  EXPECT_EQ(StatusOf(gc), 200) << gc;
  EXPECT_TRUE(json::parse(BodyOf(gc), nullptr, false).is_object()) << gc;
  // Content-Length: 0, as cpp-httplib (and curl -d '') sends it.
  auto verify = client_->Post("/v1/verify");
  ASSERT_TRUE(verify);
  EXPECT_EQ(verify->status, 200) << verify->body;
  EXPECT_EQ(Body(verify)["clean"], true);
  auto purge = client_->Post("/v1/purge?older_than_days=0");
  ASSERT_TRUE(purge);
  EXPECT_EQ(purge->status, 200) << purge->body;
  EXPECT_EQ(Body(purge)["sessions_deleted"], 1);
  EXPECT_EQ(client_->Get("/v1/sessions/old")->status, 404);
}

TEST_F(BodilessWritesTest, RoutesWhoseFieldsAreOptionalTakeNoBodyAsEmptyObject) {
  auto created = client_->Post("/v1/sessions");
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201) << created->body;
  EXPECT_FALSE(Body(created).value("id", "").empty());

  auto draft = client_->Post("/v1/sessions/s/drafts");
  ASSERT_TRUE(draft);
  ASSERT_EQ(draft->status, 201) << draft->body;
  EXPECT_EQ(Body(draft)["role"], "assistant");

  auto exported = client_->Post("/v1/export");
  ASSERT_TRUE(exported);
  EXPECT_EQ(exported->status, 200) << exported->body;
  EXPECT_NE(exported->body.find("\"kept\""), std::string::npos);
}

TEST_F(BodilessWritesTest, RoutesThatNeedFieldsNameThemAndChangeNothing) {
  auto fork = client_->Post("/v1/sessions/s/fork");
  ASSERT_TRUE(fork);
  EXPECT_EQ(fork->status, 400);
  EXPECT_NE(Body(fork)["error"]["message"].get<std::string>().find("at_seq"), std::string::npos);

  // {} must not clear the active session: that takes an explicit "".
  auto active = client_->Put("/v1/active", "", "");
  ASSERT_TRUE(active);
  EXPECT_EQ(active->status, 400) << active->body;
  EXPECT_EQ(Body(client_->Get("/v1/active"))["session_id"], "s");

  auto patch = client_->Patch("/v1/sessions/s", "", "");
  ASSERT_TRUE(patch);
  EXPECT_EQ(patch->status, 400);
  EXPECT_EQ(Body(client_->Get("/v1/sessions/s"))["title"], "kept");
  EXPECT_EQ(SessionCount(), 2);
}

TEST_F(BodilessWritesTest, WhatAWebPageCanSendIsStillRefused) {
  // An empty form or text/plain POST is what a cross-site <form> sends.
  EXPECT_EQ(
      client_->Post("/v1/purge?older_than_days=0", "", "application/x-www-form-urlencoded")->status,
      415);
  EXPECT_EQ(client_->Post("/v1/sessions", "", "text/plain")->status, 415);
  // A JSON body labelled as something else.
  auto mislabelled = client_->Post("/v1/sessions", R"({"id":"evil"})", "text/plain");
  EXPECT_EQ(mislabelled->status, 415);
  EXPECT_EQ(ErrorCode(mislabelled), "unsupported_media_type");
  // A body with no Content-Type at all is not "no body".
  EXPECT_EQ(
      StatusOf(Raw("POST /v1/sessions HTTP/1.1\r\nContent-Length: 13\r\n", R"({"id":"evil"})")),
      415);
  // No body and no type, but the browser says another site sent it.
  EXPECT_EQ(StatusOf(Raw("POST /v1/purge?older_than_days=0 HTTP/1.1\r\n"
                         "Sec-Fetch-Site: cross-site\r\n")),
            415);
  // ... or its Origin is not this server.
  EXPECT_EQ(StatusOf(Raw("POST /v1/purge?older_than_days=0 HTTP/1.1\r\n"
                         "Origin: http://evil.example\r\n")),
            403);
  EXPECT_EQ(Body(client_->Get("/v1/sessions/old"))["archived"], true);
  EXPECT_EQ(client_->Get("/v1/sessions/evil")->status, 404);
  EXPECT_EQ(SessionCount(), 2);
}

TEST_F(BodilessWritesTest, BodiesOverTheCapAreStillRefusedWhateverTheirLabel) {
  const std::string big(8 * 1024, ' ');
  auto typed = client_->Post("/v1/sessions", "{" + big + "}", kJson);
  ASSERT_TRUE(typed);
  EXPECT_EQ(typed->status, 413);
  // Announced and never sent: refused before any of it is read, 413 when
  // labelled JSON, 415 when unlabelled (the cross-site check comes first).
  EXPECT_EQ(StatusOf(Raw("POST /v1/sessions HTTP/1.1\r\nContent-Type: application/json\r\n"
                         "Content-Length: 999999999\r\n")),
            413);
  EXPECT_EQ(StatusOf(Raw("POST /v1/gc HTTP/1.1\r\nContent-Length: 999999999\r\n")), 415);
  EXPECT_EQ(SessionCount(), 2);
}

TEST_F(BodilessWritesTest, AWrongMethodOnAKnownPathIs405WithAllow) {
  auto health = client_->Delete("/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 405);
  EXPECT_EQ(health->get_header_value("Allow"), "GET");
  EXPECT_EQ(ErrorCode(health), "method_not_allowed");

  // Bodiless POSTs now reach the router, which names the methods.
  auto search = client_->Post("/v1/search");
  ASSERT_TRUE(search);
  EXPECT_EQ(search->status, 405);
  EXPECT_EQ(search->get_header_value("Allow"), "GET");

  auto session = client_->Put("/v1/sessions/s", "{}", kJson);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->status, 405);
  EXPECT_EQ(session->get_header_value("Allow"), "GET, PATCH, DELETE");

  auto page = client_->Post("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 405);
  EXPECT_EQ(page->get_header_value("Allow"), "GET, HEAD");

  // An unknown path stays 404, whatever the method.
  EXPECT_EQ(client_->Post("/v1/nothing-here")->status, 404);
  EXPECT_EQ(client_->Post("/nothing-here")->status, 404);
}

}  // namespace
}  // namespace sessiondb::testing
