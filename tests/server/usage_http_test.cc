// GET /v1/usage and the cost of GET /v1/sessions/{id}/usage against the real
// `sessiondb serve` process: the documented shapes, the prices of the
// shipped table and of a SESSIONDB_PRICES file, and hostile parameters
// refused with 400 and a message naming them.
#include <string>

#include "server/server_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kUsageJsonType = "application/json";

class UsageHttpTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> env = {}) {
    server_ = std::make_unique<ServerProcess>(dir_.Sub("store"), std::vector<std::string>{},
                                              std::move(env));
    ASSERT_TRUE(server_->listening()) << server_->log();
    client_ = server_->Client();
  }

  // Session `id` with one gpt-5 turn (1,000,000 input of which 200,000
  // cached, 100,000 output) and one turn of an unknown model.
  void AddSession(const std::string& id, const std::string& project) {
    json s = {{"id", id}, {"metadata", {{"project", project}}}};
    ASSERT_EQ(client_->Post("/v1/sessions", s.dump(), kUsageJsonType)->status, 201);
    json m = {{"role", "assistant"},
              {"parts", json::array({{{"type", "text"}, {"text", "ok"}}})},
              {"provider", "openai"},
              {"model", "gpt-5"},
              {"usage",
               {{"input_tokens", 1000000}, {"cached_tokens", 200000}, {"output_tokens", 100000}}}};
    ASSERT_EQ(client_->Post("/v1/sessions/" + id + "/messages", m.dump(), kUsageJsonType)->status,
              201);
    m["model"] = "in-house";
    ASSERT_EQ(client_->Post("/v1/sessions/" + id + "/messages", m.dump(), kUsageJsonType)->status,
              201);
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<httplib::Client> client_;
};

// gpt-5: 800,000 uncached at $1.25, 200,000 cached at $0.125, 100,000 output at $10.
constexpr double kGpt5Turn = 0.8 * 1.25 + 0.2 * 0.125 + 0.1 * 10;

TEST_F(UsageHttpTest, TheSummaryGroupsPricesAndCountsUnpricedTurns) {
  Start();
  AddSession("a", "/src/app");
  AddSession("b", "/src/web");
  auto r = client_->Get("/v1/usage?group=project,model");
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["currency"], "USD");
  EXPECT_EQ(j["group"], json::array({"project", "model"}));
  ASSERT_EQ(j["rows"].size(), 4u);
  const json& first = j["rows"][0];
  EXPECT_EQ(first["project"], "/src/app");
  EXPECT_EQ(first["model"], "gpt-5");
  EXPECT_FALSE(first.contains("day"));  // only the grouped keys
  EXPECT_EQ(first["turns"], 1);
  EXPECT_NEAR(first["cost_usd"].get<double>(), kGpt5Turn, 1e-9);
  EXPECT_EQ(j["rows"][1]["unpriced_turns"], 1);
  EXPECT_EQ(j["total"]["turns"], 4);
  EXPECT_EQ(j["total"]["unpriced_turns"], 2);
  EXPECT_EQ(j["total"]["cached_tokens"], 800000);
  EXPECT_NEAR(j["total"]["cost_usd"].get<double>(), 2 * kGpt5Turn, 1e-9);

  json only_b = json::parse(client_->Get("/v1/usage?session=b&project=/src/web")->body);
  EXPECT_EQ(only_b["rows"].size(), 0u);
  EXPECT_EQ(only_b["total"]["turns"], 2);

  json session = json::parse(client_->Get("/v1/sessions/a/usage?turns=1")->body);
  EXPECT_NEAR(session["cost_usd"].get<double>(), kGpt5Turn, 1e-9);
  EXPECT_EQ(session["unpriced_turns"], 1);
  ASSERT_EQ(session["per_turn"].size(), 2u);
  EXPECT_EQ(session["per_turn"][0]["seq"], 1);
  EXPECT_TRUE(session["per_turn"][1]["cost_usd"].is_null());
  EXPECT_FALSE(json::parse(client_->Get("/v1/sessions/a/usage")->body).contains("per_turn"));
}

TEST_F(UsageHttpTest, APriceFileInTheEnvironmentPricesWhatTheShippedTableCannot) {
  const std::string prices = dir_.Sub("prices.json");
  std::ofstream(prices) << R"([{"model": "in-house", "from": "2000-01-01", "input": 1,
                                "output": 1}])";
  Start({"SESSIONDB_PRICES=" + prices});
  AddSession("a", "/src/app");
  json j = json::parse(client_->Get("/v1/usage")->body);
  EXPECT_EQ(j["total"]["unpriced_turns"], 0);
  EXPECT_NEAR(j["total"]["cost_usd"].get<double>(), kGpt5Turn + 1.1, 1e-9);
}

TEST_F(UsageHttpTest, HostileParametersAreRefusedWithTheirName) {
  Start();
  AddSession("a", "/src/app");
  std::string many = "a";
  for (int i = 0; i < 500; ++i) many += ",a";
  const std::pair<std::string, std::string> cases[] = {
      {"/v1/usage?group=week", "week"},
      {"/v1/usage?group=day,day", "twice"},
      {"/v1/usage?since=2025-02-30", "since"},
      {"/v1/usage?until=tomorrow", "until"},
      {"/v1/usage?since=2025-03-02&until=2025-03-01", "after"},
      {"/v1/usage?session=" + many, "500"},
      {"/v1/sessions/a/usage?turns=maybe", "turns"},
  };
  for (const auto& [path, word] : cases) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 400) << path;
    EXPECT_NE(r->body.find(word), std::string::npos) << path << ": " << r->body;
  }
  EXPECT_EQ(client_->Get("/v1/sessions/nope/usage")->status, 404);
}

}  // namespace
}  // namespace sessiondb::testing
