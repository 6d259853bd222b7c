// What only a shared PostgreSQL store has: namespaces that never see each
// other, opening rules for a database, text PostgreSQL cannot hold. The
// embedded store, being one namespace, refuses any other.

#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class PostgresStore : public PostgresStoreTest {
 protected:
  std::unique_ptr<Store> OpenNamespace(const std::string& ns) {
    StoreOptions o = Options();
    o.namespace_name = ns;
    auto opened = Store::Open(pg_->uri(), o);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }
};

Message WithImage(const std::string& text, const std::string& png) {
  Message m;
  m.parts = {Part::Text(text), Part::ImageFromBytes(png, "image/png")};
  return m;
}

TEST_F(PostgresStore, NamespacesSeeOnlyTheirOwnSessionsAndBlobs) {
  auto a = OpenNamespace("team-a");
  auto b = OpenNamespace("team-b");
  ASSERT_TRUE(a && b);
  // The same session id in two namespaces: two sessions.
  ASSERT_TRUE(a->CreateSession({.id = "same"}));
  ASSERT_TRUE(b->CreateSession({.id = "same"}));
  ASSERT_TRUE(a->CreateSession({.id = "only-a"}));
  auto appended = a->Append("same", WithImage("a's picture", MakePng(4, 4, "team-a")));
  ASSERT_TRUE(appended) << appended.error().ToString();
  const std::string sha = appended->resources[0].content_sha256;
  ASSERT_TRUE(a->SetActiveSession("only-a").ok());

  EXPECT_EQ(a->ListSessions({})->sessions.size(), 2u);
  auto listed_b = b->ListSessions({});
  ASSERT_EQ(listed_b->sessions.size(), 1u);
  EXPECT_EQ(listed_b->sessions[0].message_count, 0);
  EXPECT_EQ(b->GetSession("only-a").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(b->ReadMessages("same")->size(), 0u);
  EXPECT_EQ(b->SetActiveSession("only-a").code(), StatusCode::kNotFound);
  EXPECT_FALSE(b->GetActiveSession()->has_value());
  // Blobs are stored once for all, but only a namespace that refers to one can read it.
  EXPECT_EQ(b->ReadBlob(sha).error().code(), StatusCode::kNotFound);
  Part borrowed;
  borrowed.type = PartType::kImage;
  borrowed.resource = appended->resources[0];
  Message steal;
  steal.parts = {borrowed};
  auto refused = b->Append("same", steal);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("does not hold"), std::string::npos);
  EXPECT_EQ(b->Stats()->blobs, 0);
  EXPECT_EQ(a->Stats()->blobs, 1);
  EXPECT_EQ(a->Stats()->sessions, 2);
  EXPECT_EQ(b->Stats()->sessions, 1);
  // Changes in one namespace leave the other alone.
  ASSERT_TRUE(b->DeleteSession("same").ok());
  EXPECT_EQ(a->ReadMessages("same")->size(), 1u);
  EXPECT_EQ(*a->ReadBlob(sha, true), MakePng(4, 4, "team-a"));
  EXPECT_EQ(**a->GetActiveSession(), "only-a");
}

TEST_F(PostgresStore, TheNamespaceComesFromTheUriOrTheOptionsButNotFromBothWhenTheyDiffer) {
  auto by_option = OpenNamespace("proj");
  ASSERT_TRUE(by_option);
  ASSERT_TRUE(by_option->CreateSession({.id = "s"}));
  // The URI's parameter names the same namespace.
  const std::string with_param = pg_->uri() + "&namespace=proj";
  auto by_uri = Store::Open(with_param, Options());
  ASSERT_TRUE(by_uri) << by_uri.error().ToString();
  EXPECT_TRUE((*by_uri)->GetSession("s"));
  // The default namespace does not see it.
  EXPECT_FALSE(store_->GetSession("s"));

  StoreOptions other = Options();
  other.namespace_name = "elsewhere";
  auto conflict = Store::Open(with_param, other);
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(conflict.error().message().find("elsewhere"), std::string::npos);

  StoreOptions bad = Options();
  bad.namespace_name = "../etc";
  auto refused = Store::Open(pg_->uri(), bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("namespace"), std::string::npos);
}

TEST_F(PostgresStore, ADatabaseWithoutAStoreIsNotCreatedWhenAskedNotTo) {
  PgTestDatabase empty;
  ASSERT_TRUE(empty.ok());
  StoreOptions o = Options();
  o.create_if_missing = false;
  auto opened = Store::Open(empty.uri(), o);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kNotFound);
  EXPECT_NE(opened.error().message().find("sessiondb init"), std::string::npos);
  EXPECT_EQ(empty.Query("SELECT to_regclass('sessions') IS NULL"), "t");
}

TEST_F(PostgresStore, ADatabaseThatDoesNotExistIsNamedInTheError) {
  auto opened = Store::Open(PgUriWithDatabase(pg_->uri(), "no_such_db"), Options());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kIo);
  EXPECT_NE(opened.error().message().find("no_such_db"), std::string::npos);
}

TEST_F(PostgresStore, TextWithANulCharacterIsRefusedRatherThanCut) {
  std::string id = NewSessionId();
  Message m;
  m.parts = {Part::Text(std::string("before\0after", 12))};
  auto r = store_->Append(id, m);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("NUL"), std::string::npos);
  EXPECT_EQ(store_->GetSession(id)->message_count, 0);
}

class EmbeddedNamespaces : public EmbeddedStoreTest {};

TEST_F(EmbeddedNamespaces, AnEmbeddedStoreRefusesANamespaceOtherThanTheDefault) {
  StoreOptions o = Options();
  o.namespace_name = "team-a";
  auto opened = Store::Open(dir_.Sub("other"), o);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(opened.error().message().find("one namespace"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("other")));
  o.namespace_name = "default";
  EXPECT_TRUE(Store::Open(dir_.Sub("other"), o));
}

}  // namespace
}  // namespace sessiondb::testing
