// Token counts a caller reports are checked and their totals cannot wrap:
// a negative count is refused (naming the field) with nothing written, and
// totals saturate at INT64_MAX instead of overflowing to negative numbers.
// Runs on both backends.
#include <limits>

#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class UsageLimits : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(UsageLimits);

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

Message Turn(std::string model, Usage usage) {
  Message m;
  m.role = Role::kAssistant;
  m.parts = {Part::Text("answer")};
  m.provider = "openai";
  m.model = std::move(model);
  m.usage = usage;
  return m;
}

TEST_P(UsageLimits, ANegativeCountIsRefusedNamingTheFieldAndNothingIsStored) {
  const std::string s = NewSessionId("neg");
  auto r = store_->Append(s, Turn("gpt-5", {10, -5, 0, 0}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("usage.output_tokens"), std::string::npos)
      << r.error().message();
  EXPECT_EQ(store_->GetSession(s)->message_count, 0);
  EXPECT_EQ(store_->GetUsage(s)->turns, 0);

  // The same rule for imports.
  Event e;
  e.id = e.message.id = "evt-neg";
  e.seq = 1;
  e.ts_ms = 1000;
  e.message = Turn("gpt-5", {0, 0, 0, -1});
  e.message.id = e.id;
  Status restored = store_->RestoreSession({.id = "neg-import"}, std::span<const Event>(&e, 1), {});
  EXPECT_EQ(restored.code(), StatusCode::kInvalidArgument) << restored.ToString();
  EXPECT_NE(restored.message().find("usage.reasoning_tokens"), std::string::npos);
  EXPECT_EQ(store_->GetSession("neg-import").error().code(), StatusCode::kNotFound);

  // The store still takes good turns.
  ASSERT_TRUE(store_->Append(s, Turn("gpt-5", {1, 2, 3, 4})));
  EXPECT_EQ(store_->GetUsage(s)->total, (Usage{1, 2, 3, 4}));
}

TEST_P(UsageLimits, TotalsSaturateInsteadOfOverflowing) {
  const std::string s = NewSessionId("big");
  for (int i = 0; i < 3; ++i) {
    auto r = store_->Append(s, Turn("gpt-5", {kMax, kMax - 1, 7, 0}));
    ASSERT_TRUE(r) << r.error().ToString();
  }
  // A second model: the session total adds the two, and saturates as well.
  ASSERT_TRUE(store_->Append(s, Turn("gpt-6", {kMax, 1, 1, 0})));
  // In one batch, several turns of one model add up before they are stored.
  std::vector<Message> batch = {Turn("gpt-7", {kMax, 0, 0, 0}), Turn("gpt-7", {kMax, 0, 0, 0})};
  ASSERT_TRUE(store_->AppendBatch(s, batch));

  Reopen();
  auto u = store_->GetUsage(s);
  ASSERT_TRUE(u) << u.error().ToString();
  EXPECT_EQ(u->turns, 6);
  ASSERT_EQ(u->by_model.size(), 3u);
  EXPECT_EQ(u->by_model[0].usage, (Usage{kMax, kMax, 21, 0}));
  EXPECT_EQ(u->by_model[1].usage, (Usage{kMax, 1, 1, 0}));
  EXPECT_EQ(u->by_model[2].usage, (Usage{kMax, 0, 0, 0}));
  EXPECT_EQ(u->total, (Usage{kMax, kMax, 22, 0}));
}

}  // namespace
}  // namespace sessiondb::testing
