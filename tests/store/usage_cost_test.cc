// Usage and cost across sessions (docs/usage.md): per-day rows kept with the
// totals, dated prices, the fork rule, the trash, and hostile queries and
// price files. Written once, run on every backend.
#include <fstream>

#include "core/message_codec.h"
#include "store/store_copy.h"
#include "store/store_fixture.h"
#include "store/usage_rules.h"

namespace sessiondb::testing {
namespace {

class UsageCost : public BackendTest {
 protected:
  // 2025-10-01T12:00:00Z: Claude Sonnet 4.5 has a price (from 2025-09-29).
  static constexpr int64_t kOct1 = 1'759'320'000'000;
  static constexpr int64_t kDay = 86'400'000;

  void SetUp() override {
    now_ms_ = kOct1;
    BackendTest::SetUp();
  }

  void Turn(const std::string& session, const std::string& model, Usage usage,
            const std::string& provider = "anthropic") {
    Message m;
    m.role = Role::kAssistant;
    m.parts.push_back(Part::Text("answer"));
    m.provider = provider;
    m.model = model;
    m.usage = usage;
    auto r = store_->Append(session, m);
    ASSERT_TRUE(r) << r.error().ToString();
  }

  UsageSummary Summary(UsageQuery q) {
    auto s = store_->GetUsageSummary(q);
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? *s : UsageSummary{};
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const std::string path = dir_.Sub(name);
    std::ofstream(path) << text;
    return path;
  }
};
SESSIONDB_FOR_EACH_BACKEND(UsageCost);

// 2,000 uncached input at $3, 800 output at $15, 10,000 cache reads at $0.30
// and 1,000 cache writes at $3.75 per million tokens.
constexpr double kSonnetTurnUsd = (2000 * 3.0 + 800 * 15.0 + 10000 * 0.30 + 1000 * 3.75) / 1e6;
const Usage kSonnetTurn{.input_tokens = 13000,
                        .output_tokens = 800,
                        .cached_tokens = 10000,
                        .reasoning_tokens = 0,
                        .cache_write_tokens = 1000};

TEST_P(UsageCost, TurnsArePricedByDayAndModelAndUnknownModelsStayUnpriced) {
  const std::string s = NewSessionId();
  Turn(s, "claude-sonnet-4-5-20250929", kSonnetTurn);
  now_ms_ += kDay;
  Turn(s, "claude-sonnet-4-5-20250929", kSonnetTurn);
  Turn(s, "home-made-model", Usage{.input_tokens = 5, .output_tokens = 1});

  UsageSummary by_day = Summary({.group = {UsageGroup::kDay}});
  ASSERT_EQ(by_day.rows.size(), 2u);
  EXPECT_EQ(by_day.rows[0].day, "2025-10-01");
  EXPECT_EQ(by_day.rows[1].day, "2025-10-02");
  EXPECT_EQ(by_day.rows[1].metrics.turns, 2);
  EXPECT_EQ(by_day.rows[1].metrics.unpriced_turns, 1);
  EXPECT_NEAR(by_day.rows[0].metrics.cost_usd, kSonnetTurnUsd, 1e-12);
  EXPECT_EQ(by_day.total.turns, 3);
  EXPECT_EQ(by_day.total.unpriced_turns, 1);
  EXPECT_EQ(by_day.total.usage.cache_write_tokens, 2000);
  EXPECT_NEAR(by_day.total.cost_usd, 2 * kSonnetTurnUsd, 1e-12);

  // The session's own report carries the new counter too.
  auto report = store_->GetUsage(s);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->total.cache_write_tokens, 2000);

  // Each turn priced, the unknown one without a price.
  auto turns = store_->GetTurnUsage(s);
  ASSERT_TRUE(turns) << turns.error().ToString();
  ASSERT_EQ(turns->size(), 3u);
  EXPECT_EQ((*turns)[0].seq, 1);
  EXPECT_NEAR((*turns)[0].cost_usd.value_or(-1), kSonnetTurnUsd, 1e-12);
  EXPECT_FALSE((*turns)[2].cost_usd.has_value());

  // since/until are inclusive UTC days.
  UsageSummary second = Summary({.since = "2025-10-02", .until = "2025-10-02"});
  EXPECT_EQ(second.total.turns, 2);
  EXPECT_TRUE(second.rows.empty());  // no group: the total alone
}

TEST_P(UsageCost, ATurnBeforeAModelsFirstPriceIsUnpricedNotFree) {
  // 2025-04-24: before any Sonnet 4 price (4.5 falls back to 4's from 2025-05-22).
  now_ms_ = kOct1 - 160 * kDay;
  const std::string s = NewSessionId();
  Turn(s, "claude-sonnet-4-5", kSonnetTurn);
  UsageSummary sum = Summary({});
  EXPECT_EQ(sum.total.unpriced_turns, 1);
  EXPECT_EQ(sum.total.cost_usd, 0);
}

TEST_P(UsageCost, AForksInheritedTurnsAreCountedOnceUnderTheParent) {
  const std::string parent = NewSessionId("parent");
  Turn(parent, "claude-sonnet-4-5", kSonnetTurn);
  Turn(parent, "claude-sonnet-4-5", kSonnetTurn);
  auto fork = store_->ForkSession(parent, 2, {.id = "child"});
  ASSERT_TRUE(fork) << fork.error().ToString();
  Turn("child", "claude-sonnet-4-5", kSonnetTurn);

  UsageSummary by_session = Summary({.group = {UsageGroup::kSession}});
  ASSERT_EQ(by_session.rows.size(), 2u);
  EXPECT_EQ(by_session.rows[0].session_id, "child");
  EXPECT_EQ(by_session.rows[0].metrics.turns, 1);
  EXPECT_EQ(by_session.rows[1].metrics.turns, 2);
  EXPECT_EQ(by_session.total.turns, 3);
  EXPECT_NEAR(by_session.total.cost_usd, 3 * kSonnetTurnUsd, 1e-12);
  auto child_turns = store_->GetTurnUsage("child");
  ASSERT_TRUE(child_turns);
  ASSERT_EQ(child_turns->size(), 1u);
  EXPECT_EQ((*child_turns)[0].seq, 3);
}

TEST_P(UsageCost, ProjectAndSessionFiltersAndTheTrashNarrowTheSummary) {
  auto a = store_->CreateSession({.id = "a", .metadata_json = R"({"project":"/src/app/"})"});
  auto b = store_->CreateSession({.id = "b", .metadata_json = R"({"project":"/src/other"})"});
  ASSERT_TRUE(a && b);
  Turn("a", "gpt-5", Usage{.input_tokens = 1000, .output_tokens = 100}, "openai");
  Turn("b", "gpt-5", Usage{.input_tokens = 1000, .output_tokens = 100}, "");
  NewSessionId("c");
  Turn("c", "gpt-5", Usage{.input_tokens = 1000, .output_tokens = 100}, "openai");

  UsageSummary by_project = Summary({.group = {UsageGroup::kProject, UsageGroup::kProvider}});
  ASSERT_EQ(by_project.rows.size(), 3u);
  EXPECT_EQ(by_project.rows[0].project, "");
  EXPECT_EQ(by_project.rows[1].project, "/src/app");
  EXPECT_EQ(by_project.rows[2].provider, "");  // priced by model alone
  EXPECT_EQ(by_project.total.unpriced_turns, 0);
  EXPECT_EQ(Summary({.project = "/src/app"}).total.turns, 1);
  EXPECT_EQ(Summary({.session_ids = {"b", "c"}}).total.turns, 2);

  ASSERT_TRUE(store_->TrashSession("c").ok());
  EXPECT_EQ(Summary({}).total.turns, 2);
  ASSERT_TRUE(store_->RestoreFromTrash("c"));
  EXPECT_EQ(Summary({}).total.turns, 3);
}

TEST_P(UsageCost, ErasureRemovesTheDaysAndCountsThemInTheReceipt) {
  const std::string s = NewSessionId("gone");
  Turn(s, "claude-sonnet-4-5", kSonnetTurn);
  now_ms_ += kDay;
  Turn(s, "claude-sonnet-4-5", kSonnetTurn);
  auto receipt = store_->Erase({.session_ids = {s}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(ErasedCount(*receipt, "usage_rows"), 3);  // one total, two days
  EXPECT_EQ(Summary({}).total.turns, 0);
}

TEST_P(UsageCost, ACopyKeepsEachTurnsDayAndCountsAForksTurnsOnce) {
  const std::string parent = NewSessionId("parent");
  Turn(parent, "claude-sonnet-4-5", kSonnetTurn);
  now_ms_ += kDay;
  Turn(parent, "claude-sonnet-4-5", kSonnetTurn);
  ASSERT_TRUE(store_->ForkSession(parent, 2, {.id = "child"}));
  now_ms_ += kDay;
  Turn("child", "gpt-5", Usage{.input_tokens = 10}, "openai");
  const UsageQuery by_day_and_session{.group = {UsageGroup::kDay, UsageGroup::kSession}};
  const UsageSummary before = Summary(by_day_and_session);

  // Copied on a later day: the turns keep their own days.
  now_ms_ += 30 * kDay;
  auto copy = Store::Open(dir_.Sub("copy"), Options());
  ASSERT_TRUE(copy) << copy.error().ToString();
  ASSERT_TRUE(CopyStore(*store_, **copy));
  auto after = (*copy)->GetUsageSummary(by_day_and_session);
  ASSERT_TRUE(after) << after.error().ToString();
  ASSERT_EQ(after->rows.size(), before.rows.size());
  for (size_t i = 0; i < before.rows.size(); ++i) {
    EXPECT_EQ(after->rows[i].day, before.rows[i].day);
    EXPECT_EQ(after->rows[i].session_id, before.rows[i].session_id);
    EXPECT_EQ(after->rows[i].metrics.turns, before.rows[i].metrics.turns);
  }
  EXPECT_EQ(after->total.turns, 3);
  EXPECT_NEAR(after->total.cost_usd, before.total.cost_usd, 1e-12);
}

TEST_P(UsageCost, AnOverrideFileWinsOverTheShippedPrice) {
  const std::string s = NewSessionId();
  Turn(s, "claude-sonnet-4-5", Usage{.input_tokens = 1'000'000});
  const std::string prices =
      WriteFile("prices.json",
                R"({"prices": [{"provider": "anthropic", "model": "claude-sonnet-4-5*",
                       "from": "2025-01-01", "input": 1, "output": 2}]})");
  EXPECT_NEAR(Summary({.prices_path = prices}).total.cost_usd, 1.0, 1e-12);
  EXPECT_NEAR(Summary({}).total.cost_usd, 3.0, 1e-12);
}

TEST_P(UsageCost, HostileQueriesAndPriceFilesAreRefusedWithClearErrors) {
  NewSessionId();
  auto error = [this](UsageQuery q) {
    auto s = store_->GetUsageSummary(q);
    EXPECT_FALSE(s);
    return s ? std::string() : s.error().ToString();
  };
  EXPECT_NE(error({.since = "2025-02-30"}).find("YYYY-MM-DD"), std::string::npos);
  EXPECT_NE(error({.since = "2025-03-02", .until = "2025-03-01"}).find("after"), std::string::npos);
  EXPECT_NE(error({.group = {UsageGroup::kDay, UsageGroup::kDay}}).find("twice"),
            std::string::npos);
  EXPECT_NE(error({.session_ids = std::vector<std::string>(501, "x")}).find("limit is 500"),
            std::string::npos);

  const std::string bad_from =
      WriteFile("bad.json", R"([{"model": "m", "from": "2025-01-01", "input": 1, "output": 1},
                      {"model": "m", "from": "yesterday", "input": 1, "output": 1}])");
  std::string e = error({.prices_path = bad_from});
  EXPECT_NE(e.find(bad_from), std::string::npos) << e;
  EXPECT_NE(e.find("price 2"), std::string::npos) << e;
  EXPECT_NE(e.find("\"from\""), std::string::npos) << e;

  const std::string negative =
      WriteFile("neg.json", R"([{"model": "m", "from": "2025-01-01", "input": -1, "output": 1}])");
  EXPECT_NE(error({.prices_path = negative}).find("\"input\""), std::string::npos);
  const std::string not_json = WriteFile("junk.json", "{\"prices\": [");
  EXPECT_NE(error({.prices_path = not_json}).find("is not JSON"), std::string::npos);
  const std::string huge =
      WriteFile("huge.json", "[" + std::string(store::kMaxPriceFileBytes, ' ') + "]");
  EXPECT_NE(error({.prices_path = huge}).find("the limit is"), std::string::npos);
  EXPECT_EQ(store_->GetUsageSummary({.prices_path = dir_.Sub("missing.json")}).error().code(),
            StatusCode::kNotFound);
}

TEST(UsageCodec, CacheWritesAreStoredOnlyWhenSetAndOldBodiesReadAsZero) {
  Message m;
  m.role = Role::kAssistant;
  m.parts = {Part::Text("a")};
  m.usage = Usage{.input_tokens = 10, .output_tokens = 2};
  auto plain = EncodeMessageBody(m);
  ASSERT_TRUE(plain && *plain);
  // A body of before cache writes existed: byte for byte what is written now.
  EXPECT_EQ(**plain, R"({"parts":[{"text":"a","type":"text"}],"usage":{"cached_tokens":0,)"
                     R"("input_tokens":10,"output_tokens":2,"reasoning_tokens":0},"v":1})");
  Message back;
  ASSERT_TRUE(DecodeMessageBody(**plain, "a", &back).ok());
  EXPECT_EQ(back.usage->cache_write_tokens, 0);
  m.usage->cache_write_tokens = 7;
  auto with = EncodeMessageBody(m);
  ASSERT_TRUE(with && *with);
  ASSERT_TRUE(DecodeMessageBody(**with, "a", &back).ok());
  EXPECT_EQ(back.usage, m.usage);
}

TEST(UsageRules, DaysAndPricesFollowTheirRules) {
  EXPECT_EQ(store::UtcDay(0), "1970-01-01");
  EXPECT_EQ(store::UtcDay(1'759'363'199'999), "2025-10-01");
  EXPECT_TRUE(store::IsUtcDay("2024-02-29"));
  EXPECT_FALSE(store::IsUtcDay("2025-02-29"));
  EXPECT_FALSE(store::IsUtcDay("2025-1-01"));
  store::PriceTable table;
  // The longest prefix wins: Opus 4.1 is not priced as Opus 4.5 or 4.
  const store::Price* opus41 = table.Find("anthropic", "claude-opus-4-1-20250805", "2025-09-01");
  ASSERT_NE(opus41, nullptr);
  EXPECT_EQ(opus41->model, "claude-opus-4-1*");
  // The latest `from` on or before the day: o3's price cut of 2025-06-10.
  EXPECT_EQ(table.Find("openai", "o3", "2025-06-09")->input, 10);
  EXPECT_EQ(table.Find("openai", "o3", "2025-06-10")->input, 2);
  // Another provider's model of the same name is not priced.
  EXPECT_EQ(table.Find("azure-foo", "gpt-5", "2025-10-01"), nullptr);
}

}  // namespace
}  // namespace sessiondb::testing
