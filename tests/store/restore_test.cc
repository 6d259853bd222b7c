// RestoreSession then RestoreEvents: a session restored in runs, as imports
// too long to hold at once write it, with ids, seqs and times as given.
#include "blob/sha256.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class Restores : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(Restores);

Event TextEvent(int64_t seq, const std::string& text, Role role = Role::kUser) {
  Event e;
  e.id = "evt-" + std::to_string(seq);
  e.seq = seq;
  e.ts_ms = 1'000 * seq;
  e.message.id = e.id;
  e.message.role = role;
  e.message.parts = {Part::Text(text)};
  return e;
}

TEST_P(Restores, ASessionRestoredInRunsReadsAsOne) {
  Session s{.id = "runs",
            .title = "hello there",
            .preview = "hello there",
            .created_ms = 1000,
            .updated_ms = 2000};
  std::vector<Event> first = {TextEvent(1, "", Role::kSystem), TextEvent(2, "hello there")};
  first[0].message.parts = {Part::ToolResult("c0", "boot")};
  ASSERT_TRUE(store_->RestoreSession(s, first, {}).ok());

  const std::string png = MakePng(4, 4, "run-two");
  const std::string sha = blob::Sha256Hex(png);
  Event image = TextEvent(3, "a picture");
  Resource r{.resource_id = "res_run",
             .content_sha256 = sha,
             .mime = "image/png",
             .size = static_cast<int64_t>(png.size()),
             .width = 4,
             .height = 4};
  Part part;
  part.type = PartType::kImage;
  part.resource = r;
  image.message.parts.push_back(part);
  image.message.usage = Usage{5, 6, 0, 0};
  Event compaction;
  compaction.id = "evt-4";
  compaction.seq = 4;
  compaction.ts_ms = 9'000;
  compaction.type = EventType::kCompaction;
  compaction.compaction = {.from_seq = 1, .to_seq = 2, .summary = "greetings"};
  std::vector<Event> second = {image, compaction};
  auto source = [&](std::string_view want) -> Result<std::string> {
    if (want == sha) return png;
    return Err(Status::NotFound(std::string(want)));
  };
  ASSERT_TRUE(store_->RestoreEvents("runs", second, source).ok());

  auto session = store_->GetSession("runs");
  ASSERT_TRUE(session);
  EXPECT_EQ(session->last_seq, 4);
  EXPECT_EQ(session->message_count, 3);
  EXPECT_EQ(session->updated_ms, 9'000);     // the newest event's time
  EXPECT_EQ(session->title, "hello there");  // as given: later runs do not change it
  EXPECT_EQ(session->preview, "hello there");
  auto events = store_->ReadEvents("runs");
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ((*events)[2].id, "evt-3");
  EXPECT_EQ((*events)[2].ts_ms, 3'000);
  EXPECT_EQ(*(*events)[2].message.parts[1].resource, r);
  EXPECT_EQ(*store_->ReadBlob(sha, true), png);
  EXPECT_EQ((*events)[3].compaction.summary, "greetings");
  EXPECT_EQ(store_->GetUsage("runs")->turns, 1);
  // And it goes on like any session.
  EXPECT_EQ(AppendText("runs", "next").seq, 5);
}

TEST_P(Restores, EventsThatDoNotContinueTheLogAreRefusedAndNothingIsWritten) {
  ASSERT_TRUE(
      store_
          ->RestoreSession({.id = "gap", .title = "x"}, std::vector<Event>{TextEvent(1, "one")}, {})
          .ok());
  for (int64_t seq : {int64_t{1}, int64_t{3}}) {
    Status st = store_->RestoreEvents("gap", std::vector<Event>{TextEvent(seq, "bad")}, {});
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << seq;
    EXPECT_NE(st.message().find("ends at seq 1"), std::string::npos) << st.message();
  }
  EXPECT_EQ(store_->ReadEvents("gap")->size(), 1u);
  EXPECT_EQ(store_->GetSession("gap")->last_seq, 1);
  EXPECT_EQ(store_->RestoreEvents("nope", std::vector<Event>{TextEvent(1, "x")}, {}).code(),
            StatusCode::kNotFound);
}

Event RewindEvent(int64_t seq, int64_t to_seq) {
  Event e;
  e.id = "evt-" + std::to_string(seq);
  e.seq = seq;
  e.ts_ms = 1'000 * seq;
  e.type = EventType::kRewind;
  e.rewind.to_seq = to_seq;
  return e;
}

// message_count counts the view (store.h, Rewind): a later run's rewinds
// take out messages of earlier runs and of the run itself.
TEST_P(Restores, ALaterRunsRewindsCountOnlyTheViewsMessages) {
  ASSERT_TRUE(store_
                  ->RestoreSession({.id = "rew", .title = "x"},
                                   std::vector<Event>{TextEvent(1, "one"), TextEvent(2, "two"),
                                                      TextEvent(3, "three")},
                                   {})
                  .ok());
  // 4, then back to 1 (2, 3 and 4 leave the view), then 6, back to 5 (the
  // rewind at 5 is never in the view, so 6 leaves it too), then 8.
  std::vector<Event> run = {TextEvent(4, "four"), RewindEvent(5, 1), TextEvent(6, "six"),
                            RewindEvent(7, 5), TextEvent(8, "eight")};
  ASSERT_TRUE(store_->RestoreEvents("rew", run, {}).ok());
  // The Result is kept: a range-for over *ReadMessages(...) would walk a
  // destroyed temporary.
  auto messages = store_->ReadMessages("rew");
  ASSERT_TRUE(messages) << messages.error().ToString();
  std::vector<int64_t> view;
  for (const Message& m : *messages) view.push_back(m.seq);
  EXPECT_EQ(view, (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(store_->GetSession("rew")->message_count, 2);
  EXPECT_EQ(store_->GetSession("rew")->last_seq, 8);

  // A run without rewinds adds its messages; one whose rewind keeps
  // everything changes nothing.
  ASSERT_TRUE(store_->RestoreEvents("rew", std::vector<Event>{TextEvent(9, "nine")}, {}).ok());
  EXPECT_EQ(store_->GetSession("rew")->message_count, 3);
  ASSERT_TRUE(store_->RestoreEvents("rew", std::vector<Event>{RewindEvent(10, 9)}, {}).ok());
  EXPECT_EQ(store_->GetSession("rew")->message_count, 3);

  // A fork of it restored with a run that rewinds into what it inherited.
  auto fork = store_->ForkSession("rew", 10, {});
  ASSERT_TRUE(fork);
  ASSERT_TRUE(store_
                  ->RestoreEvents(fork->id,
                                  std::vector<Event>{TextEvent(11, "own"), RewindEvent(12, 8),
                                                     TextEvent(13, "later")},
                                  {})
                  .ok());
  view.clear();
  auto fork_messages = store_->ReadMessages(fork->id);
  ASSERT_TRUE(fork_messages) << fork_messages.error().ToString();
  for (const Message& m : *fork_messages) view.push_back(m.seq);
  EXPECT_EQ(view, (std::vector<int64_t>{1, 8, 13}));
  EXPECT_EQ(store_->GetSession(fork->id)->message_count, 3);
}

// History is kept as it was written: a restored message may hold more
// images than an append may, and an attachment an import did not store
// stays as a descriptor that says why. Appends keep every limit.
TEST_P(Restores, HistoryIsNotHeldToTheCountLimitsOfAnAppend) {
  Event many = TextEvent(1, "seven screenshots");
  std::vector<std::string> pngs;
  for (int i = 0; i < 7; ++i) {
    pngs.push_back(MakePng(4, 4, "shot" + std::to_string(i)));
    Part part;
    part.type = PartType::kImage;
    part.resource = Resource{.resource_id = "res_" + std::to_string(i),
                             .content_sha256 = blob::Sha256Hex(pngs.back()),
                             .mime = "image/png",
                             .size = static_cast<int64_t>(pngs.back().size()),
                             .width = 4,
                             .height = 4};
    many.message.parts.push_back(part);
  }
  Event described = TextEvent(2, "and a huge one");
  Part big;
  big.type = PartType::kImage;
  big.resource = Resource{.resource_id = "res_big",
                          .mime = "image/png",
                          .size = 300'000'000,
                          .width = 9000,
                          .height = 9000};
  big.resource->not_stored = "it is 286.1 MiB; an import stores attachments up to 100.0 MiB";
  described.message.parts.push_back(big);
  auto source = [&](std::string_view want) -> Result<std::string> {
    for (const std::string& png : pngs) {
      if (blob::Sha256Hex(png) == want) return png;
    }
    return Err(Status::NotFound(std::string(want)));
  };
  ASSERT_TRUE(store_
                  ->RestoreSession({.id = "history", .title = "old"},
                                   std::vector<Event>{many, described}, source)
                  .ok());
  auto events = store_->ReadEvents("history");
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].message.parts.size(), 8u);
  const Resource& kept = *(*events)[1].message.parts[1].resource;
  EXPECT_EQ(kept.not_stored, big.resource->not_stored);
  EXPECT_TRUE(kept.content_sha256.empty());
  EXPECT_FALSE(kept.missing);
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
  EXPECT_TRUE(store_->Verify()->clean());

  // An append is held to the limit, and cannot claim bytes it did not give.
  Message now;
  now.parts = {Part::Text("seven now")};
  for (const std::string& png : pngs) now.parts.push_back(Part::ImageFromBytes(png, "image/png"));
  auto refused = store_->Append("history", now);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("7 images"), std::string::npos);
  Message claim;
  claim.parts = {Part::Text("no bytes"), big};
  EXPECT_EQ(store_->Append("history", claim).error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sessiondb::testing
