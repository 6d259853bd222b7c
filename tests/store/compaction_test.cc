// Events beyond messages: compactions (and what they admit about images),
// resource views, the prune that erases what a summary covers, and the
// projection input that resumes from the last compaction.
#include <libpq-fe.h>
#include <sys/stat.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "blob/base64.h"
#include "blob/sha256.h"
#include "sessiondb/projection.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class Compactions : public BackendTest {
 protected:
  // Appends a user message with a text and one PNG; returns its descriptor.
  Resource AppendImage(const std::string& session, const std::string& salt,
                       const std::string& text = "look at this") {
    Message m;
    m.parts = {Part::Text(text),
               Part::ImageFromBytes(MakePng(32, 16, salt), "image/png", salt + ".png")};
    auto r = store_->Append(session, m);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? r->resources.at(0) : Resource{};
  }

  std::vector<int64_t> Seqs(const std::vector<Event>& events) {
    std::vector<int64_t> out;
    for (const Event& e : events) out.push_back(e.seq);
    return out;
  }
};
SESSIONDB_FOR_EACH_BACKEND(Compactions);

TEST_P(Compactions, ACompactionIsAnEventThatKeepsTheHistoryReadable) {
  std::string s = NewSessionId();
  for (int i = 1; i <= 4; ++i) AppendText(s, "m" + std::to_string(i));
  auto c = store_->Compact(s, {.from_seq = 1,
                               .to_seq = 3,
                               .summary = "The user said m1 to m3.",
                               .strategy = "llm-summary",
                               .model = "gpt-test",
                               .limitations = "Exact wording is lost."});
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_EQ(c->seq, 5);
  EXPECT_EQ(c->type, EventType::kCompaction);
  EXPECT_EQ(c->compaction.limitations, "Exact wording is lost.");  // no images, nothing added
  EXPECT_TRUE(c->compaction.images.empty());

  Reopen();
  auto session = store_->GetSession(s);
  EXPECT_EQ(session->last_seq, 5);
  EXPECT_EQ(session->message_count, 4);
  EXPECT_EQ(store_->ReadMessages(s)->size(), 4u);  // the full history stays
  auto events = store_->ReadEvents(s);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 5u);
  const Event& stored = events->back();
  EXPECT_EQ(stored.id, c->id);
  EXPECT_EQ(stored.compaction, c->compaction);
  EXPECT_EQ(stored.compaction.strategy, "llm-summary");
  EXPECT_EQ(stored.compaction.model, "gpt-test");

  // The projection input: the summary in place of 1..3, then what follows.
  auto input = store_->ReadForProjection(s);
  ASSERT_TRUE(input) << input.error().ToString();
  EXPECT_EQ(Seqs(*input), (std::vector<int64_t>{5, 4}));
}

TEST_P(Compactions, ARangeThatHeldImagesSaysTheSummaryIsNotThemAndNamesThem) {
  std::string s = NewSessionId();
  Resource cat = AppendImage(s, "cat");
  AppendText(s, "a cat", Role::kAssistant);
  Resource dog = AppendImage(s, "dog");
  auto c = store_->Compact(s, {.from_seq = 1,
                               .to_seq = 3,
                               .summary = "Two pets were shown.",
                               .limitations = "Colours were not described."});
  ASSERT_TRUE(c) << c.error().ToString();
  ASSERT_EQ(c->compaction.images.size(), 2u);
  EXPECT_EQ(c->compaction.images[0], cat);
  EXPECT_EQ(c->compaction.images[1], dog);
  const std::string& lim = c->compaction.limitations;
  EXPECT_EQ(lim.rfind("Colours were not described.\n", 0), 0u) << lim;
  EXPECT_NE(lim.find("not the images"), std::string::npos) << lim;
  EXPECT_NE(lim.find(cat.resource_id), std::string::npos) << lim;
  EXPECT_NE(lim.find(dog.resource_id), std::string::npos) << lim;
  EXPECT_NE(lim.find("cat.png"), std::string::npos) << lim;
  Reopen();
  EXPECT_EQ(store_->ReadEvents(s)->back().compaction.limitations, lim);
}

TEST_P(Compactions, BadRequestsAreRefusedAndWriteNothing) {
  std::string s = NewSessionId();
  AppendText(s, "one");
  AppendText(s, "two");
  struct Case {
    CompactionRequest request;
    std::string expect;
  };
  std::vector<Case> cases = {
      {{.from_seq = 1, .to_seq = 2, .summary = ""}, "summary"},
      {{.from_seq = 0, .to_seq = 2, .summary = "x"}, "1..2"},
      {{.from_seq = 2, .to_seq = 1, .summary = "x"}, "1..2"},
      {{.from_seq = 1, .to_seq = 3, .summary = "x"}, "1..2"},
      {{.from_seq = 1, .to_seq = 2, .summary = std::string("\xff\xfe", 2)}, "UTF-8"},
  };
  for (const Case& c : cases) {
    auto r = store_->Compact(s, c.request);
    ASSERT_FALSE(r) << c.expect;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.expect), std::string::npos) << r.error().message();
  }
  EXPECT_EQ(store_->Compact("nope", {.from_seq = 1, .to_seq = 1, .summary = "x"}).error().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadEvents(s)->size(), 2u);
  EXPECT_EQ(store_->GetSession(s)->last_seq, 2);
}

TEST_P(Compactions, ProjectionInputEqualsReplayingTheWholeLog) {
  // Compactions at the start, in the middle, nested, and one inside a later
  // one's range: reading from the last compaction gives what replaying all
  // events gives.
  std::string s = NewSessionId();
  auto add = [&](int n) {
    for (int i = 0; i < n; ++i) AppendText(s, "t" + std::to_string(i));
  };
  add(5);                                                                           // 1..5
  ASSERT_TRUE(store_->Compact(s, {.from_seq = 2, .to_seq = 3, .summary = "A"}));    // 6
  add(3);                                                                           // 7..9
  ASSERT_TRUE(store_->Compact(s, {.from_seq = 1, .to_seq = 7, .summary = "B"}));    // 10
  add(2);                                                                           // 11, 12
  ASSERT_TRUE(store_->Compact(s, {.from_seq = 11, .to_seq = 11, .summary = "C"}));  // 13
  add(1);                                                                           // 14
  auto all = store_->ReadEvents(s);
  ASSERT_TRUE(all);
  std::vector<Event> replayed = ReplayCompactions(*all);
  auto input = store_->ReadForProjection(s);
  ASSERT_TRUE(input) << input.error().ToString();
  EXPECT_EQ(Seqs(*input), Seqs(replayed));
  // B stands for 1..7 (and so for A), then 8, 9, then 12, C for 11... in
  // position order: B@1, 8, 9, C@11, 12, 14.
  EXPECT_EQ(Seqs(*input), (std::vector<int64_t>{10, 8, 9, 13, 12, 14}));

  // A fork inherits the compactions before its fork point.
  auto fork = store_->ForkSession(s, 12, {});
  ASSERT_TRUE(fork);
  AppendText(fork->id, "own");
  auto fork_input = store_->ReadForProjection(fork->id);
  ASSERT_TRUE(fork_input);
  EXPECT_EQ(Seqs(*fork_input), (std::vector<int64_t>{10, 8, 9, 11, 12, 13}));
}

TEST_P(Compactions, ASummaryOfASummaryStandsForWhatTheFirstCovered) {
  std::string s = NewSessionId();
  for (int i = 0; i < 4; ++i) AppendText(s, "t" + std::to_string(i));                  // 1..4
  ASSERT_TRUE(store_->Compact(s, {.from_seq = 1, .to_seq = 4, .summary = "first"}));   // 5
  AppendText(s, "t5");                                                                 // 6
  ASSERT_TRUE(store_->Compact(s, {.from_seq = 5, .to_seq = 6, .summary = "second"}));  // 7
  AppendText(s, "t7");                                                                 // 8
  auto input = store_->ReadForProjection(s);
  ASSERT_TRUE(input) << input.error().ToString();
  // 1..4 do not come back: "second" summarised "first", which stood for them.
  EXPECT_EQ(Seqs(*input), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(Seqs(ReplayCompactions(*store_->ReadEvents(s))), Seqs(*input));
}

TEST_P(Compactions, AResourceViewRecordsTheDescriptorAndIsInTheLog) {
  std::string s = NewSessionId();
  Resource cat = AppendImage(s, "cat");
  AppendText(s, "nice", Role::kAssistant);
  auto v = store_->RecordResourceView(s, cat.resource_id, "compare with the new photo");
  ASSERT_TRUE(v) << v.error().ToString();
  EXPECT_EQ(v->type, EventType::kResourceView);
  EXPECT_EQ(v->seq, 3);
  EXPECT_EQ(v->resource_view.resource, cat);
  EXPECT_EQ(v->resource_view.message_seq, 1);
  Reopen();
  auto events = store_->ReadEvents(s);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ(events->back().resource_view.reason, "compare with the new photo");
  EXPECT_EQ(events->back().resource_view.resource, cat);
  EXPECT_EQ(store_->GetSession(s)->message_count, 2);

  // A fork can view what it inherited.
  auto fork = store_->ForkSession(s, 1, {});
  ASSERT_TRUE(fork);
  EXPECT_TRUE(store_->RecordResourceView(fork->id, cat.resource_id, "again"));
}

TEST_P(Compactions, ViewingAnUnknownResourceOrARemoteLinkIsRefused) {
  std::string s = NewSessionId();
  Message m;
  m.parts = {Part::Link("https://example.com/cat.png", "cat", "image/png")};
  auto link = store_->Append(s, m);
  ASSERT_TRUE(link);
  auto unknown = store_->RecordResourceView(s, "res_nope", "why");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), StatusCode::kNotFound);
  auto remote = store_->RecordResourceView(s, link->resources[0].resource_id, "why");
  ASSERT_FALSE(remote);
  EXPECT_EQ(remote.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(remote.error().message().find("never fetched"), std::string::npos);
  EXPECT_EQ(store_->RecordResourceView("nope", "res_x", "").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadEvents(s)->size(), 1u);
}

TEST_P(Compactions, AViewOfAResourceWhoseBlobIsGoneReadsAsMissing) {
  std::string s = NewSessionId();
  Resource cat = AppendImage(s, "cat");
  RemoveBlob(cat.content_sha256);
  auto v = store_->RecordResourceView(s, cat.resource_id, "look again");
  ASSERT_TRUE(v) << v.error().ToString();
  auto events = store_->ReadEvents(s);
  ASSERT_TRUE(events);
  EXPECT_TRUE(events->back().resource_view.resource.missing);
}

TEST_P(Compactions, PruneErasesCoveredMessagesAndTheirOnlyBlobsButNotOthers) {
  std::string other = NewSessionId();
  Resource shared = AppendImage(other, "shared");  // also used below
  Resource kept = AppendImage(other, "kept");

  std::string s = NewSessionId();
  Resource lone = AppendImage(s, "lone", "secret words");
  Message again;
  again.parts = {Part::Text("the shared one"),
                 Part::ImageFromBytes(MakePng(32, 16, "shared"), "image/png")};
  ASSERT_TRUE(store_->Append(s, again));
  AppendText(s, "after the range");
  auto c = store_->Compact(s, {.from_seq = 1, .to_seq = 2, .summary = "two images"});
  ASSERT_TRUE(c);

  auto pruned = store_->PruneCompaction(s, c->seq);
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  EXPECT_EQ(pruned->events_pruned, 2);
  EXPECT_EQ(pruned->blobs_deleted, 1);  // "lone"; "shared" is still the other session's
  EXPECT_GT(pruned->bytes_freed, 0);

  EXPECT_FALSE(store_->ReadBlob(lone.content_sha256));
  EXPECT_EQ(*store_->ReadBlob(shared.content_sha256, true), MakePng(32, 16, "shared"));
  EXPECT_EQ(*store_->ReadBlob(kept.content_sha256, true), MakePng(32, 16, "kept"));
  EXPECT_FALSE(RawLogContains("secret words"));

  auto read = store_->ReadMessages(s);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 3u);
  EXPECT_TRUE((*read)[0].pruned);
  EXPECT_TRUE((*read)[0].parts.empty());
  EXPECT_EQ((*read)[0].role, Role::kUser);
  EXPECT_FALSE((*read)[2].pruned);
  EXPECT_EQ((*read)[2].Text(), "after the range");
  auto verify = store_->Verify();
  ASSERT_TRUE(verify);
  EXPECT_TRUE(verify->clean());
  EXPECT_TRUE(warnings_.empty());  // no message refers to the deleted blob any more

  // Pruning again finds nothing left to drop.
  auto twice = store_->PruneCompaction(s, c->seq);
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->events_pruned, 0);
  EXPECT_EQ(twice->blobs_deleted, 0);
}

TEST_P(Compactions, PruneNeedsACompactionAndNeverTouchesAParent) {
  std::string parent = NewSessionId();
  Resource img = AppendImage(parent, "parent-img", "parent words");
  AppendText(parent, "second");
  auto fork = store_->ForkSession(parent, 2, {});
  ASSERT_TRUE(fork);
  AppendText(fork->id, "fork words");
  auto c = store_->Compact(fork->id, {.from_seq = 1, .to_seq = 3, .summary = "all of it"});
  ASSERT_TRUE(c);
  auto bad = store_->PruneCompaction(fork->id, 3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);

  auto pruned = store_->PruneCompaction(fork->id, c->seq);
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  EXPECT_EQ(pruned->events_pruned, 1);  // only the fork's own message
  EXPECT_EQ(pruned->blobs_deleted, 0);
  auto parent_read = store_->ReadMessages(parent);
  ASSERT_TRUE(parent_read);
  EXPECT_EQ((*parent_read)[0].Text(), "parent words");
  EXPECT_FALSE((*parent_read)[0].pruned);
  EXPECT_TRUE(store_->ReadBlob(img.content_sha256, true));
}

// Holds the store's write lock from outside it, as a writer of another
// program would, and counts the store's writers lined up behind it. Embedded:
// a plain SQLite connection in BEGIN IMMEDIATE; a store's writer takes the
// side file's lock (writer_lock.h) and then waits for SQLite's, and the next
// one waits for the side file's (both show in /proc/locks). PostgreSQL: a
// connection holding the session's row lock; the store's writers wait for it
// in line (pg_stat_activity).
class OutsideWriter {
 public:
  OutsideWriter(bool embedded, const std::string& store_dir, const std::string& uri,
                const std::string& session_id)
      : embedded_(embedded), uri_(uri) {
    if (embedded_) {
      struct stat st {};
      EXPECT_EQ(::stat((store_dir + "/sessiondb.db-writer").c_str(), &st), 0);
      writer_inode_ = st.st_ino;
      EXPECT_EQ(sqlite3_open((store_dir + "/sessiondb.db").c_str(), &sqlite_), SQLITE_OK);
      EXPECT_EQ(sqlite3_exec(sqlite_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
      baseline_ = Writers();
      return;
    }
    pg_ = PQconnectdb(uri.c_str());
    EXPECT_EQ(PQstatus(pg_), CONNECTION_OK) << PQerrorMessage(pg_);
    Exec("BEGIN");
    Exec("SELECT 1 FROM sessions WHERE id = '" + session_id + "' FOR UPDATE");
    baseline_ = Writers();
  }
  ~OutsideWriter() {
    Release();
    if (pg_) PQfinish(pg_);
  }

  // Returns once `n` more of the store's writers wait behind this one than
  // when it took the lock.
  void AwaitWriters(int n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (Writers() < baseline_ + n) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the writers never lined up";
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  void Release() {
    if (sqlite_) {
      sqlite3_exec(sqlite_, "ROLLBACK", nullptr, nullptr, nullptr);
      sqlite3_close(sqlite_);
      sqlite_ = nullptr;
    }
    if (pg_ && !released_) Exec("ROLLBACK");
    released_ = true;
  }

 private:
  void Exec(const std::string& sql) {
    PGresult* r = PQexec(pg_, sql.c_str());
    EXPECT_NE(PQresultStatus(r), PGRES_FATAL_ERROR) << sql << ": " << PQerrorMessage(pg_);
    PQclear(r);
  }

  int Writers() const {
    if (!embedded_) {
      return std::stoi(PgQuery(uri_,
                               "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                               "current_database() AND wait_event_type = 'Lock'"));
    }
    // Lines like "1: OFDLCK ADVISORY WRITE -1 00:2d:1234 0 EOF", a waiter's
    // with "->" after the number: the third number of the device field is
    // the inode.
    std::ifstream in("/proc/locks");
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      for (std::string w; words >> w;) {
        const size_t last = w.rfind(':');
        if (last == std::string::npos || last == 0 || w.find(':') == last) continue;
        if (w.substr(last + 1) == std::to_string(writer_inode_)) ++n;
      }
    }
    return n;
  }

  bool embedded_;
  std::string uri_;
  ino_t writer_inode_ = 0;
  sqlite3* sqlite_ = nullptr;
  PGconn* pg_ = nullptr;
  bool released_ = false;
  int baseline_ = 0;
};

// A rewind that lands after PruneCompaction has seen its compaction in the
// view, but before the prune writes, takes the compaction out of the view:
// its messages are the view's again and must not be erased. A second Store
// rewinds; the outside writer makes the rewind wait first and the prune
// second, then lets both go, so the rewind commits between the two.
TEST_P(Compactions, APruneRefusesACompactionARewindTookOutWhileItWaited) {
  std::string s = NewSessionId();
  AppendText(s, "secret one");                                                      // 1
  AppendText(s, "secret two");                                                      // 2
  AppendText(s, "three");                                                           // 3
  ASSERT_TRUE(store_->Compact(s, {.from_seq = 1, .to_seq = 2, .summary = "sum"}));  // 4
  auto other = Store::Open(Location(), Options());
  ASSERT_TRUE(other) << other.error().ToString();

  OutsideWriter outside(embedded(), StoreDir(), embedded() ? "" : pg_->uri(), s);
  Result<Event> rewound = Err(Status::Internal("not run"));
  Result<PruneReport> pruned = Err(Status::Internal("not run"));
  std::thread rewinder([&] { rewound = (*other)->Rewind(s, 3); });  // takes 4 out
  outside.AwaitWriters(1);
  std::thread pruner([&] { pruned = store_->PruneCompaction(s, 4); });
  outside.AwaitWriters(2);
  outside.Release();
  rewinder.join();
  pruner.join();

  ASSERT_TRUE(rewound) << rewound.error().ToString();
  ASSERT_FALSE(pruned) << "pruned " << pruned->events_pruned << " messages of the view";
  EXPECT_EQ(pruned.error().code(), StatusCode::kInvalidArgument) << pruned.error().ToString();
  auto view = store_->ReadMessages(s);
  ASSERT_TRUE(view);
  ASSERT_EQ(view->size(), 3u);
  EXPECT_EQ((*view)[0].Text(), "secret one");
  EXPECT_FALSE((*view)[1].pruned);
}

}  // namespace
}  // namespace sessiondb::testing
