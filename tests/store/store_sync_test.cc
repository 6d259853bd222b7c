// Two-way sync (store/store_sync.h, docs/sync.md), embedded <-> embedded and
// embedded <-> PostgreSQL: only what the other lacks travels and a second
// run copies nothing; offline appends to one session on both sides come back
// as a fork with every message kept; the trash, restores, erasures and
// rewinds travel, and an erased session is never brought back; a sync killed
// mid-way (SIGKILL of the real binary) finishes when run again.
#include "store/store_sync.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include "core/event_codec.h"
#include "pg_test_database.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

// What a user sees of a store, as text (updated times aside: an index entry
// moves with the last event restored): sessions, and every event with its
// id, seq, time, type and text. Two synced stores have the same.
std::string SyncDump(Store& store) {
  std::ostringstream out;
  std::vector<Session> sessions;
  ListOptions options{.limit = 1000, .archived = ArchiveFilter::kAll};
  auto page = store.ListSessions(options);
  EXPECT_TRUE(page) << page.error().ToString();
  if (page) sessions = page->sessions;
  std::sort(sessions.begin(), sessions.end(),
            [](const Session& a, const Session& b) { return a.id < b.id; });
  for (const Session& s : sessions) {
    out << "session " << s.id << " | " << s.title << " | " << s.message_count << " | " << s.last_seq
        << " | " << s.archived << " | " << s.parent_id << "@" << s.fork_seq << "\n";
    auto events = store.ReadEvents(s.id);
    EXPECT_TRUE(events) << events.error().ToString();
    if (!events) continue;
    for (const Event& e : *events) {
      out << "  " << e.seq << " " << e.id << " " << e.ts_ms << " " << EventTypeName(e.type) << " "
          << e.message.Text()
          << (e.type == EventType::kRewind ? std::to_string(e.rewind.to_seq) : "") << "\n";
    }
  }
  auto trash = store.ListSessions({.limit = 1000, .trash = true});
  EXPECT_TRUE(trash);
  if (trash) {
    for (const Session& s : trash->sessions) out << "trashed " << s.id << "\n";
  }
  return out.str();
}

// Every message text a store holds, in any session (a fork's own events only).
std::multiset<std::string> SyncedTexts(Store& store) {
  std::multiset<std::string> texts;
  auto page = store.ListSessions({.limit = 1000, .archived = ArchiveFilter::kAll});
  EXPECT_TRUE(page);
  if (!page) return texts;
  for (const Session& s : page->sessions) {
    auto events = store.ReadEvents(s.id, s.fork_seq + 1);
    EXPECT_TRUE(events);
    if (!events) continue;
    for (const Event& e : *events) {
      if (e.type == EventType::kMessage) texts.insert(e.message.Text());
    }
  }
  return texts;
}

Message SyncText(const std::string& text, Role role = Role::kUser) {
  Message m;
  m.role = role;
  m.parts = {Part::Text(text)};
  return m;
}

enum class SyncPeer { kEmbedded, kPostgres };

class StoreSync : public ::testing::TestWithParam<SyncPeer> {
 protected:
  void SetUp() override {
    a_ = Open(dir_.Sub("a"));
    if (GetParam() == SyncPeer::kPostgres) {
      pg_ = std::make_unique<PgTestDatabase>();
      ASSERT_TRUE(pg_->ok());
      b_location_ = pg_->uri();
    } else {
      b_location_ = dir_.Sub("b");
    }
    b_ = Open(b_location_);
    ASSERT_TRUE(a_ && b_);
  }

  static std::unique_ptr<Store> Open(const std::string& location, bool create = true) {
    StoreOptions options;
    options.durability = Durability::kProcessCrashSafe;
    options.create_if_missing = create;
    auto opened = Store::Open(location, options);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }

  SyncReport SyncOk() {
    auto report = SyncStores(*a_, *b_);
    EXPECT_TRUE(report) << report.error().ToString();
    return report ? *report : SyncReport{};
  }

  void Say(Store& store, const std::string& session, const std::string& text) {
    ASSERT_TRUE(store.Append(session, SyncText(text))) << text;
  }

  TempDir dir_;
  std::unique_ptr<PgTestDatabase> pg_;
  std::string b_location_;
  std::unique_ptr<Store> a_;
  std::unique_ptr<Store> b_;
};

TEST_P(StoreSync, CopiesOnlyWhatTheOtherLacksAndASecondRunCopiesNothing) {
  ASSERT_TRUE(a_->CreateSession({.id = "one", .title = "One"}));
  ASSERT_TRUE(a_->CreateSession({.id = "two"}));
  Message picture;
  picture.parts = {Part::Text("a chart"), Part::ImageFromBytes(MakePng(8, 8, "sync"), "image/png")};
  ASSERT_TRUE(a_->Append("one", picture));
  Say(*a_, "one", "first");
  Say(*a_, "two", "second");
  ASSERT_TRUE(a_->ForkSession("one", 1, {.id = "one-fork"}));
  Say(*a_, "one-fork", "the fork's own");
  ASSERT_TRUE(b_->CreateSession({.id = "three"}));
  Say(*b_, "three", "from b");

  SyncReport first = SyncOk();
  EXPECT_EQ(first.into_b.sessions_created, 3);
  EXPECT_EQ(first.into_b.messages_copied, 4);
  EXPECT_EQ(first.into_a.sessions_created, 1);
  EXPECT_EQ(first.into_a.messages_copied, 1);
  EXPECT_EQ(SyncDump(*a_), SyncDump(*b_));
  auto image = b_->ReadMessages("one");
  ASSERT_TRUE(image);
  EXPECT_TRUE(b_->ReadBlob((*image)[0].parts[1].resource->content_sha256, true));
  EXPECT_EQ(b_->GetSession("one-fork")->parent_id, "one");

  SyncReport again = SyncOk();
  EXPECT_TRUE(again.unchanged());
  EXPECT_EQ(again.into_a.events_copied + again.into_b.events_copied, 0);

  // Appends on each side to different sessions: only those travel.
  Say(*a_, "one", "a more");
  Say(*a_, "one", "a more again");
  Say(*b_, "three", "b more");
  SyncReport third = SyncOk();
  EXPECT_EQ(third.into_b.events_copied, 2);
  EXPECT_EQ(third.into_a.events_copied, 1);
  EXPECT_EQ(third.into_a.sessions_created + third.into_b.sessions_created, 0);
  EXPECT_EQ(SyncDump(*a_), SyncDump(*b_));
  EXPECT_TRUE(SyncOk().unchanged());
  // Argument order does not matter once they agree.
  auto swapped = SyncStores(*b_, *a_);
  ASSERT_TRUE(swapped);
  EXPECT_TRUE(swapped->unchanged());
}

TEST_P(StoreSync, OfflineAppendsOnBothSidesComeBackAsAForkWithNothingLost) {
  ASSERT_TRUE(a_->CreateSession({.id = "chat", .title = "Chat"}));
  Say(*a_, "chat", "common 1");
  Say(*a_, "chat", "common 2");
  SyncOk();
  Say(*a_, "chat", "laptop 1");  // written first: stays the session
  Say(*a_, "chat", "laptop 2");
  Say(*b_, "chat", "server 1");
  Say(*b_, "chat", "server 2");
  Say(*b_, "chat", "server 3");

  SyncReport report = SyncOk();
  EXPECT_EQ(report.forks_made, 1);
  EXPECT_TRUE(report.skipped.empty());
  const std::multiset<std::string> want = {"common 1", "common 2", "laptop 1", "laptop 2",
                                           "server 1", "server 2", "server 3"};
  EXPECT_EQ(SyncedTexts(*a_), want);
  EXPECT_EQ(SyncedTexts(*b_), want);
  EXPECT_EQ(SyncDump(*a_), SyncDump(*b_));
  // The session is the branch written first; the other is a fork at seq 2.
  auto chat = b_->ReadMessages("chat");
  ASSERT_TRUE(chat);
  ASSERT_EQ(chat->size(), 4u);
  EXPECT_EQ((*chat)[2].Text(), "laptop 1");
  auto all = b_->ListSessions({.limit = 10});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->sessions.size(), 2u);
  const Session& fork = all->sessions[0].id == "chat" ? all->sessions[1] : all->sessions[0];
  EXPECT_EQ(fork.parent_id, "chat");
  EXPECT_EQ(fork.fork_seq, 2);
  EXPECT_EQ(fork.message_count, 5);
  auto forked = a_->ReadMessages(fork.id);
  ASSERT_TRUE(forked);
  EXPECT_EQ(forked->back().Text(), "server 3");
  EXPECT_TRUE(SyncOk().unchanged());
}

TEST_P(StoreSync, ADivergenceStoppedAtAnyStepIsResolvedByTheNextRunWithNothingLost) {
  for (const char* stop : {"marked", "fork-written", "deleted", "restored"}) {
    SCOPED_TRACE(stop);
    const std::string id = std::string("chat-") + stop;
    ASSERT_TRUE(a_->CreateSession({.id = id}));
    Say(*a_, id, "common");
    SyncOk();
    Say(*b_, id, std::string("server ") + stop);  // written first: b's branch stays
    Say(*a_, id, std::string("laptop ") + stop);
    SyncOptions options;
    options.after_step = [stop](std::string_view step) {
      return step == stop ? Status::Io("killed after " + std::string(step)) : Status::Ok();
    };
    auto killed = SyncStores(*a_, *b_, options);
    ASSERT_FALSE(killed);
    EXPECT_NE(killed.error().message().find(stop), std::string::npos);
    SyncReport finished = SyncOk();
    EXPECT_TRUE(finished.skipped.empty());
    EXPECT_EQ(SyncDump(*a_), SyncDump(*b_));
    const std::multiset<std::string> texts = SyncedTexts(*a_);
    EXPECT_EQ(texts.count(std::string("server ") + stop), 1u);
    EXPECT_EQ(texts.count(std::string("laptop ") + stop), 1u);
    EXPECT_EQ(SyncedTexts(*b_), texts);
    auto chat = a_->ReadMessages(id);
    ASSERT_TRUE(chat);
    EXPECT_EQ(chat->back().Text(), std::string("server ") + stop);
    EXPECT_TRUE(SyncOk().unchanged());
  }
}

TEST_P(StoreSync, TheTrashAndRestoresTravel) {
  ASSERT_TRUE(a_->CreateSession({.id = "bin"}));
  Say(*a_, "bin", "soon trashed");
  SyncOk();
  ASSERT_TRUE(b_->TrashSession("bin").ok());
  SyncReport trashed = SyncOk();
  EXPECT_EQ(trashed.into_a.trashed, 1);
  EXPECT_EQ(a_->GetSession("bin").error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(SyncOk().unchanged());
  ASSERT_TRUE(a_->RestoreFromTrash("bin"));
  SyncReport restored = SyncOk();
  EXPECT_EQ(restored.into_b.restored, 1);
  EXPECT_TRUE(b_->GetSession("bin"));
  EXPECT_EQ(SyncDump(*a_), SyncDump(*b_));
}

TEST_P(StoreSync, AnErasureTravelsAndIsNeverUndone) {
  ASSERT_TRUE(a_->CreateSession({.id = "secret"}));
  Say(*a_, "secret", "erase me everywhere");
  ASSERT_TRUE(a_->CreateSession({.id = "kept"}));
  Say(*a_, "kept", "keep me");
  SyncOk();
  EraseRequest erase;
  erase.session_ids = {"secret"};
  ASSERT_TRUE(b_->Erase(erase));
  SyncReport report = SyncOk();
  EXPECT_EQ(report.into_a.erased, 1);
  EXPECT_EQ(a_->GetSession("secret").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(SyncedTexts(*a_), std::multiset<std::string>{"keep me"});
  auto ledger = a_->ReadLedger({});
  ASSERT_TRUE(ledger);
  ASSERT_FALSE(ledger->empty());
  EXPECT_EQ(ledger->front().action, "erase");
  // Neither a second run nor a run the other way round brings it back.
  EXPECT_TRUE(SyncOk().unchanged());
  ASSERT_TRUE(SyncStores(*b_, *a_));
  EXPECT_EQ(a_->GetSession("secret").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(b_->GetSession("secret").error().code(), StatusCode::kNotFound);
}

// The file versions of a store, as text: what a rewind or a history reads.
std::multiset<std::string> VersionsOf(Store& store) {
  std::multiset<std::string> out;
  auto versions = store.ListFileVersions({});
  EXPECT_TRUE(versions) << versions.error().ToString();
  for (const FileVersion& v : versions ? *versions : std::vector<FileVersion>{}) {
    auto bytes = v.exists ? store.ReadBlob(v.sha256, true) : Result<std::string>(std::string());
    out.insert(v.agent_session + " " + v.tool_use_id + " " + v.file_path + " " +
               std::string(FileVersionPhaseName(v.phase)) + " " + v.source + " " +
               std::to_string(v.time_ms) + " " + (bytes ? *bytes : bytes.error().ToString()));
  }
  return out;
}

void Keep(Store& store, const std::string& agent, const std::string& call, const std::string& path,
          FileVersionPhase phase, const std::string& content) {
  FileVersion v{.agent_session = agent,
                .tool_use_id = call,
                .file_path = path,
                .phase = phase,
                .tool = "Edit",
                .source = "hook",
                .project = "/p"};
  auto kept = store.RecordFileVersion(v, content);
  ASSERT_TRUE(kept) << kept.error().ToString();
}

TEST_P(StoreSync, FileVersionsTravelOnceAndNoneOfAnErasedSession) {
  ASSERT_TRUE(a_->CreateSession({.id = "coder"}));
  Say(*a_, "coder", "edit x");
  Keep(*a_, "coder", "t1", "/p/x.py", FileVersionPhase::kBefore, "x = 0\n");
  Keep(*a_, "coder", "t1", "/p/x.py", FileVersionPhase::kAfter, "x = 1\n");
  Keep(*b_, "hook-only", "t9", "/p/y.py", FileVersionPhase::kAfter, "y = 1\n");
  SyncReport first = SyncOk();
  EXPECT_EQ(first.into_b.file_versions_copied, 2);
  EXPECT_EQ(first.into_a.file_versions_copied, 1);
  EXPECT_EQ(VersionsOf(*a_), VersionsOf(*b_));
  EXPECT_EQ(VersionsOf(*a_).size(), 3u);
  // What each received comes back once the other way, and is found there.
  EXPECT_TRUE(SyncOk().unchanged());
  EXPECT_EQ(VersionsOf(*a_).size(), 3u);

  // Only the new ones travel.
  Keep(*b_, "coder", "t2", "/p/x.py", FileVersionPhase::kAfter, "x = 2\n");
  SyncReport second = SyncOk();
  EXPECT_EQ(second.into_a.file_versions_copied, 1);
  EXPECT_EQ(second.into_b.file_versions_copied, 0);
  EXPECT_EQ(VersionsOf(*a_), VersionsOf(*b_));

  // Erased in one store: its versions go in both, the ones the other
  // recorded meanwhile too, and none comes back.
  Keep(*b_, "coder", "t3", "/p/x.py", FileVersionPhase::kAfter, "x = 3\n");
  EraseRequest erase;
  erase.session_ids = {"coder"};
  ASSERT_TRUE(a_->Erase(erase));
  SyncReport erased = SyncOk();
  EXPECT_EQ(erased.into_b.erased, 1);
  EXPECT_EQ(erased.into_a.file_versions_copied, 0);
  const std::multiset<std::string> left = VersionsOf(*a_);
  EXPECT_EQ(left, VersionsOf(*b_));
  ASSERT_EQ(left.size(), 1u);
  EXPECT_TRUE(left.begin()->starts_with("hook-only t9 /p/y.py after")) << *left.begin();
  EXPECT_TRUE(SyncOk().unchanged());
}

TEST_P(StoreSync, ARewindTravelsAsAnEvent) {
  ASSERT_TRUE(a_->CreateSession({.id = "r"}));
  Say(*a_, "r", "one");
  Say(*a_, "r", "two");
  Say(*a_, "r", "three");
  SyncOk();
  ASSERT_TRUE(b_->Rewind("r", 1));
  Say(*b_, "r", "two again");
  SyncReport report = SyncOk();
  EXPECT_EQ(report.into_a.events_copied, 2);
  auto view = a_->ReadMessages("r");
  ASSERT_TRUE(view);
  ASSERT_EQ(view->size(), 2u);
  EXPECT_EQ((*view)[1].Text(), "two again");
  EXPECT_EQ(a_->GetSession("r")->message_count, 2);
  EXPECT_EQ(SyncDump(*a_), SyncDump(*b_));
}

TEST_P(StoreSync, RenamesAndTheArchiveFlagTravel) {
  ASSERT_TRUE(a_->CreateSession({.id = "t", .title = "Before"}));
  Say(*a_, "t", "x");
  SyncOk();
  ASSERT_TRUE(a_->RenameSession("t", "After").ok());
  ASSERT_TRUE(b_->SetArchived("t", true).ok());
  SyncReport report = SyncOk();
  EXPECT_EQ(report.into_a.updated + report.into_b.updated, 2);
  EXPECT_EQ(b_->GetSession("t")->title, "After");
  EXPECT_TRUE(a_->GetSession("t")->archived);
}

TEST_P(StoreSync, TheSameStoreTwiceIsRefusedAndChangesNothing) {
  ASSERT_TRUE(a_->CreateSession({.id = "s"}));
  auto again = Open(dir_.Sub("a"));
  ASSERT_TRUE(again);
  auto report = SyncStores(*a_, *again);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(report.error().message().find("same store"), std::string::npos);
  auto missing = Store::Open(dir_.Sub("nowhere"), {.create_if_missing = false});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("nowhere")));
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreSync,
                         ::testing::Values(SyncPeer::kEmbedded, SyncPeer::kPostgres),
                         [](const auto& info) {
                           return info.param == SyncPeer::kEmbedded ? std::string("Embedded")
                                                                    : std::string("Postgres");
                         });

#ifdef SESSIONDB_CLI_PATH
// `sessiondb sync` killed with SIGKILL while it copies a large store, then
// run again: both stores end the same, with every message.
TEST(StoreSyncKill, AKilledSyncFinishesWhenRunAgainWithNothingLost) {
  TempDir dir;
  const std::string a_path = dir.Sub("a");
  const std::string b_path = dir.Sub("b");
  constexpr int kSessions = 60;
  constexpr int kMessages = 400;
  {
    StoreOptions options;
    options.durability = Durability::kProcessCrashSafe;
    auto a = Store::Open(a_path, options);
    ASSERT_TRUE(a);
    auto b = Store::Open(b_path, options);
    ASSERT_TRUE(b);
    for (int s = 0; s < kSessions; ++s) {
      const std::string id = "s" + std::to_string(s);
      ASSERT_TRUE((*a)->CreateSession({.id = id}));
      std::vector<Message> batch;
      for (int m = 0; m < kMessages; ++m) {
        batch.push_back(SyncText(id + " message " + std::to_string(m) + std::string(200, 'x')));
      }
      ASSERT_TRUE((*a)->AppendBatch(id, batch));
    }
  }
  bool killed_midway = false;
  for (int attempt = 0; attempt < 5 && !killed_midway; ++attempt) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      execl(SESSIONDB_CLI_PATH, SESSIONDB_CLI_PATH, "--fast", "--store", a_path.c_str(), "sync",
            b_path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Killed once b holds a quarter of the sessions (or after a while).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int status = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      auto b = Store::Open(b_path, {.create_if_missing = false});
      auto page = b ? (*b)->ListSessions({.limit = 1000}) : Result<SessionPage>(Err(b.error()));
      if (page && std::ssize(page->sessions) >= kSessions / 4) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      killed_midway = WIFSIGNALED(status);
    }
    if (!killed_midway) break;  // it finished first: the rerun below is a no-op
    auto b = Store::Open(b_path, {.create_if_missing = false});
    ASSERT_TRUE(b);
    auto page = (*b)->ListSessions({.limit = 1000});
    ASSERT_TRUE(page);
    if (std::ssize(page->sessions) == kSessions) killed_midway = false;  // too late; again
    if (killed_midway) break;
    // Rebuild b empty for another try.
    b->reset();
    std::filesystem::remove_all(b_path);
    auto fresh = Store::Open(b_path, {});
    ASSERT_TRUE(fresh);
  }
  EXPECT_TRUE(killed_midway) << "the sync was never caught mid-way";

  StoreOptions options;
  options.durability = Durability::kProcessCrashSafe;
  auto a = Store::Open(a_path, options);
  auto b = Store::Open(b_path, options);
  ASSERT_TRUE(a && b);
  auto finished = SyncStores(**a, **b);
  ASSERT_TRUE(finished) << finished.error().ToString();
  EXPECT_EQ(SyncDump(**a), SyncDump(**b));
  EXPECT_EQ(SyncedTexts(**b).size(), static_cast<size_t>(kSessions * kMessages));
  auto again = SyncStores(**a, **b);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->unchanged());
}
#endif

}  // namespace
}  // namespace sessiondb::testing
