// StoreOptions::read_only on an embedded store: every read works, every write
// is refused with kFailedPrecondition naming the store, and nothing changes.
// (Opening read-only by itself when the files are not writable is tested with
// the real binary run as another user: tests/cli/read_only_store_test.cc.)
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class ReadOnly : public EmbeddedStoreTest {};

TEST_F(ReadOnly, ReadsWorkAndEveryWriteIsRefusedNamingTheStore) {
  const std::string id = NewSessionId("s");
  AppendText(id, "hello");
  StoreOptions options = Options();
  options.read_only = true;
  Reopen(options);

  EXPECT_EQ(store_->GetSession(id)->message_count, 1);
  EXPECT_EQ(store_->ListSessions({})->sessions.size(), 1u);
  EXPECT_EQ(store_->ReadMessages(id)->front().Text(), "hello");
  EXPECT_TRUE(store_->Verify()->clean());

  auto expect_refused = [&](const Status& s, const char* what) {
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << what << ": " << s.ToString();
    EXPECT_NE(s.message().find("the store at " + StoreDir() + " is read-only"), std::string::npos)
        << what << ": " << s.message();
  };
  expect_refused(internal::ToStatus(store_->CreateSession({})), "create");
  Message m;
  m.parts = {Part::Text("no")};
  expect_refused(internal::ToStatus(store_->Append(id, m)), "append");
  expect_refused(store_->RenameSession(id, "x"), "rename");
  expect_refused(store_->SetArchived(id, true), "archive");
  expect_refused(store_->DeleteSession(id), "delete");
  expect_refused(store_->SetActiveSession(id), "active");
  expect_refused(internal::ToStatus(store_->ForkSession(id, 1, {})), "fork");
  expect_refused(internal::ToStatus(store_->OpenDraft(id, Role::kAssistant, "m")), "draft");
  expect_refused(internal::ToStatus(store_->CollectGarbage({})), "gc");
  expect_refused(
      internal::ToStatus(store_->Compact(id, {.from_seq = 1, .to_seq = 1, .summary = "s"})),
      "compact");
  expect_refused(store_->RestoreSession({.id = "r"}, {}, {}), "restore");

  Reopen();  // writable again: nothing was changed
  EXPECT_EQ(store_->GetSession(id)->message_count, 1);
  EXPECT_EQ(store_->GetSession(id)->title, "hello");
  EXPECT_EQ(store_->ListSessions({})->sessions.size(), 1u);
}

TEST_F(ReadOnly, AMissingStoreIsNotCreated) {
  StoreOptions options = Options();
  options.read_only = true;
  auto opened = Store::Open(dir_.Sub("absent"), options);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("absent")));
}

}  // namespace
}  // namespace sessiondb::testing
