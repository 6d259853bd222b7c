// The projection input (Store::ReadForProjection, which reads from the last
// compaction on) against the rule applied to the whole log:
// ReplayCompactions(ApplyRewinds(ReadEvents())). Ranges that partly overlap
// and ranges with gaps between them are where a shortcut of the read can go
// wrong, so random histories make them on purpose.
#include <random>

#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

std::vector<int64_t> Seqs(const std::vector<Event>& events) {
  std::vector<int64_t> out;
  for (const Event& e : events) out.push_back(e.seq);
  return out;
}

// The log in one line ("1m 2m 3c1-2 4r1"), for a failure's message.
std::string Describe(const std::vector<Event>& log) {
  std::string out;
  for (const Event& e : log) {
    out += " " + std::to_string(e.seq) + std::string(EventTypeName(e.type)).substr(0, 1);
    if (e.type == EventType::kRewind) out += std::to_string(e.rewind.to_seq);
    if (e.type == EventType::kCompaction) {
      out += std::to_string(e.compaction.from_seq) + "-" + std::to_string(e.compaction.to_seq);
    }
  }
  return out;
}

class ProjectionInput : public BackendTest {
 protected:
  void Compact(const std::string& s, int64_t from, int64_t to) {
    auto c = store_->Compact(s, {.from_seq = from, .to_seq = to, .summary = "sum"});
    ASSERT_TRUE(c) << c.error().ToString();
  }

  // The rule over the whole log.
  std::vector<int64_t> RuleSeqs(const std::string& s) {
    auto events = store_->ReadEvents(s);
    EXPECT_TRUE(events) << events.error().ToString();
    return events ? Seqs(ReplayCompactions(ApplyRewinds(*events))) : std::vector<int64_t>{};
  }

  std::vector<int64_t> InputSeqs(const std::string& s) {
    auto input = store_->ReadForProjection(s);
    EXPECT_TRUE(input) << input.error().ToString();
    return input ? Seqs(*input) : std::vector<int64_t>{};
  }
};
SESSIONDB_FOR_EACH_BACKEND(ProjectionInput);

TEST_P(ProjectionInput, PartlyOverlappingRangesPlaceEachSummaryAtItsOwnStart) {
  std::string s = NewSessionId();
  AppendText(s, "one");  // 1
  AppendText(s, "two");  // 2
  Compact(s, 1, 2);      // 3
  Compact(s, 2, 3);      // 4: partly over 3's range, and over 3 itself
  Compact(s, 3, 3);      // 5: over 3 alone
  // 3 is summarised by 4 and 5; 4 takes the place of seq 2, 5 of seq 3.
  EXPECT_EQ(InputSeqs(s), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(RuleSeqs(s), InputSeqs(s));
}

TEST_P(ProjectionInput, EventsBetweenASummaryAndTheRangeOfOneItSummarisedStay) {
  std::string s = NewSessionId();
  for (int i = 1; i <= 4; ++i) AppendText(s, "m" + std::to_string(i));  // 1..4
  Compact(s, 1, 2);                                                     // 5
  Compact(s, 5, 5);                                                     // 6
  // 6 summarises 5, which stood for 1..2; nothing covers 3 and 4.
  EXPECT_EQ(InputSeqs(s), (std::vector<int64_t>{3, 4, 6}));
  EXPECT_EQ(RuleSeqs(s), InputSeqs(s));
}

// Random sessions of appends, compactions of any range of the view (partly
// overlapping earlier ones or not), rewinds and forks: the projection input
// equals the rule over the whole log after every step. Seeded, so a failure
// repeats; the message holds the log.
TEST_P(ProjectionInput, EqualsTheRuleOverTheWholeLogForRandomHistories) {
  std::mt19937 rng(20261128);
  const int cases = embedded() ? 300 : 120;
  for (int round = 0; round < cases; ++round) {
    std::string s = NewSessionId();
    const int steps = 4 + static_cast<int>(rng() % 16);
    for (int step = 0; step < steps; ++step) {
      const int op = static_cast<int>(rng() % 10);
      const int64_t last = store_->GetSession(s)->last_seq;
      if (op < 5 || last == 0) {
        AppendText(s, "r" + std::to_string(round) + "s" + std::to_string(step));
      } else if (op < 8) {
        // Any two seqs of the view (messages, compactions, resource views).
        std::vector<int64_t> view;
        for (const Event& e : ApplyRewinds(*store_->ReadEvents(s))) view.push_back(e.seq);
        if (view.empty()) continue;
        int64_t a = view[rng() % view.size()], b = view[rng() % view.size()];
        if (a > b) std::swap(a, b);
        ASSERT_NO_FATAL_FAILURE(Compact(s, a, b));
      } else if (op < 9) {
        auto r = store_->Rewind(s, static_cast<int64_t>(rng() % (last + 1)));
        ASSERT_TRUE(r) << r.error().ToString();
      } else {
        // A fork at any seq carries its parent's compactions and rewinds.
        auto fork = store_->ForkSession(s, static_cast<int64_t>(rng() % (last + 1)), {});
        ASSERT_TRUE(fork) << fork.error().ToString();
        AppendText(fork->id, "own");
        ASSERT_EQ(InputSeqs(fork->id), RuleSeqs(fork->id))
            << "fork of round " << round << ":" << Describe(*store_->ReadEvents(fork->id));
      }
      ASSERT_EQ(InputSeqs(s), RuleSeqs(s))
          << "round " << round << " step " << step << ":" << Describe(*store_->ReadEvents(s));
    }
  }
}

}  // namespace
}  // namespace sessiondb::testing
