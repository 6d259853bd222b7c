// `sessiondb usage` through the real binary (docs/usage.md): the summary
// table fits 80 columns and ends with a total line, --json has the HTTP
// API's shape, a session's report lists its turns priced, and bad groups,
// days and price files are refused with a message naming them.
#include "cli/cli_fixture.h"

namespace sessiondb::testing {
namespace {

class UsageCli : public Cli {
 protected:
  // A session of project /src/app with a gpt-5 turn (1,000,000 input, of
  // which 200,000 cached; 100,000 output) and a turn of an unknown model.
  std::string Spend() {
    std::string sid = NewSession({"--meta", "project=/src/app"});
    EXPECT_EQ(Sdb({"append", sid, "--role", "assistant", "a", "--provider", "openai", "--model",
                   "gpt-5", "--tokens", "1000000,100000,200000"})
                  .exit_code,
              0);
    EXPECT_EQ(
        Sdb({"append", sid, "--role", "assistant", "b", "--model", "in-house", "--tokens", "10,1"})
            .exit_code,
        0);
    return sid;
  }
};

constexpr double kGpt5Turn = 0.8 * 1.25 + 0.2 * 0.125 + 0.1 * 10;

TEST_F(UsageCli, TheSummaryFitsEightyColumnsAndEndsWithTheTotal) {
  Spend();
  CliRun r = Sdb({"usage", "--by", "project,model"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line, last;
  int count = 0;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 80u) << line;
    last = line;
    ++count;
  }
  EXPECT_EQ(count, 4);  // header, two rows, total
  EXPECT_EQ(last.rfind("total", 0), 0u) << last;
  EXPECT_TRUE(Contains(last, "$2.02")) << last;  // gpt-5's turn: $2.025
  EXPECT_TRUE(Contains(r.out, "/src/app gpt-5")) << r.out;
}

TEST_F(UsageCli, JsonHasTheShapeOfTheHttpApi) {
  const std::string sid = Spend();
  json j = Sdb({"--json", "usage", "--by", "day", "--session", sid}).Json();
  EXPECT_EQ(j["currency"], "USD");
  EXPECT_EQ(j["group"], json::array({"day"}));
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_TRUE(j["rows"][0].contains("day"));
  EXPECT_EQ(j["total"]["turns"], 2);
  EXPECT_EQ(j["total"]["unpriced_turns"], 1);
  EXPECT_NEAR(j["total"]["cost_usd"].get<double>(), kGpt5Turn, 1e-9);

  json session = Sdb({"--json", "usage", sid, "--turns"}).Json();
  EXPECT_EQ(session["turns"], 2);  // the count, as before
  ASSERT_EQ(session["per_turn"].size(), 2u);
  EXPECT_NEAR(session["per_turn"][0]["cost_usd"].get<double>(), kGpt5Turn, 1e-9);
  EXPECT_TRUE(session["per_turn"][1]["cost_usd"].is_null());
}

TEST_F(UsageCli, APriceFileOverridesAndABadOneIsNamed) {
  Spend();
  const std::string prices =
      WriteFile("prices.json", R"([{"model": "in-house", "from": "2000-01-01", "input": 1000000,
                          "output": 0}])");
  json j = Sdb({"--json", "usage", "--prices", prices}).Json();
  EXPECT_EQ(j["total"]["unpriced_turns"], 0);
  EXPECT_NEAR(j["total"]["cost_usd"].get<double>(), kGpt5Turn + 10, 1e-9);

  const std::string bad = WriteFile("bad.json", R"([{"model": "x", "from": "2025-01-01"}])");
  CliRun r = Sdb({"usage", "--prices", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, bad)) << r.err;
  EXPECT_TRUE(Contains(r.err, "\"input\"")) << r.err;

  // serve reads the file before it listens: a bad one stops it, named.
  CliRun serve = Sdb({"serve", "--port", "0", "--prices", bad});
  EXPECT_EQ(serve.exit_code, 2) << serve.out;
  EXPECT_TRUE(Contains(serve.err, bad)) << serve.err;
  EXPECT_FALSE(Contains(serve.out, "http://")) << serve.out;
}

// append --tokens takes cache writes fifth; they are priced at their own
// rate, apart from the input they are part of.
TEST_F(UsageCli, CacheWritesGivenToAppendArePricedApart) {
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "--role", "assistant", "x", "--model", "in-house", "--tokens",
                 "1000000,0,0,0,500000"})
                .exit_code,
            0);
  const std::string prices = WriteFile(
      "prices.json",
      R"([{"model": "in-house", "from": "2000-01-01", "input": 1, "output": 0, "cache_write": 2}])");
  json j = Sdb({"--json", "usage", "--prices", prices}).Json();
  EXPECT_EQ(j["total"]["cache_write_tokens"], 500000);
  EXPECT_NEAR(j["total"]["cost_usd"].get<double>(), 0.5 * 1 + 0.5 * 2, 1e-9);
  // A sixth is a usage error (exit 1, docs/cli.md), and nothing is appended.
  CliRun six = Sdb({"append", sid, "x", "--tokens", "1,2,3,4,5,6"});
  EXPECT_EQ(six.exit_code, 1);
  EXPECT_TRUE(Contains(six.err, "at most 5 values")) << six.err;
  EXPECT_EQ(Sdb({"--json", "usage", sid}).Json()["turns"], 1);
}

TEST_F(UsageCli, BadGroupsAndDaysAreRefused) {
  Spend();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"usage", "--by", "week"},
        std::vector<std::string>{"usage", "--since", "2025-13-01"},
        std::vector<std::string>{"usage", "--turns"}}) {
    CliRun r = Sdb(args);
    EXPECT_EQ(r.exit_code, 2) << args[1];
    EXPECT_FALSE(r.err.empty());
  }
}

}  // namespace
}  // namespace sessiondb::testing
