// ReplayCompactions on hand-built logs: which events a projection sees once
// summaries stand in for the ranges they cover, and in which order.
#include <vector>

#include "projection_test_support.h"

namespace sessiondb::testing {
namespace {

std::vector<Event> Texts(int64_t from_seq, int64_t to_seq) {
  std::vector<Event> events;
  for (int64_t seq = from_seq; seq <= to_seq; ++seq) {
    events.push_back(
        TextEvent(seq, seq % 2 ? Role::kUser : Role::kAssistant, "m" + std::to_string(seq)));
  }
  return events;
}

std::vector<int64_t> Seqs(const std::vector<Event>& events) {
  std::vector<int64_t> seqs;
  for (const Event& e : events) seqs.push_back(e.seq);
  return seqs;
}

TEST(ReplayCompactions, WithoutACompactionReturnsTheLogUnchanged) {
  std::vector<Event> log = Texts(1, 4);
  std::vector<Event> out = ReplayCompactions(log);
  EXPECT_EQ(Seqs(out), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(out[2].message.parts[0].text, "m3");
}

TEST(ReplayCompactions, ACompactionOfTheFirstEventsTakesTheirPlace) {
  std::vector<Event> log = Texts(1, 4);
  log.push_back(CompactionEvent(5, 1, 3, "summary of 1-3"));
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(out[0].type, EventType::kCompaction);
  EXPECT_EQ(out[0].compaction.summary, "summary of 1-3");
  EXPECT_EQ(out[1].message.parts[0].text, "m4");
}

TEST(ReplayCompactions, ACompactionCoveringAnEarlierOneHidesItAndItsRange) {
  std::vector<Event> log = Texts(1, 4);
  log.push_back(CompactionEvent(5, 1, 2, "first summary"));
  log.push_back(TextEvent(6, Role::kAssistant, "m6"));
  log.push_back(CompactionEvent(7, 1, 6, "second summary"));
  log.push_back(TextEvent(8, Role::kUser, "m8"));
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(out[0].compaction.summary, "second summary");
}

TEST(ReplayCompactions, ASummaryOfASummaryAlsoStandsForWhatTheFirstCovered) {
  std::vector<Event> log = Texts(1, 4);
  log.push_back(CompactionEvent(5, 1, 4, "first"));
  log.push_back(TextEvent(6, Role::kAssistant, "m6"));
  log.push_back(CompactionEvent(7, 5, 6, "second"));  // covers "first", not 1..4
  log.push_back(TextEvent(8, Role::kUser, "m8"));
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(out[0].compaction.summary, "second");
}

TEST(ReplayCompactions, AnEarlierCompactionOutsideALaterRangeStillCounts) {
  std::vector<Event> log = Texts(1, 2);
  log.push_back(CompactionEvent(3, 1, 2, "first"));
  std::vector<Event> more = Texts(4, 5);
  log.insert(log.end(), more.begin(), more.end());
  log.push_back(CompactionEvent(6, 4, 5, "second"));
  log.push_back(TextEvent(7, Role::kUser, "m7"));
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{3, 6, 7}));
  EXPECT_EQ(out[0].compaction.summary, "first");
  EXPECT_EQ(out[1].compaction.summary, "second");
}

TEST(ReplayCompactions, ARangeStartingAfterTheFirstEventKeepsWhatPrecedesIt) {
  std::vector<Event> log = Texts(1, 5);
  log.push_back(CompactionEvent(6, 3, 5, "summary of 3-5"));
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{1, 2, 6}));
  EXPECT_EQ(out[2].type, EventType::kCompaction);
}

TEST(ReplayCompactions, EventsAppendedAfterTheCompactionFollowItsSummaryInOrder) {
  std::vector<Event> log = Texts(1, 2);
  log.push_back(CompactionEvent(3, 1, 2, "summary"));
  log.push_back(ViewEvent(4, PngResource("res_a", "a.png"), "look again", 1));
  log.push_back(TextEvent(5, Role::kAssistant, "m5"));
  log.push_back(TextEvent(6, Role::kUser, "m6"));
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{3, 4, 5, 6}));
  EXPECT_EQ(out[1].type, EventType::kResourceView);
}

// BuildProjection replays what Store::ReadForProjection already replayed.
TEST(ReplayCompactions, ReplayingAReplayedLogChangesNothing) {
  std::vector<Event> log = Texts(1, 3);
  log.push_back(CompactionEvent(4, 2, 3, "first"));
  log.push_back(TextEvent(5, Role::kUser, "m5"));
  log.push_back(CompactionEvent(6, 5, 5, "second"));
  log.push_back(TextEvent(7, Role::kAssistant, "m7"));
  std::vector<Event> once = ReplayCompactions(log);
  ASSERT_EQ(Seqs(once), (std::vector<int64_t>{1, 4, 6, 7}));
  EXPECT_EQ(Seqs(ReplayCompactions(once)), Seqs(once));
}

// Ranges that partly overlap: each summary stands at the start of its own
// range (store.h), not at the start of a summary it covered, so the order
// does not depend on which of two covering summaries is found first.
TEST(ReplayCompactions, ASummaryStandsAtTheStartOfItsOwnRangeWhenRangesPartlyOverlap) {
  std::vector<Event> log = Texts(1, 2);
  log.push_back(CompactionEvent(3, 1, 2, "first"));
  log.push_back(CompactionEvent(4, 2, 3, "second"));  // over m2 and "first"
  log.push_back(CompactionEvent(5, 3, 3, "third"));   // over "first" alone
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(Seqs(ReplayCompactions(out)), Seqs(out));
}

// What lies between a summary's range and the range of a summary it covered
// is no summary's: it stays, before the later summary.
TEST(ReplayCompactions, EventsBetweenTwoRangesStayInPlace) {
  std::vector<Event> log = Texts(1, 4);
  log.push_back(CompactionEvent(5, 1, 2, "first"));
  log.push_back(CompactionEvent(6, 5, 5, "second"));  // over "first", which stood for 1..2
  std::vector<Event> out = ReplayCompactions(log);
  ASSERT_EQ(Seqs(out), (std::vector<int64_t>{3, 4, 6}));
  EXPECT_EQ(Seqs(ReplayCompactions(out)), Seqs(out));
}

}  // namespace
}  // namespace sessiondb::testing
