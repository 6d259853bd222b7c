// Copies between backends: embedded -> PostgreSQL -> embedded gives back the
// same sessions, messages and bytes; a second run skips what is there; an
// interrupted copy resumes; a conflicting session is refused untouched.
#include "store/store_copy.h"

#include <sstream>

#include "blob/sha256.h"
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
        << s.archived << " | " << s.metadata_json << "\n";
    auto messages = store.ReadMessages(s.id);
    EXPECT_TRUE(messages) << messages.error().ToString();
    for (const Message& m : *messages) {
      auto body = EncodeMessageBody(m);
      out << "  " << m.seq << " " << m.id << " " << m.ts_ms << " " << RoleName(m.role) << " "
          << m.Text() << " " << (body && *body ? **body : "-") << "\n";
      for (const Part& p : m.parts) {
        if (!p.resource || p.resource->content_sha256.empty()) continue;
        auto bytes = store.ReadBlob(p.resource->content_sha256, /*verify=*/true);
        out << "    blob " << p.resource->content_sha256 << " "
            << (bytes ? blob::Sha256Hex(*bytes) : bytes.error().ToString()) << "\n";
      }
    }
  }
  auto active = store.GetActiveSession();
  out << "active " << (active && *active ? **active : "-") << "\n";
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
  EXPECT_EQ(there->sessions_copied, 3);
  EXPECT_EQ(there->messages_copied, 4);
  EXPECT_EQ(progress.back(), std::make_pair(int64_t{3}, int64_t{3}));
  // One blob for the image both sessions show.
  EXPECT_EQ(pg.Query("SELECT count(*) FROM blobs"), "1");

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
  // The copies go on as the original would: the next append is seq 4.
  Message next;
  next.parts = {Part::Text("go on")};
  EXPECT_EQ(middle->Append("chat", next)->seq, 4);
  EXPECT_EQ(middle->GetSession("old")->title, "Renamed by hand");
}

TEST_F(StoreCopy, ASecondRunSkipsWhatIsThereAndAnInterruptedCopyResumes) {
  FillSource();
  auto target = OpenAt(dir_.Sub("target"));
  ASSERT_TRUE(target);
  // An interrupted copy: one session made it across.
  auto chat = store_->GetSession("chat");
  auto messages = store_->ReadMessages("chat");
  ASSERT_TRUE(target
                  ->RestoreSession(*chat, *messages,
                                   [&](std::string_view sha) { return store_->ReadBlob(sha); })
                  .ok());
  auto resumed = CopyStore(*store_, *target);
  ASSERT_TRUE(resumed) << resumed.error().ToString();
  EXPECT_EQ(resumed->sessions_skipped, 1);
  EXPECT_EQ(resumed->sessions_copied, 2);
  auto again = CopyStore(*store_, *target);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->sessions_skipped, 3);
  EXPECT_EQ(again->sessions_copied, 0);
  EXPECT_EQ(Dump(*target), Dump(*store_));
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

TEST_F(StoreCopy, RestoringALogWithAGapIsRefused) {
  Session s{.id = "gappy", .title = "x"};
  Message m;
  m.parts = {Part::Text("hi")};
  m.seq = 2;
  auto target = OpenAt(dir_.Sub("target"));
  Status st = target->RestoreSession(s, std::vector<Message>{m}, {});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("1, 2, 3"), std::string::npos);
  EXPECT_EQ(target->GetSession("gappy").error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sessiondb::testing
