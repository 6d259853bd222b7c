// Rewind: an event that ends a session's view at an earlier seq while the log
// keeps everything. Each read of the view (messages, the last N, the
// projection input, a fork's history, the index entry's count) must agree
// with the rule applied to the whole log: ApplyRewinds, then
// ReplayCompactions.
#include <atomic>
#include <random>
#include <set>
#include <thread>

#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

std::vector<int64_t> Seqs(const std::vector<Message>& messages) {
  std::vector<int64_t> out;
  for (const Message& m : messages) out.push_back(m.seq);
  return out;
}

std::vector<int64_t> Seqs(const std::vector<Event>& events) {
  std::vector<int64_t> out;
  for (const Event& e : events) out.push_back(e.seq);
  return out;
}

class Rewinds : public BackendTest {
 protected:
  void AppendTexts(const std::string& s, int n) {
    for (int i = 0; i < n; ++i) AppendText(s, "m" + std::to_string(i));
  }

  Event MustRewind(const std::string& s, int64_t to_seq) {
    auto r = store_->Rewind(s, to_seq);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : Event{};
  }

  std::vector<int64_t> ViewSeqs(const std::string& s) {
    auto m = store_->ReadMessages(s);
    EXPECT_TRUE(m) << m.error().ToString();
    return m ? Seqs(*m) : std::vector<int64_t>{};
  }

  // The seqs of the messages the rule gives for the whole log.
  std::vector<int64_t> RuleSeqs(const std::string& s) {
    auto events = store_->ReadEvents(s);
    EXPECT_TRUE(events) << events.error().ToString();
    std::vector<int64_t> out;
    for (const Event& e : ApplyRewinds(*events)) {
      if (e.type == EventType::kMessage) out.push_back(e.seq);
    }
    return out;
  }
};
SESSIONDB_FOR_EACH_BACKEND(Rewinds);

TEST_P(Rewinds, ARewindEndsTheViewAndTheLogKeepsEverything) {
  std::string s = NewSessionId();
  AppendTexts(s, 5);
  Event r = MustRewind(s, 3);
  EXPECT_EQ(r.type, EventType::kRewind);
  EXPECT_EQ(r.seq, 6);
  EXPECT_EQ(r.rewind.to_seq, 3);
  EXPECT_EQ(r.session_id, s);
  EXPECT_FALSE(r.id.empty());

  Reopen();
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Seqs(*store_->ReadLastMessages(s, 10)), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Seqs(*store_->ReadLastMessages(s, 2)), (std::vector<int64_t>{2, 3}));
  auto session = store_->GetSession(s);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->last_seq, 6);
  EXPECT_EQ(session->message_count, 3);

  // The log, for audit: the rewound messages and the rewind itself.
  auto events = store_->ReadEvents(s);
  ASSERT_TRUE(events);
  EXPECT_EQ(Seqs(*events), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(events->back().type, EventType::kRewind);
  EXPECT_EQ(events->back().id, r.id);
  EXPECT_EQ(events->back().rewind.to_seq, 3);
  EXPECT_EQ(events->at(4).message.Text(), "m4");

  // What comes after the rewind is in the view; seqs keep their log numbers.
  AppendText(s, "after");
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 2, 3, 7}));
  EXPECT_EQ(Seqs(*store_->ReadLastMessages(s, 2)), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(Seqs(*store_->ReadMessages(s, 3, 10)), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(Seqs(*store_->ReadMessages(s, 4, 10)), (std::vector<int64_t>{7}));
  EXPECT_EQ(store_->GetSession(s)->message_count, 4);
}

TEST_P(Rewinds, LaterRewindsApplyToTheViewNotToTheLog) {
  std::string s = NewSessionId();
  AppendTexts(s, 3);  // 1 2 3
  MustRewind(s, 1);   // 4: view 1
  AppendTexts(s, 2);  // 5 6: view 1 5 6
  MustRewind(s, 5);   // 7: view 1 5
  AppendTexts(s, 1);  // 8: view 1 5 8
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 5, 8}));
  EXPECT_EQ(RuleSeqs(s), ViewSeqs(s));
  EXPECT_EQ(Seqs(*store_->ReadMessages(s, 1, 2)), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(Seqs(*store_->ReadMessages(s, 2, -1)), (std::vector<int64_t>{5, 8}));
  EXPECT_EQ(Seqs(*store_->ReadLastMessages(s, 2)), (std::vector<int64_t>{5, 8}));
  EXPECT_EQ(store_->GetSession(s)->message_count, 3);

  // A rewind to a seq that was rewound before cannot bring it back: 2 and 3
  // left the view at seq 4 and stay out.
  MustRewind(s, 3);  // 9: view 1
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1}));
  EXPECT_EQ(RuleSeqs(s), ViewSeqs(s));
  EXPECT_EQ(store_->GetSession(s)->message_count, 1);
}

TEST_P(Rewinds, ToZeroEmptiesTheViewAndToTheEndIsRecordedWithoutChange) {
  std::string s = NewSessionId();
  AppendTexts(s, 2);
  Event same = MustRewind(s, 2);
  EXPECT_EQ(same.seq, 3);
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(store_->GetSession(s)->message_count, 2);
  // The end is now 3 (the rewind itself): also allowed, also no change.
  MustRewind(s, 3);
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 2}));

  MustRewind(s, 0);
  EXPECT_TRUE(store_->ReadMessages(s)->empty());
  EXPECT_TRUE(store_->ReadLastMessages(s, 5)->empty());
  EXPECT_TRUE(store_->ReadForProjection(s)->empty());
  auto session = store_->GetSession(s);
  EXPECT_EQ(session->message_count, 0);
  EXPECT_EQ(session->last_seq, 5);
  // The title a first message gave stays: a rewind does not rename.
  EXPECT_EQ(session->title, "m0");
  AppendText(s, "fresh start");
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{6}));
}

TEST_P(Rewinds, BadTargetsAreRefusedAndWriteNothing) {
  std::string s = NewSessionId();
  AppendTexts(s, 3);
  for (int64_t bad : {int64_t{-1}, int64_t{4}, int64_t{1} << 40,
                      std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    auto r = store_->Rewind(s, bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.error().message().find("1..3"), std::string::npos) << r.error().message();
  }
  EXPECT_EQ(store_->Rewind("no-such-session", 0).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Rewind("bad/id", 0).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ReadEvents(s)->size(), 3u);
  auto session = store_->GetSession(s);
  EXPECT_EQ(session->last_seq, 3);
  EXPECT_EQ(session->message_count, 3);
}

TEST_P(Rewinds, AForkInheritsTheRewindsOfWhatItForksFrom) {
  std::string parent = NewSessionId();
  AppendTexts(parent, 3);  // 1 2 3
  MustRewind(parent, 1);   // 4
  AppendTexts(parent, 1);  // 5: view 1 5

  auto whole = store_->ForkSession(parent, 5, {});
  ASSERT_TRUE(whole) << whole.error().ToString();
  EXPECT_EQ(whole->message_count, 2);
  EXPECT_EQ(ViewSeqs(whole->id), (std::vector<int64_t>{1, 5}));
  auto at_rewind = store_->ForkSession(parent, 4, {});
  ASSERT_TRUE(at_rewind);
  EXPECT_EQ(at_rewind->message_count, 1);
  EXPECT_EQ(ViewSeqs(at_rewind->id), (std::vector<int64_t>{1}));
  auto before = store_->ForkSession(parent, 3, {});
  ASSERT_TRUE(before);
  EXPECT_EQ(before->message_count, 3);
  EXPECT_EQ(ViewSeqs(before->id), (std::vector<int64_t>{1, 2, 3}));

  // The child's own rewind reaches into what it inherited, and changes only it.
  MustRewind(before->id, 2);  // 4 of the child
  AppendText(before->id, "child");
  EXPECT_EQ(ViewSeqs(before->id), (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(RuleSeqs(before->id), ViewSeqs(before->id));
  EXPECT_EQ(store_->GetSession(before->id)->message_count, 3);
  EXPECT_EQ(ViewSeqs(parent), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(Seqs(*store_->ReadLastMessages(before->id, 2)), (std::vector<int64_t>{2, 5}));
}

TEST_P(Rewinds, ACompactionRewoundAwayNoLongerApplies) {
  std::string s = NewSessionId();
  AppendTexts(s, 4);  // 1..4
  auto c = store_->Compact(s, {.from_seq = 1, .to_seq = 2, .summary = "m0 and m1"});
  ASSERT_TRUE(c);  // 5
  EXPECT_EQ(Seqs(*store_->ReadForProjection(s)), (std::vector<int64_t>{5, 3, 4}));
  MustRewind(s, 4);  // 6: the compaction is out of the view
  EXPECT_EQ(Seqs(*store_->ReadForProjection(s)), (std::vector<int64_t>{1, 2, 3, 4}));
  // Nor can it be pruned: its messages are in the view again.
  auto pruned = store_->PruneCompaction(s, 5);
  ASSERT_FALSE(pruned);
  EXPECT_EQ(pruned.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ReadMessages(s)->at(0).Text(), "m0");

  // A compaction of the view made after the rewind applies.
  auto again = store_->Compact(s, {.from_seq = 1, .to_seq = 3, .summary = "m0 to m2"});
  ASSERT_TRUE(again) << again.error().ToString();  // 7
  EXPECT_EQ(Seqs(*store_->ReadForProjection(s)), (std::vector<int64_t>{7, 4}));
  auto report = store_->PruneCompaction(s, 7);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->events_pruned, 3);
}

TEST_P(Rewinds, ACompactionMustStartAndEndInTheView) {
  std::string s = NewSessionId();
  AppendTexts(s, 3);  // 1 2 3
  MustRewind(s, 1);   // 4
  AppendTexts(s, 1);  // 5
  for (auto [from, to] : {std::pair<int64_t, int64_t>{2, 3}, {1, 4}, {3, 5}, {1, 2}}) {
    auto r = store_->Compact(s, {.from_seq = from, .to_seq = to, .summary = "x"});
    ASSERT_FALSE(r) << from << ".." << to;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find("view"), std::string::npos) << r.error().message();
  }
  EXPECT_EQ(store_->GetSession(s)->last_seq, 5);
  // 1..5 names the view's first and last messages; what lies between and was
  // rewound is not the summary's.
  auto c = store_->Compact(s, {.from_seq = 1, .to_seq = 5, .summary = "m0 and m0"});
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(Seqs(*store_->ReadForProjection(s)), (std::vector<int64_t>{6}));
}

// Random sessions of appends, compactions of the view and rewinds: every read
// of the view equals the rule applied to the whole log.
TEST_P(Rewinds, EveryReadOfTheViewEqualsTheRuleOverTheWholeLog) {
  std::mt19937 rng(21);
  for (int round = 0; round < 6; ++round) {
    std::string s = NewSessionId();
    std::vector<int64_t> view_events;  // seqs of the view (any type but rewinds)
    for (int step = 0; step < 40; ++step) {
      const int op = static_cast<int>(rng() % 10);
      const int64_t last = store_->GetSession(s)->last_seq;
      if (op < 6 || last == 0) {
        AppendText(s, "r" + std::to_string(round) + "s" + std::to_string(step));
      } else if (op < 9) {
        MustRewind(s, static_cast<int64_t>(rng() % (last + 1)));
      } else {
        // Any range of the view's messages, partly overlapping earlier
        // compactions or not (projection_input_test.cc pins those cases).
        const std::vector<Event> view = ApplyRewinds(*store_->ReadEvents(s));
        std::vector<int64_t> seqs;
        for (const Event& e : view) {
          if (e.type == EventType::kMessage) seqs.push_back(e.seq);
        }
        if (seqs.size() < 2) continue;
        size_t a = rng() % seqs.size(), b = rng() % seqs.size();
        if (a > b) std::swap(a, b);
        auto c = store_->Compact(s, {.from_seq = seqs[a], .to_seq = seqs[b], .summary = "sum"});
        ASSERT_TRUE(c) << c.error().ToString();
      }
      auto events = store_->ReadEvents(s);
      ASSERT_TRUE(events);
      const std::vector<Event> view = ApplyRewinds(*events);
      std::vector<int64_t> messages;
      for (const Event& e : view) {
        if (e.type == EventType::kMessage) messages.push_back(e.seq);
      }
      ASSERT_EQ(ViewSeqs(s), messages) << "round " << round << " step " << step;
      const size_t n = 1 + rng() % 4;
      std::vector<int64_t> last_n(messages.end() - std::min(n, messages.size()), messages.end());
      ASSERT_EQ(Seqs(*store_->ReadLastMessages(s, static_cast<int64_t>(n))), last_n);
      if (!messages.empty()) {
        const int64_t from = messages[rng() % messages.size()];
        std::vector<int64_t> page;
        for (int64_t m : messages) {
          if (m >= from && page.size() < 2) page.push_back(m);
        }
        ASSERT_EQ(Seqs(*store_->ReadMessages(s, from, 2)), page);
      }
      ASSERT_EQ(store_->GetSession(s)->message_count, static_cast<int64_t>(messages.size()));
      auto projection = store_->ReadForProjection(s);
      ASSERT_TRUE(projection) << projection.error().ToString();
      std::string log;
      for (const Event& e : *events) {
        log += " " + std::to_string(e.seq) + std::string(EventTypeName(e.type)).substr(0, 1);
        if (e.type == EventType::kRewind) log += std::to_string(e.rewind.to_seq);
        if (e.type == EventType::kCompaction) {
          log += std::to_string(e.compaction.from_seq) + "-" + std::to_string(e.compaction.to_seq);
        }
      }
      ASSERT_EQ(Seqs(*projection), Seqs(ReplayCompactions(view))) << log;
    }
  }
}

TEST_P(Rewinds, RewindsRacingAppendsKeepTheCountOfTheView) {
  std::string s = NewSessionId();
  AppendTexts(s, 5);
  std::atomic<bool> done = false;
  std::thread writer([&] {
    for (int i = 0; i < 60; ++i) AppendText(s, "w" + std::to_string(i));
    done = true;
  });
  int rewinds = 0;
  while (!done || rewinds < 5) {
    const int64_t last = store_->GetSession(s)->last_seq;
    auto r = store_->Rewind(s, last / 2);
    ASSERT_TRUE(r) << r.error().ToString();
    ++rewinds;
  }
  writer.join();
  EXPECT_EQ(store_->GetSession(s)->message_count, static_cast<int64_t>(ViewSeqs(s).size()));
  EXPECT_EQ(RuleSeqs(s), ViewSeqs(s));
}

TEST_P(Rewinds, ARewindIfUnchangedWritesNothingOnceTheLogMovedOn) {
  std::string s = NewSessionId();
  AppendTexts(s, 3);
  const int64_t read_at = store_->GetSession(s)->last_seq;
  AppendText(s, "landed after the read");  // 4

  auto stale = store_->RewindIfUnchanged(s, 2, read_at);
  ASSERT_TRUE(stale) << stale.error().ToString();
  EXPECT_FALSE(stale->has_value());
  EXPECT_EQ(store_->ReadEvents(s)->size(), 4u);
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(store_->GetSession(s)->message_count, 4);

  auto applied = store_->RewindIfUnchanged(s, 3, 4);
  ASSERT_TRUE(applied) << applied.error().ToString();
  ASSERT_TRUE(applied->has_value());
  EXPECT_EQ((*applied)->seq, 5);
  EXPECT_EQ((*applied)->rewind.to_seq, 3);
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(store_->GetSession(s)->message_count, 3);

  // A rewind is an event too: the seq read before it is stale after it.
  auto after_rewind = store_->RewindIfUnchanged(s, 1, 4);
  ASSERT_TRUE(after_rewind);
  EXPECT_FALSE(after_rewind->has_value());
  EXPECT_EQ(ViewSeqs(s), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_FALSE(store_->RewindIfUnchanged(s, 9, 5));  // bad targets as Rewind's
  EXPECT_EQ(store_->RewindIfUnchanged("missing", 0, 0).error().code(), StatusCode::kNotFound);
}

// The Agents SDK session's pop_item over two stores (two processes' worth):
// each pop reads the last message and rewinds before it only while nothing
// landed since. Every message appended is either popped once or still in
// the view; none vanishes, none is popped twice.
TEST_P(Rewinds, PopsRacingAppendsFromAnotherStoreLoseNothing) {
  std::string s = NewSessionId();
  auto other = Store::Open(Location(), Options());
  ASSERT_TRUE(other) << other.error().ToString();
  constexpr int kAppends = 60;
  std::atomic<bool> done = false;
  std::thread writer([&] {
    for (int i = 0; i < kAppends; ++i) {
      Message m{.role = Role::kUser, .parts = {Part::Text("w" + std::to_string(i))}};
      auto r = (*other)->Append(s, m);
      EXPECT_TRUE(r) << r.error().ToString();
    }
    done = true;
  });
  auto pop = [&](Store& store, std::vector<std::string>* popped) {
    for (;;) {
      auto session = store.GetSession(s);
      ASSERT_TRUE(session) << session.error().ToString();
      auto last = store.ReadLastMessages(s, 1);
      ASSERT_TRUE(last) << last.error().ToString();
      if (last->empty()) return;
      const Message& m = last->back();
      if (m.seq > session->last_seq) continue;
      auto r = store.RewindIfUnchanged(s, m.seq - 1, session->last_seq);
      ASSERT_TRUE(r) << r.error().ToString();
      if (r->has_value()) {
        popped->push_back(m.Text());
        return;
      }
    }
  };
  std::vector<std::string> popped_here, popped_there;
  std::thread other_popper([&] {
    while (!done) pop(**other, &popped_there);
  });
  while (!done) pop(*store_, &popped_here);
  writer.join();
  other_popper.join();

  std::multiset<std::string> seen(popped_here.begin(), popped_here.end());
  seen.insert(popped_there.begin(), popped_there.end());
  auto view = store_->ReadMessages(s);  // held: a range-for would not keep the Result alive
  ASSERT_TRUE(view) << view.error().ToString();
  for (const Message& m : *view) seen.insert(m.Text());
  std::multiset<std::string> appended;
  for (int i = 0; i < kAppends; ++i) appended.insert("w" + std::to_string(i));
  EXPECT_EQ(seen, appended);
  EXPECT_EQ(store_->GetSession(s)->message_count, static_cast<int64_t>(ViewSeqs(s).size()));
}

TEST_P(Rewinds, ARestoredLogKeepsItsRewindsAndCountsItsView) {
  std::string s = NewSessionId();
  AppendTexts(s, 3);
  MustRewind(s, 1);
  AppendTexts(s, 1);
  auto events = store_->ReadEvents(s);
  ASSERT_TRUE(events);
  Session copy = *store_->GetSession(s);
  copy.id = "restored";
  ASSERT_TRUE(store_->RestoreSession(copy, *events, {}).ok());
  EXPECT_EQ(ViewSeqs("restored"), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(store_->GetSession("restored")->message_count, 2);
  EXPECT_EQ(store_->ReadEvents("restored")->at(3).rewind.to_seq, 1);

  // A rewind that does not go back is not a log this store could have written.
  std::vector<Event> bad = *events;
  bad[3].rewind.to_seq = 4;
  copy.id = "bad";
  auto st = store_->RestoreSession(copy, bad, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_EQ(store_->GetSession("bad").error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sessiondb::testing
