// Forgetting over HTTP against the real `sessiondb serve`: DELETE to the
// trash or erased, the trash routes, erasure and its check, the ledger, the
// retention policy and its runs, serve's own schedule, and hostile requests
// that change nothing while the server goes on serving.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kJson = "application/json";

class ForgetHttpTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }

  void Start(const std::vector<std::string>& args) {
    client_.reset();
    server_.reset();
    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"), args);
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
  }

  std::string NewSession(const json& body = json::object()) {
    auto r = client_->Post("/v1/sessions", body.dump(), kJson);
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    return Body(r).value("id", "");
  }
  void Say(const std::string& id, const std::string& text) {
    json m = {{"role", "user"}, {"parts", json::array({{{"type", "text"}, {"text", text}}})}};
    auto r = client_->Post("/v1/sessions/" + id + "/messages", m.dump(), kJson);
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  }
  // What a refused request must leave alone.
  json State() {
    return {{"sessions", Body(client_->Get("/v1/sessions?archived=all&limit=1000"))},
            {"trash", Body(client_->Get("/v1/trash?limit=1000"))},
            {"ledger", Body(client_->Get("/v1/ledger"))},
            {"policy", Body(client_->Get("/v1/retention"))}};
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ForgetHttpTest, DeleteTrashesAndTheTrashRestoresAndErases) {
  const std::string a = NewSession({{"title", "alpha"}});
  const std::string b = NewSession();
  Say(a, "hello");

  auto trashed = client_->Delete("/v1/sessions/" + a);
  ASSERT_EQ(trashed->status, 200) << trashed->body;
  EXPECT_EQ(Body(trashed), (json{{"trashed", a}}));
  EXPECT_EQ(client_->Get("/v1/sessions/" + a)->status, 404);
  EXPECT_EQ(client_->Delete("/v1/sessions/" + a)->status, 404);  // already in the trash

  json trash = Body(client_->Get("/v1/trash"));
  ASSERT_EQ(trash["sessions"].size(), 1u) << trash;
  const json& t = trash["sessions"][0];
  EXPECT_EQ(t["id"], a);
  EXPECT_EQ(t["title"], "alpha");
  EXPECT_EQ(t["message_count"], 1);
  EXPECT_GT(t["trashed_ms"].get<int64_t>(), 0);
  EXPECT_TRUE(t["trashed"].get<std::string>().ends_with("Z"));
  EXPECT_EQ(trash["next_cursor"], "");

  auto restored = client_->Post("/v1/trash/" + a + "/restore", "", kJson);
  ASSERT_EQ(restored->status, 200) << restored->body;
  EXPECT_EQ(Body(restored)["id"], a);
  EXPECT_EQ(Body(restored)["message_count"], 1);
  EXPECT_EQ(client_->Get("/v1/sessions/" + a)->status, 200);
  EXPECT_EQ(client_->Post("/v1/trash/" + a + "/restore", "", kJson)->status, 404);

  // DELETE /v1/trash/{id} erases only what is in the trash.
  EXPECT_EQ(client_->Delete("/v1/trash/" + b)->status, 404);
  EXPECT_EQ(client_->Get("/v1/sessions/" + b)->status, 200);
  ASSERT_EQ(client_->Delete("/v1/sessions/" + b)->status, 200);
  auto erased = client_->Delete("/v1/trash/" + b);
  ASSERT_EQ(erased->status, 200) << erased->body;
  EXPECT_EQ(Body(erased)["sessions"], json::array({b}));
  EXPECT_TRUE(Body(client_->Get("/v1/trash"))["sessions"].empty());

  // ?erase=true skips the trash, and the receipt checks.
  auto at_once = client_->Delete("/v1/sessions/" + a + "?erase=true");
  ASSERT_EQ(at_once->status, 200) << at_once->body;
  json receipt = Body(at_once);
  EXPECT_EQ(receipt["sessions"], json::array({a}));
  auto verified = client_->Post("/v1/erase/verify", receipt.dump(), kJson);
  ASSERT_EQ(verified->status, 200) << verified->body;
  EXPECT_EQ(Body(verified)["erased"], true);
  EXPECT_EQ(Body(verified)["digest_ok"], true);
  EXPECT_TRUE(Body(verified)["problems"].empty());
  EXPECT_GT(Body(verified)["checks"].get<int64_t>(), 0);

  receipt["scope"] = "something else";
  json tampered = Body(client_->Post("/v1/erase/verify", receipt.dump(), kJson));
  EXPECT_EQ(tampered["digest_ok"], false);
  EXPECT_EQ(tampered["erased"], false);
  EXPECT_EQ(client_->Delete("/v1/sessions/" + a + "?erase=maybe")->status, 400);
}

TEST_F(ForgetHttpTest, EmptyTrashKeepsWhatIsInsideTheGraceUnlessAskedForAll) {
  const std::string a = NewSession();
  ASSERT_EQ(client_->Delete("/v1/sessions/" + a)->status, 200);
  auto kept = client_->Post("/v1/trash/empty", "{}", kJson);
  ASSERT_EQ(kept->status, 200) << kept->body;
  EXPECT_TRUE(Body(kept)["sessions"].empty());
  EXPECT_EQ(Body(client_->Get("/v1/trash"))["sessions"].size(), 1u);
  auto all = client_->Post("/v1/trash/empty", R"({"older_than_days":0})", kJson);
  ASSERT_EQ(all->status, 200) << all->body;
  EXPECT_EQ(Body(all)["sessions"], json::array({a}));
  EXPECT_TRUE(Body(client_->Get("/v1/trash"))["sessions"].empty());
}

TEST_F(ForgetHttpTest, EraseTakesSessionsAndMessagesAndTheLedgerRecordsIt) {
  const std::string a = NewSession();
  const std::string b = NewSession();
  Say(b, "keep this");
  Say(b, "forget this secret");
  auto erased = client_->Post(
      "/v1/erase",
      json{{"session_ids", {a}}, {"messages", {{{"session_id", b}, {"seq", 2}}}}, {"reason", "t"}}
          .dump(),
      kJson);
  ASSERT_EQ(erased->status, 200) << erased->body;
  json receipt = Body(erased);
  EXPECT_EQ(receipt["sessions"], json::array({a}));
  EXPECT_EQ(client_->Get("/v1/sessions/" + a)->status, 404);
  const std::string messages = client_->Get("/v1/sessions/" + b + "/messages")->body;
  EXPECT_EQ(messages.find("secret"), std::string::npos) << messages;
  EXPECT_NE(messages.find("keep this"), std::string::npos) << messages;

  json ledger = Body(client_->Get("/v1/ledger?limit=1"));
  ASSERT_EQ(ledger["entries"].size(), 1u);
  const json& e = ledger["entries"][0];
  EXPECT_EQ(e["action"], "erase");
  EXPECT_EQ(e["receipt_id"], receipt["id"]);
  EXPECT_EQ(e["receipt_digest"], receipt["digest"]);
  EXPECT_TRUE(e["ts"].get<std::string>().ends_with("Z"));
  EXPECT_TRUE(e["counts"].is_object());
  json older = Body(client_->Get("/v1/ledger?before_id=" + std::to_string(e["id"].get<int64_t>())));
  for (const json& o : older["entries"]) EXPECT_LT(o["id"], e["id"]);
}

TEST_F(ForgetHttpTest, ThePolicyIsSetShownAndRunDryOrForReal) {
  EXPECT_EQ(Body(client_->Get("/v1/retention")),
            (json{{"trash_grace_days", 30}, {"rules", json::array()}}));
  for (int i = 0; i < 3; ++i) NewSession();
  const json policy = {{"trash_grace_days", 7},
                       {"rules",
                        {{{"project", ""},
                          {"trash_after_idle_days", 0},
                          {"keep_newest", 2},
                          {"archive_after_idle_days", 0},
                          {"erase_archived_after_idle_days", 0}}}}};
  auto put = client_->Put("/v1/retention", policy.dump(), kJson);
  ASSERT_EQ(put->status, 200) << put->body;
  EXPECT_EQ(Body(put), policy);
  EXPECT_EQ(Body(client_->Get("/v1/retention")), policy);

  const json before = State();
  auto dry = client_->Post("/v1/retention/run", R"({"dry_run":true})", kJson);
  ASSERT_EQ(dry->status, 200) << dry->body;
  json d = Body(dry);
  EXPECT_EQ(d["dry_run"], true);
  EXPECT_EQ(d["trashed"].size(), 1u);
  EXPECT_EQ(d["ledger_id"], 0);
  for (const char* key : {"archived", "erased", "kept_for_forks", "receipt_id"}) {
    EXPECT_TRUE(d.contains(key)) << key;
  }
  EXPECT_EQ(State(), before);
  // An empty body is a dry run too.
  EXPECT_EQ(Body(client_->Post("/v1/retention/run", "", kJson))["dry_run"], true);
  EXPECT_EQ(State(), before);

  auto real = client_->Post("/v1/retention/run", R"({"dry_run":false})", kJson);
  ASSERT_EQ(real->status, 200) << real->body;
  json r = Body(real);
  EXPECT_EQ(r["trashed"], d["trashed"]);
  EXPECT_GT(r["ledger_id"].get<int64_t>(), 0);
  EXPECT_EQ(Body(client_->Get("/v1/trash"))["sessions"][0]["id"], r["trashed"][0]);
  json entry = Body(client_->Get("/v1/ledger?limit=1"))["entries"][0];
  EXPECT_EQ(entry["action"], "retain");
  EXPECT_EQ(entry["actor"], "policy");
  EXPECT_EQ(entry["id"], r["ledger_id"]);
}

TEST_F(ForgetHttpTest, HostileRequestsAreRefusedChangeNothingAndTheServerGoesOn) {
  Start({"--max-body", "1MiB"});
  const std::string a = NewSession();
  Say(a, "precious");
  ASSERT_EQ(client_->Put("/v1/retention", R"({"trash_grace_days":9})", kJson)->status, 200);
  const json before = State();
  struct Case {
    std::string method, path, body;
    int status;
  };
  const std::string huge_ids = [] {
    std::string s = R"({"session_ids":[)";
    for (int i = 0; i < 300000; ++i) s += R"("no-such-session-id-padding-padding",)";
    return s + R"("x"]})";
  }();
  for (const Case& c : std::vector<Case>{
           {"DELETE", "/v1/sessions/no-such-session", "", 404},
           {"DELETE", "/v1/sessions/no-such-session?erase=true", "", 404},
           {"POST", "/v1/trash/no-such-session/restore", "", 404},
           {"DELETE", "/v1/trash/no-such-session", "", 404},
           {"POST", "/v1/erase", R"({"session_ids":["no-such-session"]})", 404},
           {"POST", "/v1/erase", "{}", 400},
           {"POST", "/v1/erase", R"({"session_ids":"all"})", 400},
           {"POST", "/v1/erase", R"({"session_ids":[1]})", 400},
           {"POST", "/v1/erase", R"({"everything":"yes"})", 400},
           {"POST", "/v1/erase", R"({"before":"last tuesday"})", 400},
           {"POST", "/v1/erase", R"({"messages":[{"session_id":1,"seq":"x"}]})", 400},
           {"POST", "/v1/erase", R"({"delete_everything":true})", 400},
           {"POST", "/v1/erase", "[1,2]", 400},
           {"POST", "/v1/erase", "{not json", 400},
           {"POST", "/v1/erase", huge_ids, 413},
           {"POST", "/v1/erase/verify", "{}", 400},
           {"POST", "/v1/erase/verify", "not a receipt", 400},
           {"POST", "/v1/trash/empty", R"({"older_than_days":-1})", 400},
           {"POST", "/v1/trash/empty", R"({"older_than_days":"soon"})", 400},
           {"POST", "/v1/trash/empty", R"({"everything":true})", 400},
           {"PUT", "/v1/retention", R"({"trash_grace_days":-1})", 400},
           {"PUT", "/v1/retention", R"({"trash_grace_days":"30"})", 400},
           {"PUT", "/v1/retention", R"({"rules":{}})", 400},
           {"PUT", "/v1/retention", R"({"rules":[{"keep_newest":-5}]})", 400},
           {"PUT", "/v1/retention", R"({"rules":[{"project":"/a"},{"project":"/a/"}]})", 400},
           {"PUT", "/v1/retention", R"({"rules":[{"pinned":true}]})", 400},
           {"POST", "/v1/retention/run", R"({"dry_run":"no"})", 400},
           {"POST", "/v1/retention/run", R"({"apply":true})", 400},
           {"GET", "/v1/ledger?limit=0", "", 400},
           {"GET", "/v1/ledger?before_id=-1", "", 400},
           {"GET", "/v1/trash?limit=5000", "", 400},
       }) {
    httplib::Result r = c.method == "GET"      ? client_->Get(c.path)
                        : c.method == "DELETE" ? client_->Delete(c.path)
                        : c.method == "PUT"    ? client_->Put(c.path, c.body, kJson)
                                               : client_->Post(c.path, c.body, kJson);
    ASSERT_TRUE(r) << c.method << " " << c.path << ": no answer";
    EXPECT_EQ(r->status, c.status)
        << c.method << " " << c.path << " " << c.body.substr(0, 80) << ": " << r->body;
    EXPECT_FALSE(ErrorCode(r).empty()) << r->body;
  }
  EXPECT_EQ(State(), before);
  EXPECT_EQ(client_->Get("/v1/health")->status, 200);
}

TEST_F(ForgetHttpTest, ServeAppliesThePolicyOnItsOwnAndRecordsTheRun) {
  for (int i = 0; i < 3; ++i) NewSession();
  ASSERT_EQ(client_->Put("/v1/retention", R"({"rules":[{"keep_newest":1}]})", kJson)->status, 200);
  Start({"--retain-every", "60"});  // a run as it starts, then hourly
  json entries;
  for (int tries = 0; tries < 100; ++tries) {
    entries = Body(client_->Get("/v1/ledger"))["entries"];
    if (!entries.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(entries.size(), 1u) << server_->log();
  EXPECT_EQ(entries[0]["action"], "retain");
  EXPECT_EQ(entries[0]["actor"], "policy");
  EXPECT_EQ(entries[0]["counts"]["trashed"], 2);
  EXPECT_EQ(Body(client_->Get("/v1/sessions"))["sessions"].size(), 1u);
  EXPECT_EQ(Body(client_->Get("/v1/trash"))["sessions"].size(), 2u);
}

TEST_F(ForgetHttpTest, ARetainEveryThatIsNotAWholeNumberStopsServeWithExit2) {
  client_.reset();
  server_.reset();
  for (const char* bad : {"-5", "1.5", "0x10", "600000"}) {
    ServerProcess refused(dir_.Sub("store"), {"--retain-every", bad});
    EXPECT_FALSE(refused.listening()) << bad;
    EXPECT_EQ(refused.exit_code(), 2) << bad << ": " << refused.log();
  }
}

}  // namespace
}  // namespace sessiondb::testing
