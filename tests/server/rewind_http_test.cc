// POST /v1/sessions/{id}/rewind against the real `sessiondb serve` process:
// the message list, the last N and the projection read the session's view,
// the events route the whole log; every hostile body is refused and writes
// nothing.
#include <csignal>
#include <string>

#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kJson = "application/json";

class RewindHttpTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> args = {}) {
    // A body past --max-body is refused before it is all sent; the server
    // then closes, and the client's next write must fail with EPIPE, not
    // kill this process with SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"), std::move(args));
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
  }

  // A session "s" with three user messages: "first", "second", "third".
  void ThreeMessages() {
    ASSERT_EQ(client_->Post("/v1/sessions", R"({"id":"s"})", kJson)->status, 201);
    for (const char* text : {"first", "second", "third"}) {
      json m = {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", text}}})}};
      ASSERT_EQ(client_->Post("/v1/sessions/s/messages", m.dump(), kJson)->status, 201);
    }
  }

  std::vector<int64_t> MessageSeqs(const std::string& query = "") {
    std::vector<int64_t> out;
    json body = Body(client_->Get("/v1/sessions/s/messages" + query));
    for (const json& m : body["messages"]) out.push_back(m["seq"].get<int64_t>());
    return out;
  }

  size_t EventCount() { return Body(client_->Get("/v1/sessions/s/events"))["events"].size(); }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(RewindHttpTest, ARewindEndsTheViewThatTheMessagesAndProjectionRead) {
  Start();
  ThreeMessages();
  auto r = client_->Post("/v1/sessions/s/rewind", R"({"to_seq":1})", kJson);
  ASSERT_EQ(r->status, 201) << r->body;
  json event = Body(r);
  EXPECT_EQ(event["type"], "rewind");
  EXPECT_EQ(event["seq"], 4);
  EXPECT_EQ(event["rewind"]["to_seq"], 1);

  EXPECT_EQ(MessageSeqs(), (std::vector<int64_t>{1}));
  EXPECT_EQ(MessageSeqs("?last=5"), (std::vector<int64_t>{1}));
  EXPECT_EQ(Body(client_->Get("/v1/sessions/s"))["message_count"], 1);
  const std::string projection = client_->Get("/v1/sessions/s/projection")->body;
  EXPECT_NE(projection.find("first"), std::string::npos) << projection;
  EXPECT_EQ(projection.find("third"), std::string::npos) << projection;

  // The log keeps everything, the rewind included.
  json events = Body(client_->Get("/v1/sessions/s/events"))["events"];
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[2]["message"]["parts"][0]["text"], "third");
  EXPECT_EQ(events[3]["type"], "rewind");

  json m = {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", "again"}}})}};
  ASSERT_EQ(client_->Post("/v1/sessions/s/messages", m.dump(), kJson)->status, 201);
  EXPECT_EQ(MessageSeqs(), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(MessageSeqs("?last=1"), (std::vector<int64_t>{5}));
}

TEST_F(RewindHttpTest, HostileBodiesAreRefusedAndWriteNothing) {
  Start({"--max-body", "1MiB"});
  ThreeMessages();
  struct Case {
    std::string body;
    const char* content_type;
    int status;
  };
  const std::vector<Case> cases = {
      {R"({"to_seq":-1})", kJson, 400},
      {R"({"to_seq":4})", kJson, 400},                     // past the end
      {R"({"to_seq":9223372036854775807})", kJson, 400},   // far past it
      {R"({"to_seq":18446744073709551615})", kJson, 400},  // wraps to -1 as int64
      {R"({"to_seq":"1"})", kJson, 400},
      {R"({"to_seq":1.5})", kJson, 400},
      {R"({"to_seq":null})", kJson, 400},
      {R"({})", kJson, 400},
      {R"([1])", kJson, 400},
      {"", kJson, 400},
      {"{\"to_seq\":", kJson, 400},
      {R"({"to_seq":1})", "text/plain", 415},
      {"{\"to_seq\":1,\"pad\":\"" + std::string(2 * 1024 * 1024, 'x') + "\"}", kJson, 413},
  };
  for (const Case& c : cases) {
    auto r = client_->Post("/v1/sessions/s/rewind", c.body, c.content_type);
    if (!r && c.status == 413) continue;  // the server may close before the client reads its 413
    ASSERT_TRUE(r) << c.body.substr(0, 40);
    EXPECT_EQ(r->status, c.status) << c.body.substr(0, 40) << " -> " << r->body.substr(0, 200);
  }
  auto unknown = client_->Post("/v1/sessions/nope/rewind", R"({"to_seq":0})", kJson);
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  EXPECT_EQ(client_->Get("/v1/sessions/s/rewind")->status, 405);

  EXPECT_EQ(EventCount(), 3u);
  EXPECT_EQ(MessageSeqs(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Body(client_->Get("/v1/sessions/s"))["last_seq"], 3);
}

}  // namespace
}  // namespace sessiondb::testing
