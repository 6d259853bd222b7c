// Copies between backends: embedded -> PostgreSQL -> embedded gives back the
// same sessions, messages and bytes; a second run skips what is there; an
// interrupted copy resumes; a conflicting session is refused untouched.
#include "store/store_copy.h"

#include <sstream>

#include "blob/sha256.h"
#include "core/event_codec.h"
#include "core/message_codec.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

// Everything a user could observe of a store, as text: sessions (all fields),
// messages (all fields, resources as their JSON), blob bytes by digest, and
// the active session. Two stores with the same Dump hold the same history.
std::string Dump(Store& store) {
  std::ostringstream out;
  ListOptions options{.limit = 1000, .archived = ArchiveFilter::kAll};
  auto page = store.ListSessions(options);
  EXPECT_TRUE(page) << page.error().ToString();
  std::vector<Session> sessions = page->sessions;
  std::sort(sessions.begin(), sessions.end(),
            [](const Session& a, const Session& b) { return a.id < b.id; });
  for (const Session& s : sessions) {
    out << "session " << s.id << " | " << s.title << " | " << s.preview << " | " << s.created_ms
        << " | " << s.updated_ms << " | " << s.message_count << " | " << s.last_seq << " | "
        << s.archived << " | " << s.metadata_json << " | " << s.parent_id << "@" << s.fork_seq
        << "\n";
    auto events = store.ReadEvents(s.id);
    EXPECT_TRUE(events) << events.error().ToString();
    for (const Event& e : *events) {
      out << "  " << e.seq << " " << e.id << " " << e.session_id << " " << e.ts_ms << " "
          << EventTypeName(e.type);
      if (e.type == EventType::kResourceView) out << " " << EncodeResourceViewBody(e.resource_view);
      if (e.type == EventType::kCompaction) out << " " << EncodeCompactionBody(e.compaction);
      if (e.type != EventType::kMessage) {
        out << "\n";
        continue;
      }
      Message m = e.message;
      m.id.clear();  // printed above
      m.session_id.clear();
      auto body = EncodeMessageBody(m);
      out << " " << RoleName(m.role) << " " << m.Text() << " " << (body && *body ? **body : "-")
          << "\n";
      for (const Part& p : m.parts) {
        if (!p.resource || p.resource->content_sha256.empty()) continue;
        auto bytes = store.ReadBlob(p.resource->content_sha256, /*verify=*/true);
        out << "    blob " << p.resource->content_sha256 << " "
            << (bytes ? blob::Sha256Hex(*bytes) : bytes.error().ToString()) << "\n";
      }
    }
    auto usage = store.GetUsage(s.id);
    EXPECT_TRUE(usage) << usage.error().ToString();
    for (const ModelUsage& u : usage->by_model) {
      out << "  usage " << u.provider << "/" << u.model << " " << u.turns << " "
          << u.usage.input_tokens << " " << u.usage.output_tokens << "\n";
    }
  }
  auto active = store.GetActiveSession();
  out << "active " << (active && *active ? **active : "-") << "\n";
  // The file versions in the order recorded, without their ids (each store
  // numbers its own), each with the digest of the bytes read back.
  auto versions = store.ListFileVersions({});
  EXPECT_TRUE(versions) << versions.error().ToString();
  for (const FileVersion& v : versions ? *versions : std::vector<FileVersion>{}) {
    out << "version " << v.agent_session << " " << v.tool_use_id << " " << v.file_path << " "
        << FileVersionPhaseName(v.phase) << " " << v.exists << " " << v.sha256 << " " << v.size
        << " " << v.tool << " " << v.source << " " << v.project << " " << v.time_ms;
    if (v.exists) {
      auto bytes = store.ReadBlob(v.sha256, /*verify=*/true);
      out << " " << (bytes ? blob::Sha256Hex(*bytes) : bytes.error().ToString());
    }
    out << "\n";
  }
  return out.str();
}

class StoreCopy : public EmbeddedStoreTest {
 protected:
  // A history with what a copy must keep: images shared between sessions,
  // every part type, a rename, an archived session, metadata, the active one.
  void FillSource() {
    ASSERT_TRUE(
        store_->CreateSession({.id = "chat", .metadata_json = R"({"project":"/src/app"})"}));
    ASSERT_TRUE(store_->CreateSession({.id = "old"}));
    ASSERT_TRUE(store_->CreateSession({.id = "empty", .title = "Nothing yet"}));
    const std::string png = MakePng(32, 16, "copy-me", 2000);
    Message first;
    first.parts = {Part::Text("What is this?"), Part::ImageFromBytes(png, "image/png"),
                   Part::Link("https://example.com/spec.pdf", "spec", "application/pdf", 1234)};
    ASSERT_TRUE(store_->Append("chat", first));
    now_ms_ += 1000;
    Message reply;
    reply.role = Role::kAssistant;
    reply.parts = {Part::Reasoning("thinking"), Part::ToolCall("c1", "grep", R"({"q":"x"})"),
                   Part::Text("A chart.")};
    reply.model = "gpt-4o";
    reply.usage = Usage{.input_tokens = 10, .output_tokens = 3};
    ASSERT_TRUE(store_->Append("chat", reply));
    Message tool;
    tool.role = Role::kTool;
    tool.parts = {Part::ToolResult("c1", "found", true)};
    ASSERT_TRUE(store_->Append("chat", tool));
    Message again;
    again.parts = {Part::Text("same picture"), Part::ImageFromBytes(png, "image/png")};
    ASSERT_TRUE(store_->Append("old", again));
    ASSERT_TRUE(store_->RenameSession("old", "Renamed by hand").ok());
    ASSERT_TRUE(store_->SetArchived("old", true).ok());
    ASSERT_TRUE(store_->SetActiveSession("chat").ok());
    // The harness's events: a resource view, a compaction, a pruned range,
    // and a fork (which arrives as a session holding its whole history).
    auto first_read = store_->ReadMessages("chat");
    ASSERT_TRUE(first_read);
    const std::string image = (*first_read)[0].parts[1].resource->resource_id;
    ASSERT_TRUE(store_->RecordResourceView("chat", image, "look again"));
    ASSERT_TRUE(store_->Compact(
        "chat",
        {.from_seq = 1, .to_seq = 2, .summary = "a chart", .strategy = "llm", .model = "m"}));
    ASSERT_TRUE(store_->CreateSession({.id = "pruned"}));
    Message secret;
    secret.parts = {Part::Text("erase me"),
                    Part::ImageFromBytes(MakePng(8, 8, "gone"), "image/png")};
    ASSERT_TRUE(store_->Append("pruned", secret));
    auto c = store_->Compact("pruned", {.from_seq = 1, .to_seq = 1, .summary = "erased"});
    ASSERT_TRUE(c);
    ASSERT_TRUE(store_->PruneCompaction("pruned", c->seq));
    ASSERT_TRUE(store_->ForkSession("chat", 3, {.id = "fork"}));
    Message own;
    own.parts = {Part::Text("the fork's own")};
    ASSERT_TRUE(store_->Append("fork", own));
    // Code checkpoints: an agent's edit, a file it removed, and one of
    // sessiondb's own writes (no tool call), which only its identity tells apart.
    auto version = [&](const std::string& call, const std::string& path, FileVersionPhase phase,
                       std::optional<std::string> content, const std::string& source) {
      FileVersion v{.agent_session = "agent-7",
                    .tool_use_id = call,
                    .file_path = path,
                    .phase = phase,
                    .exists = content.has_value(),
                    .tool = call.empty() ? "rewind" : "Edit",
                    .source = source,
                    .project = "/src/app",
                    .time_ms = now_ms_ += 10};
      auto kept = store_->RecordFileVersion(v, content.value_or(""));
      ASSERT_TRUE(kept) << kept.error().ToString();
    };
    version("toolu_1", "/src/app/a.py", FileVersionPhase::kBefore, "old\n", "hook");
    version("toolu_1", "/src/app/a.py", FileVersionPhase::kAfter, "new\n", "hook");
    version("toolu_2", "/src/app/b.py", FileVersionPhase::kBefore, "b\n", "hook");
    version("toolu_2", "/src/app/b.py", FileVersionPhase::kAfter, std::nullopt, "hook");
    version("", "/src/app/a.py", FileVersionPhase::kAfter, "old\n", "sessiondb");
  }

  std::unique_ptr<Store> OpenAt(const std::string& location) {
    auto opened = Store::Open(location, Options());
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }
};

TEST_F(StoreCopy, EmbeddedToPostgresAndBackGivesTheSameHistory) {
  FillSource();
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  auto middle = OpenAt(pg.uri());
  ASSERT_TRUE(middle);
  std::vector<std::pair<int64_t, int64_t>> progress;
  auto there = CopyStore(*store_, *middle,
                         [&](int64_t done, int64_t total) { progress.emplace_back(done, total); });
  ASSERT_TRUE(there) << there.error().ToString();
  EXPECT_EQ(there->sessions_copied, 5);
  EXPECT_EQ(there->messages_copied, 6);  // a fork stays a fork: only its own travel
  EXPECT_EQ(there->file_versions_copied, 5);
  EXPECT_EQ(progress.back(), std::make_pair(int64_t{5}, int64_t{5}));
  // One blob for the image both sessions show, and the versions' three contents.
  EXPECT_EQ(pg.Query("SELECT count(*) FROM blobs"), "4");

  auto back = OpenAt(dir_.Sub("back"));
  ASSERT_TRUE(back);
  auto home = CopyStore(*middle, *back);
  ASSERT_TRUE(home) << home.error().ToString();

  const std::string original = Dump(*store_);
  EXPECT_NE(original.find("Renamed by hand"), std::string::npos);  // the dump sees what matters
  EXPECT_EQ(Dump(*middle), original);
  EXPECT_EQ(Dump(*back), original);
  EXPECT_TRUE(middle->Verify()->clean());
  EXPECT_TRUE(back->Verify()->clean());
  // The copies go on as the original would: the next append is seq 6
  // (three messages, a resource view, a compaction).
  Message next;
  next.parts = {Part::Text("go on")};
  EXPECT_EQ(middle->Append("chat", next)->seq, 6);
  EXPECT_EQ(middle->GetSession("old")->title, "Renamed by hand");
}

TEST_F(StoreCopy, ASecondRunSkipsWhatIsThereAndAnInterruptedCopyResumes) {
  FillSource();
  auto target = OpenAt(dir_.Sub("target"));
  ASSERT_TRUE(target);
  // An interrupted copy: one session made it across.
  auto chat = store_->GetSession("chat");
  auto events = store_->ReadEvents("chat");
  ASSERT_TRUE(target
                  ->RestoreSession(*chat, *events,
                                   [&](std::string_view sha) { return store_->ReadBlob(sha); })
                  .ok());
  auto resumed = CopyStore(*store_, *target);
  ASSERT_TRUE(resumed) << resumed.error().ToString();
  EXPECT_EQ(resumed->sessions_skipped, 1);
  EXPECT_EQ(resumed->sessions_copied, 4);
  auto again = CopyStore(*store_, *target);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->sessions_skipped, 5);
  EXPECT_EQ(again->sessions_copied, 0);
  EXPECT_EQ(resumed->file_versions_copied, 5);
  EXPECT_EQ(again->file_versions_copied, 0);  // sessiondb's own write too, by its identity
  const std::string copied = Dump(*target);
  EXPECT_NE(copied.find("version agent-7  /src/app/a.py after 1"), std::string::npos) << copied;
  EXPECT_EQ(copied, Dump(*store_));
}

TEST_F(StoreCopy, ASessionThatDiffersInTheDestinationIsAConflictAndIsLeftAlone) {
  FillSource();
  auto target = OpenAt(dir_.Sub("target"));
  ASSERT_TRUE(target);
  ASSERT_TRUE(target->CreateSession({.id = "chat", .title = "Mine"}));
  const std::string before = Dump(*target);
  auto copied = CopyStore(*store_, *target);
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(copied.error().message().find("'chat'"), std::string::npos);
  EXPECT_EQ(target->GetSession("chat")->title, "Mine");
  EXPECT_EQ(target->GetSession("chat")->message_count, 0);
}

// A fork whose parent was deleted (kept hidden for it) lost its fork link in
// a copy and its inherited messages got new ids, against "embedded ->
// PostgreSQL -> embedded gives back the same history". It stays a fork of
// the same events, and the parent stays deleted.
TEST_F(StoreCopy, AForkWhoseParentWasDeletedStaysAForkOfTheSameHistory) {
  FillSource();
  ASSERT_TRUE(store_->DeleteSession("chat").ok());  // kept, hidden, for "fork"
  auto target = OpenAt(dir_.Sub("target"));
  ASSERT_TRUE(target);
  auto copied = CopyStore(*store_, *target);
  ASSERT_TRUE(copied) << copied.error().ToString();
  EXPECT_EQ(copied->sessions_copied, 4);  // old, empty, pruned and the fork; not "chat"
  auto fork = target->GetSession("fork");
  ASSERT_TRUE(fork);
  EXPECT_EQ(fork->parent_id, "chat");
  EXPECT_EQ(fork->fork_seq, 3);
  EXPECT_EQ(target->GetSession("chat").error().code(), StatusCode::kNotFound);  // still deleted
  auto events = target->ReadEvents("fork");
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ((*events)[0].message.Text(), "What is this?");
  EXPECT_EQ((*events)[3].message.Text(), "the fork's own");
  EXPECT_EQ((*events)[0].id, store_->ReadEvents("fork")->front().id);
  EXPECT_EQ(Dump(*target), Dump(*store_));
  EXPECT_TRUE(target->Verify()->clean());
  // A second run finds everything there and changes nothing.
  auto again = CopyStore(*store_, *target);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->sessions_copied, 0);
  EXPECT_EQ(again->sessions_skipped, 4);
  EXPECT_EQ(Dump(*target), Dump(*store_));
}

TEST_F(StoreCopy, ADeletedParentSurvivesEmbeddedToPostgresAndBack) {
  FillSource();
  ASSERT_TRUE(store_->ForkSession("chat", 2, {.id = "fork2"}));  // an earlier fork point
  ASSERT_TRUE(store_->ForkSession("fork", 4, {.id = "grandchild"}));
  ASSERT_TRUE(store_->DeleteSession("chat").ok());
  ASSERT_TRUE(store_->DeleteSession("fork").ok());  // hidden for the grandchild
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  auto middle = OpenAt(pg.uri());
  ASSERT_TRUE(middle);
  auto there = CopyStore(*store_, *middle);
  ASSERT_TRUE(there) << there.error().ToString();
  auto back = OpenAt(dir_.Sub("back"));
  ASSERT_TRUE(back);
  auto home = CopyStore(*middle, *back);
  ASSERT_TRUE(home) << home.error().ToString();
  const std::string original = Dump(*store_);
  EXPECT_NE(original.find("grandchild"), std::string::npos);
  EXPECT_EQ(Dump(*middle), original);
  EXPECT_EQ(Dump(*back), original);
  EXPECT_EQ(back->GetSession("grandchild")->parent_id, "fork");
  EXPECT_EQ(back->GetSession("fork").error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(middle->Verify()->clean());
  EXPECT_TRUE(back->Verify()->clean());
}

TEST_F(StoreCopy, AForkIsNotRestoredBeforeItsParent) {
  auto target = OpenAt(dir_.Sub("target"));
  Session fork{.id = "orphan", .title = "x", .parent_id = "nowhere", .fork_seq = 2};
  Event e;
  e.seq = 3;
  e.message.parts = {Part::Text("own")};
  Status st = target->RestoreSession(fork, std::vector<Event>{e}, {});
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("restore the parent first"), std::string::npos) << st.message();
  EXPECT_EQ(target->GetSession("orphan").error().code(), StatusCode::kNotFound);
}

TEST_F(StoreCopy, RestoringALogWithAGapIsRefused) {
  Session s{.id = "gappy", .title = "x"};
  Event e;
  e.message.parts = {Part::Text("hi")};
  e.seq = 2;
  auto target = OpenAt(dir_.Sub("target"));
  Status st = target->RestoreSession(s, std::vector<Event>{e}, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("1, 2, 3"), std::string::npos);
  EXPECT_EQ(target->GetSession("gappy").error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sessiondb::testing
