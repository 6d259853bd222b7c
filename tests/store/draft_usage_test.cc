// Drafts (streaming output saved as it grows, finished into a message) and
// per-session token usage.
#include <chrono>
#include <thread>

#include "sessiondb/draft_writer.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

using namespace std::chrono_literals;

class Drafts : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(Drafts);
class Usages : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(Usages);

// Polls `done` for up to 10 s; the background saver runs on its own clock.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

TEST_P(Drafts, ADraftIsSavedListedAndFinishedIntoOneMessage) {
  std::string s = NewSessionId();
  AppendText(s, "write a poem");
  auto d = store_->OpenDraft(s, Role::kAssistant, "gpt-test");
  ASSERT_TRUE(d) << d.error().ToString();
  EXPECT_EQ(d->id.rfind("draft_", 0), 0u);
  Draft draft = *d;
  draft.text = "Roses are";
  draft.reasoning = "rhyme first";
  now_ms_ += 500;
  ASSERT_TRUE(store_->SaveDraft(draft).ok());

  Reopen();  // as after a crash: the draft is there, incomplete
  auto listed = store_->ListDrafts(s);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].text, "Roses are");
  EXPECT_EQ((*listed)[0].reasoning, "rhyme first");
  EXPECT_EQ((*listed)[0].updated_ms, d->created_ms + 500);
  EXPECT_EQ(store_->ReadMessages(s)->size(), 1u);  // not in the log yet

  auto done = store_->FinishDraft(d->id, {});
  ASSERT_TRUE(done) << done.error().ToString();
  EXPECT_EQ(done->seq, 2);
  auto read = store_->ReadMessages(s);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 2u);
  const Message& m = (*read)[1];
  EXPECT_EQ(m.role, Role::kAssistant);
  EXPECT_EQ(m.model, "gpt-test");
  ASSERT_EQ(m.parts.size(), 2u);
  EXPECT_EQ(m.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(m.parts[1].text, "Roses are");
  EXPECT_TRUE(store_->ListDrafts(s)->empty());

  // Finished means gone: a second finish or a save appends nothing.
  EXPECT_EQ(store_->FinishDraft(d->id, {}).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->SaveDraft(draft).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadMessages(s)->size(), 2u);
}

TEST_P(Drafts, FinishingWithPartsUsesThemAndDiscardRemovesTheDraft) {
  std::string s = NewSessionId();
  auto a = store_->OpenDraft(s, Role::kAssistant, "");
  auto b = store_->OpenDraft(s, Role::kAssistant, "");
  ASSERT_TRUE(a && b);
  Message final_message;
  final_message.parts = {Part::Text("final answer"), Part::ToolCall("c1", "search", "{}")};
  final_message.usage = Usage{10, 5, 0, 0};
  auto done = store_->FinishDraft(a->id, final_message);
  ASSERT_TRUE(done);
  auto read = store_->ReadMessages(s);
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].Text(), "final answer");
  EXPECT_EQ((*read)[0].parts[1].tool_name, "search");
  EXPECT_EQ(store_->GetUsage(s)->turns, 1);

  ASSERT_TRUE(store_->DiscardDraft(b->id).ok());
  EXPECT_TRUE(store_->ListDrafts(s)->empty());
  EXPECT_EQ(store_->DiscardDraft(b->id).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->OpenDraft("nope", Role::kAssistant, "").error().code(), StatusCode::kNotFound);
}

TEST_P(Drafts, TheWriterSavesOnItsIntervalOnlyWhenSomethingChanged) {
  std::string s = NewSessionId();
  auto w = DraftWriter::Open(store_.get(), s, {.save_interval = 50ms});
  ASSERT_TRUE(w) << w.error().ToString();
  DraftWriter& writer = **w;
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(writer.saves(), 0);  // nothing streamed: nothing written

  writer.AppendText("Hel");
  writer.AppendText("lo");
  ASSERT_TRUE(Eventually([&] { return writer.saves() >= 1; }));
  auto listed = store_->ListDrafts(s);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].text, "Hello");
  const int64_t after_first = writer.saves();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(writer.saves(), after_first);  // idle again: no more writes

  writer.AppendText(", world");
  auto done = writer.Finish({});
  ASSERT_TRUE(done) << done.error().ToString();
  auto read = store_->ReadMessages(s);
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].Text(), "Hello, world");  // the unsaved tail too
  EXPECT_TRUE(store_->ListDrafts(s)->empty());
}

TEST_P(Drafts, ClosingWithoutFinishingLeavesAnIncompleteDraftWithEverything) {
  std::string s = NewSessionId();
  std::string id;
  {
    auto w = DraftWriter::Open(store_.get(), s, {.save_interval = 1h});
    ASSERT_TRUE(w);
    id = (*w)->draft_id();
    (*w)->AppendText("partial output");
    EXPECT_TRUE((*w)->Close().ok());
  }
  auto listed = store_->ListDrafts(s);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, id);
  EXPECT_EQ((*listed)[0].text, "partial output");
  EXPECT_TRUE(store_->ReadMessages(s)->empty());
}

TEST_P(Drafts, DeletingTheSessionDropsItsDrafts) {
  std::string s = NewSessionId();
  auto d = store_->OpenDraft(s, Role::kAssistant, "");
  ASSERT_TRUE(d);
  ASSERT_TRUE(store_->DeleteSession(s).ok());
  EXPECT_EQ(store_->SaveDraft(*d).code(), StatusCode::kNotFound);
}

TEST_P(Usages, TotalsArePerSessionProviderAndModel) {
  std::string s = NewSessionId();
  auto turn = [&](std::string provider, std::string model, Usage u) {
    Message m;
    m.role = Role::kAssistant;
    m.parts = {Part::Text("answer")};
    m.provider = std::move(provider);
    m.model = std::move(model);
    m.usage = u;
    ASSERT_TRUE(store_->Append(s, m));
  };
  AppendText(s, "question");  // no usage: not a turn
  turn("openai", "gpt-5", {100, 20, 80, 5});
  turn("openai", "gpt-5", {150, 30, 100, 0});
  turn("anthropic", "claude", {10, 1, 0, 0});
  auto other = NewSessionId();
  AppendText(other, "elsewhere");

  Reopen();
  auto u = store_->GetUsage(s);
  ASSERT_TRUE(u) << u.error().ToString();
  EXPECT_EQ(u->turns, 3);
  EXPECT_EQ(u->total, (Usage{260, 51, 180, 5}));
  ASSERT_EQ(u->by_model.size(), 2u);
  EXPECT_EQ(u->by_model[0], (ModelUsage{"anthropic", "claude", 1, {10, 1, 0, 0}}));
  EXPECT_EQ(u->by_model[1], (ModelUsage{"openai", "gpt-5", 2, {250, 50, 180, 5}}));
  auto read = store_->ReadMessages(s);
  EXPECT_EQ((*read)[1].provider, "openai");

  EXPECT_EQ(store_->GetUsage(other)->turns, 0);
  EXPECT_EQ(store_->GetUsage("nope").error().code(), StatusCode::kNotFound);

  // A fork counts its own turns, not its parent's.
  auto fork = store_->ForkSession(s, 4, {});
  ASSERT_TRUE(fork);
  EXPECT_EQ(store_->GetUsage(fork->id)->turns, 0);
  turn("openai", "gpt-5", {1, 1, 1, 1});
  EXPECT_EQ(store_->GetUsage(s)->turns, 4);
}

}  // namespace
}  // namespace sessiondb::testing
