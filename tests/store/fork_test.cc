// Forks: a session whose history is its parent's up to a seq, then its own.
// At seq 0, in the middle and at the end; forks of forks; the parent never
// changes; images shared, not copied; deleting a parent keeps forks readable.
#include "blob/base64.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class Forks : public BackendTest {
 protected:
  // A session of `n` user/assistant messages "m1".."mn".
  std::string SessionOf(int n, const std::string& id = "") {
    std::string s = NewSessionId(id);
    for (int i = 1; i <= n; ++i) {
      AppendText(s, "m" + std::to_string(i), i % 2 ? Role::kUser : Role::kAssistant);
    }
    return s;
  }

  std::vector<std::string> Texts(const std::string& session) {
    auto read = store_->ReadMessages(session);
    EXPECT_TRUE(read) << read.error().ToString();
    std::vector<std::string> out;
    if (read) {
      for (const Message& m : *read) out.push_back(m.Text());
    }
    return out;
  }

  Session Fork(const std::string& parent, int64_t at, const NewSession& child = {}) {
    auto f = store_->ForkSession(parent, at, child);
    EXPECT_TRUE(f) << f.error().ToString();
    return f ? *f : Session{};
  }
};
SESSIONDB_FOR_EACH_BACKEND(Forks);

std::vector<std::string> Numbered(int from, int to, const std::string& prefix = "m") {
  std::vector<std::string> out;
  for (int i = from; i <= to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

TEST_P(Forks, AForkInTheMiddleReadsTheParentUpToThatSeqThenItsOwn) {
  std::string parent = SessionOf(6);
  Session fork = Fork(parent, 4);
  EXPECT_EQ(fork.parent_id, parent);
  EXPECT_EQ(fork.fork_seq, 4);
  EXPECT_EQ(fork.last_seq, 4);
  EXPECT_EQ(fork.message_count, 4);
  EXPECT_EQ(Texts(fork.id), Numbered(1, 4));

  AppendResult own = AppendText(fork.id, "f5");
  EXPECT_EQ(own.seq, 5);
  EXPECT_EQ(Texts(fork.id), (std::vector<std::string>{"m1", "m2", "m3", "m4", "f5"}));
  // The parent is never changed.
  EXPECT_EQ(Texts(parent), Numbered(1, 6));
  EXPECT_EQ(store_->GetSession(parent)->last_seq, 6);

  auto read = store_->ReadMessages(fork.id);
  ASSERT_TRUE(read);
  // Inherited events say where they are stored.
  EXPECT_EQ((*read)[0].session_id, parent);
  EXPECT_EQ((*read)[4].session_id, fork.id);
  EXPECT_EQ((*read)[4].seq, 5);
}

TEST_P(Forks, AForkAtZeroStartsEmptyAndAtTheEndHoldsEverything) {
  std::string parent = SessionOf(3);
  Session empty = Fork(parent, 0);
  EXPECT_TRUE(Texts(empty.id).empty());
  EXPECT_EQ(empty.message_count, 0);
  EXPECT_EQ(empty.title, "New Session");
  EXPECT_EQ(empty.preview, "");
  EXPECT_EQ(AppendText(empty.id, "fresh").seq, 1);
  EXPECT_EQ(Texts(empty.id), std::vector<std::string>{"fresh"});

  Session whole = Fork(parent, 3);
  EXPECT_EQ(Texts(whole.id), Numbered(1, 3));
  EXPECT_EQ(whole.title, "m1");
  EXPECT_EQ(whole.preview, "m1");

  // A renamed parent passes its title on; appending to the fork keeps it.
  ASSERT_TRUE(store_->RenameSession(parent, "Named").ok());
  Session named = Fork(parent, 1);
  EXPECT_EQ(named.title, "Named");
  AppendText(named.id, "more");
  EXPECT_EQ(store_->GetSession(named.id)->title, "Named");
}

TEST_P(Forks, AForkPointOutsideTheLogIsRefusedAndNothingIsCreated) {
  std::string parent = SessionOf(3);
  for (int64_t at : {int64_t{-1}, int64_t{4}, int64_t{1000}}) {
    auto f = store_->ForkSession(parent, at, {.id = "bad-fork"});
    ASSERT_FALSE(f) << at;
    EXPECT_EQ(f.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(f.error().message().find("1..3"), std::string::npos) << f.error().message();
  }
  EXPECT_EQ(store_->GetSession("bad-fork").error().code(), StatusCode::kNotFound);
  auto missing = store_->ForkSession("no-such-session", 0, {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  auto taken = store_->ForkSession(parent, 1, {.id = parent});
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().code(), StatusCode::kAlreadyExists);
}

TEST_P(Forks, ForksOfForksChainTheirHistories) {
  std::string root = SessionOf(5);
  Session a = Fork(root, 3);
  AppendText(a.id, "a4");
  AppendText(a.id, "a5");
  Session b = Fork(a.id, 4);  // m1 m2 m3 a4
  AppendText(b.id, "b5");
  Session c = Fork(b.id, 5);  // m1 m2 m3 a4 b5
  AppendText(c.id, "c6");
  EXPECT_EQ(Texts(c.id), (std::vector<std::string>{"m1", "m2", "m3", "a4", "b5", "c6"}));
  EXPECT_EQ(Texts(b.id), (std::vector<std::string>{"m1", "m2", "m3", "a4", "b5"}));
  EXPECT_EQ(Texts(a.id), (std::vector<std::string>{"m1", "m2", "m3", "a4", "a5"}));
  EXPECT_EQ(Texts(root), Numbered(1, 5));
  EXPECT_EQ(store_->GetSession(c.id)->message_count, 6);

  // Paging through a chain crosses segment boundaries without gaps.
  auto page = store_->ReadMessages(c.id, 3, 2);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].Text(), "m3");
  EXPECT_EQ((*page)[1].Text(), "a4");
  auto last = store_->ReadLastMessages(c.id, 4);
  ASSERT_TRUE(last);
  std::vector<std::string> tail;
  for (const Message& m : *last) tail.push_back(m.Text());
  EXPECT_EQ(tail, (std::vector<std::string>{"m3", "a4", "b5", "c6"}));
}

TEST_P(Forks, ListingShowsForkOriginsAndAnExplicitTitle) {
  std::string parent = SessionOf(2);
  Fork(parent, 1, {.id = "child", .title = "Try another way"});
  auto page = store_->ListSessions({});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->sessions.size(), 2u);
  const Session& listed = page->sessions[0];
  EXPECT_EQ(listed.id, "child");
  EXPECT_EQ(listed.parent_id, parent);
  EXPECT_EQ(listed.fork_seq, 1);
  EXPECT_EQ(listed.title, "Try another way");
  EXPECT_EQ(page->sessions[1].parent_id, "");
}

TEST_P(Forks, ImagesAreSharedNotCopied) {
  std::string parent = NewSessionId();
  std::string png = MakePng(8, 8, "shared");
  Message m;
  m.parts = {Part::Text("see"),
             Part::ImageFromDataUri("data:image/png;base64," + blob::Base64Encode(png))};
  ASSERT_TRUE(store_->Append(parent, m));
  const size_t blobs = BlobCount();
  Session fork = Fork(parent, 1);
  auto read = store_->ReadMessages(fork.id);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 1u);
  const Resource& r = *(*read)[0].parts[1].resource;
  EXPECT_FALSE(r.missing);
  EXPECT_EQ(*store_->ReadBlob(r.content_sha256, /*verify=*/true), png);
  EXPECT_EQ(BlobCount(), blobs);
}

TEST_P(Forks, DeletingAParentKeepsItsForksReadableAndHidesIt) {
  std::string parent = SessionOf(4, "parent");
  Session fork = Fork(parent, 3, {.id = "fork"});
  AppendText(fork.id, "f4");
  ASSERT_TRUE(store_->DeleteSession(parent).ok());

  EXPECT_EQ(store_->GetSession(parent).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadMessages(parent).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteSession(parent).code(), StatusCode::kNotFound);
  auto page = store_->ListSessions({.archived = ArchiveFilter::kAll});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->sessions.size(), 1u);
  EXPECT_EQ(page->sessions[0].id, "fork");
  EXPECT_EQ(store_->Stats()->sessions, 1);
  // Its id stays taken while a fork reads its events.
  EXPECT_EQ(store_->CreateSession({.id = parent}).error().code(), StatusCode::kAlreadyExists);

  EXPECT_EQ(Texts(fork.id), (std::vector<std::string>{"m1", "m2", "m3", "f4"}));
  Reopen();
  EXPECT_EQ(Texts(fork.id), (std::vector<std::string>{"m1", "m2", "m3", "f4"}));

  // Once the last fork goes, so does the parent, and its id is free again.
  ASSERT_TRUE(store_->DeleteSession(fork.id).ok());
  EXPECT_TRUE(store_->CreateSession({.id = parent}));
  EXPECT_TRUE(Texts(parent).empty());
}

TEST_P(Forks, DeletingAForkLeavesItsParentAlone) {
  std::string parent = SessionOf(3);
  Session fork = Fork(parent, 2);
  ASSERT_TRUE(store_->DeleteSession(fork.id).ok());
  EXPECT_EQ(Texts(parent), Numbered(1, 3));
  EXPECT_TRUE(store_->CollectGarbage({.grace_ms = 0}));
  EXPECT_EQ(Texts(parent), Numbered(1, 3));
}

TEST_P(Forks, ForkMessageCountLeavesOutInheritedEventsThatAreNotMessages) {
  std::string parent = SessionOf(4);
  ASSERT_TRUE(store_->Compact(parent, {.from_seq = 1, .to_seq = 2, .summary = "two greetings"}));
  AppendText(parent, "m6");
  Session fork = Fork(parent, 6);  // 5 messages and a compaction
  EXPECT_EQ(fork.message_count, 5);
  auto events = store_->ReadEvents(fork.id);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 6u);
  EXPECT_EQ((*events)[4].type, EventType::kCompaction);
  EXPECT_EQ(Texts(fork.id).size(), 5u);
}

}  // namespace
}  // namespace sessiondb::testing
