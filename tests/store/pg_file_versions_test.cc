// File versions on PostgreSQL (pg_file_versions.cc): what only a shared
// database can get wrong. Namespaces never see each other's versions or
// their content; writers racing to record one tool call keep one row and
// nothing of the losers; a project's erasure takes its versions; a store of
// schema 8 or 9 upgrades to hold them; a large version goes to the object
// tier as a large message blob does. In an encrypted namespace the path,
// project, tool and digest are nowhere in the clear, a sealed value moved to
// another row or a token changed is kCorruption, and erasing a project picks
// its versions all the same. The contract on every backend is
// file_versions_test.cc.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "blob/s3_object_store.h"
#include "blob/sha256.h"
#include "sessiondb/forget.h"
#include "sessiondb/postgres_schema.h"
#include "store/postgres/pg_object_blobs.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {
// Its own names: a unity batch may hold file_versions_test.cc's (Version).
namespace pg_file_versions {

FileVersion Version(const std::string& agent, const std::string& call, const std::string& path,
                    const std::string& project = "/src/app") {
  return FileVersion{.agent_session = agent,
                     .tool_use_id = call,
                     .file_path = path,
                     .phase = FileVersionPhase::kAfter,
                     .tool = "Edit",
                     .source = "hook",
                     .project = project};
}

class PgFileVersions : public PostgresStoreTest {
 protected:
  std::unique_ptr<Store> OpenNamespace(const std::string& ns) {
    StoreOptions o = Options();
    o.namespace_name = ns;
    auto opened = Store::Open(pg_->uri(), o);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }
};

TEST_F(PgFileVersions, NamespacesNeverSeeEachOthersVersionsOrTheirContent) {
  auto mine = store_->RecordFileVersion(Version("agent", "call-1", "/src/app/a.py"), "team a\n");
  ASSERT_TRUE(mine) << mine.error().ToString();
  auto other = OpenNamespace("team-b");
  ASSERT_TRUE(other);
  auto listed = other->ListFileVersions({.agent_sessions = {"agent"}});
  ASSERT_TRUE(listed) << listed.error().ToString();
  EXPECT_TRUE(listed->empty());
  // Knowing the digest is not having the bytes.
  EXPECT_EQ(other->ReadBlob(mine->sha256).error().code(), StatusCode::kNotFound);

  // The same tool call in the other namespace is its own version, not ours.
  auto theirs = other->RecordFileVersion(Version("agent", "call-1", "/src/app/a.py"), "team b\n");
  ASSERT_TRUE(theirs) << theirs.error().ToString();
  EXPECT_NE(theirs->id, mine->id);
  EXPECT_EQ(theirs->sha256, blob::Sha256Hex("team b\n"));

  // Its erasure of everything leaves ours, and our bytes, alone.
  auto erased = other->Erase({.everything = true});
  ASSERT_TRUE(erased) << erased.error().ToString();
  auto ours = store_->ListFileVersions({});
  ASSERT_TRUE(ours) << ours.error().ToString();
  ASSERT_EQ(ours->size(), 1u);
  EXPECT_EQ((*ours)[0].id, mine->id);
  auto bytes = store_->ReadBlob(mine->sha256);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  EXPECT_EQ(*bytes, "team a\n");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE namespace = 'team-b'"), "0");
}

TEST_F(PgFileVersions, WritersRacingOnOneToolCallKeepOneRowAndNothingOfTheLosers) {
  constexpr int kWriters = 8;
  std::vector<std::thread> writers;
  std::vector<Result<FileVersion>> results(kWriters, Err(Status::Internal("not run")));
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      results[static_cast<size_t>(i)] = store_->RecordFileVersion(
          Version("agent", "call-1", "/src/app/race.py"), "writer " + std::to_string(i) + "\n");
    });
  }
  for (std::thread& t : writers) t.join();
  ASSERT_TRUE(results[0]) << results[0].error().ToString();
  for (const auto& r : results) {
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->id, results[0]->id);
    EXPECT_EQ(r->sha256, results[0]->sha256);
  }
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions"), "1");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_refs"), "1");
  // Only the winner's bytes: each loser's blob went with its transaction.
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "1");
  EXPECT_EQ(pg_->Query("SELECT sha256 FROM blobs"), results[0]->sha256);
}

TEST_F(PgFileVersions, VersionsWithoutAToolCallAreEachKept) {
  // An import or a shell change has no tool use id: nothing to be the same call.
  for (int i = 0; i < 2; ++i) {
    auto v = store_->RecordFileVersion(Version("agent", "", "/src/app/a.py"), "same\n");
    ASSERT_TRUE(v) << v.error().ToString();
  }
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions"), "2");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "1");
}

TEST_F(PgFileVersions, ErasingAProjectErasesTheVersionsUnderIt) {
  ASSERT_TRUE(store_->RecordFileVersion(Version("a", "c1", "/src/app/x.py", "/src/app"), "x\n"));
  ASSERT_TRUE(
      store_->RecordFileVersion(Version("a", "c2", "/src/app/lib/y.py", "/elsewhere"), "y\n"));
  auto kept = store_->RecordFileVersion(Version("b", "c3", "/src/other/z.py", "/src/other"), "z\n");
  ASSERT_TRUE(kept);
  auto receipt = store_->Erase({.project = "/src/app"});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(ErasedCount(*receipt, "file_versions"), 2);  // one by its project, one by its path
  auto left = store_->ListFileVersions({});
  ASSERT_TRUE(left);
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].id, kept->id);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "1");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_refs"), "1");
}

TEST_F(PgFileVersions, TextAPostgreSQLStoreCannotHoldIsRefused) {
  auto r = store_->RecordFileVersion(Version("a", "c", std::string("/src/a\0b", 8)), "x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("NUL"), std::string::npos) << r.error().ToString();
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions"), "0");
}

TEST_F(PgFileVersions, AStoreOfSchema9UpgradesAndKeepsItsVersions) {
  auto before = store_->RecordFileVersion(Version("a", "c", "/src/app/a.py"), "before it\n");
  ASSERT_TRUE(before) << before.error().ToString();
  store_.reset();
  pg_->Query(
      "ALTER TABLE file_versions DROP COLUMN sealed;"
      "UPDATE sessiondb_meta SET value = '9' WHERE key = 'schema_version'");
  Reopen();
  EXPECT_EQ(pg_->Query("SELECT value FROM sessiondb_meta WHERE key = 'schema_version'"),
            std::to_string(kPostgresSchemaVersion));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE sealed IS NULL"), "1");
  auto listed = store_->ListFileVersions({.file_path = "/src/app/a.py"});
  ASSERT_TRUE(listed) << listed.error().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, before->id);
  EXPECT_EQ((*listed)[0].sha256, before->sha256);
  auto after = store_->RecordFileVersion(Version("a", "c2", "/src/app/a.py"), "after it\n");
  ASSERT_TRUE(after) << after.error().ToString();
  EXPECT_GT(after->id, before->id);
  EXPECT_EQ(*store_->ReadBlob(after->sha256), "after it\n");
}

TEST_F(PgFileVersions, AStoreOfSchema8UpgradesToKeepThem) {
  store_.reset();
  pg_->Query(
      "DROP TABLE file_versions;"
      "UPDATE sessiondb_meta SET value = '8' WHERE key = 'schema_version'");
  Reopen();
  EXPECT_EQ(pg_->Query("SELECT value FROM sessiondb_meta WHERE key = 'schema_version'"),
            std::to_string(kPostgresSchemaVersion));
  auto v = store_->RecordFileVersion(Version("a", "c", "/src/app/a.py"), "after the upgrade\n");
  ASSERT_TRUE(v) << v.error().ToString();
  EXPECT_EQ(*store_->ReadBlob(v->sha256), "after the upgrade\n");
}

// ---- An encrypted namespace ---------------------------------------------------

class PgEncryptedFileVersions : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kPostgresEncrypted; }

  std::unique_ptr<Store> OpenNamespace(const std::string& ns) {
    StoreOptions o = Options();
    o.namespace_name = ns;
    auto opened = Store::Open(pg_->uri(), o);
    EXPECT_TRUE(opened) << opened.error().ToString();
    return opened ? std::move(*opened) : nullptr;
  }

  // Every row of file_versions in namespace `ns`, as text.
  std::string RowsAsText(const std::string& ns = "default") {
    return pg_->Query(
        "SELECT coalesce(string_agg(x::text, E'\\n' ORDER BY x.id), '') FROM file_versions x "
        "WHERE namespace = '" +
        ns + "'");
  }
};

TEST_F(PgEncryptedFileVersions, AreKeptSealedListedAndReadBack) {
  const std::string path = "/src/zanzibarproject/quetzal.py";
  FileVersion before = Version("agent-1", "call-1", path, "/src/zanzibarproject");
  before.phase = FileVersionPhase::kBefore;
  before.tool = "MultiEditXylophone";
  auto b = store_->RecordFileVersion(before, "the old quetzal\n");
  ASSERT_TRUE(b) << b.error().ToString();
  FileVersion after = before;
  after.phase = FileVersionPhase::kAfter;
  auto a = store_->RecordFileVersion(after, "the new quetzal\n");
  ASSERT_TRUE(a) << a.error().ToString();
  EXPECT_GT(a->id, b->id);
  EXPECT_EQ(a->file_path, path);
  EXPECT_EQ(a->project, "/src/zanzibarproject");
  EXPECT_EQ(a->tool, "MultiEditXylophone");
  EXPECT_EQ(a->sha256, blob::Sha256Hex("the new quetzal\n"));
  FileVersion created = Version("agent-2", "call-2", "/src/zanzibarproject/new.py", "");
  created.exists = false;
  auto c = store_->RecordFileVersion(created, "");
  ASSERT_TRUE(c) << c.error().ToString();

  // By file, by session, and the content read back, all in plaintext.
  auto by_file = store_->ListFileVersions({.file_path = path});
  ASSERT_TRUE(by_file) << by_file.error().ToString();
  ASSERT_EQ(by_file->size(), 2u);
  EXPECT_EQ((*by_file)[0].id, b->id);
  EXPECT_EQ((*by_file)[0].phase, FileVersionPhase::kBefore);
  EXPECT_EQ((*by_file)[0].sha256, blob::Sha256Hex("the old quetzal\n"));
  EXPECT_EQ((*by_file)[1].id, a->id);
  EXPECT_EQ((*by_file)[1].file_path, path);
  EXPECT_EQ((*by_file)[1].project, "/src/zanzibarproject");
  EXPECT_EQ((*by_file)[1].tool, "MultiEditXylophone");
  EXPECT_EQ(*store_->ReadBlob((*by_file)[0].sha256), "the old quetzal\n");
  EXPECT_EQ(*store_->ReadBlob((*by_file)[1].sha256), "the new quetzal\n");
  auto by_session = store_->ListFileVersions({.agent_sessions = {"agent-2"}});
  ASSERT_TRUE(by_session) << by_session.error().ToString();
  ASSERT_EQ(by_session->size(), 1u);
  EXPECT_FALSE((*by_session)[0].exists);
  EXPECT_EQ((*by_session)[0].file_path, "/src/zanzibarproject/new.py");
  EXPECT_EQ((*by_session)[0].project, "");
  auto other_file = store_->ListFileVersions({.file_path = "/src/zanzibarproject/other.py"});
  ASSERT_TRUE(other_file);
  EXPECT_TRUE(other_file->empty());

  // The same key again is the row kept: the unique key works on tokens.
  auto again = store_->RecordFileVersion(after, "something else\n");
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->id, a->id);
  EXPECT_EQ(again->sha256, a->sha256);
  // A "before" that says nothing new stands on the "after" (compared opened).
  FileVersion next = before;
  next.tool_use_id = "call-3";
  auto nothing_new = store_->RecordFileVersion(next, "the new quetzal\n");
  ASSERT_TRUE(nothing_new) << nothing_new.error().ToString();
  EXPECT_EQ(nothing_new->id, a->id);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions"), "3");

  // As stored: none of the path, project, tool or digests, in any column.
  const std::string rows = RowsAsText();
  for (const std::string& plain :
       {std::string("quetzal"), std::string("zanzibarproject"), std::string("Xylophone"),
        blob::Sha256Hex("the new quetzal\n"), blob::Sha256Hex("the old quetzal\n")}) {
    EXPECT_EQ(rows.find(plain), std::string::npos) << plain << " is stored in " << rows;
  }
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions WHERE sealed LIKE 'sdb1:%' AND "
                       "tool = '' AND file_path LIKE 'e%'"),
            "3");
  EXPECT_EQ(pg_->Query("SELECT sha256 FROM file_versions WHERE id = " + std::to_string(a->id)),
            StoredBlobName(a->sha256));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_refs WHERE sha256 = '" +
                       StoredBlobName(a->sha256) + "' AND seq = " + std::to_string(a->id)),
            "1");

  // Another namespace's key makes another token of the same path.
  auto other = OpenNamespace("team-b");
  ASSERT_TRUE(other);
  auto theirs = other->RecordFileVersion(after, "the new quetzal\n");
  ASSERT_TRUE(theirs) << theirs.error().ToString();
  const std::string token_of = "SELECT file_path FROM file_versions WHERE id = ";
  const std::string mine = pg_->Query(token_of + std::to_string(a->id));
  const std::string their_token = pg_->Query(token_of + std::to_string(theirs->id));
  EXPECT_EQ(mine.size(), their_token.size());
  EXPECT_NE(mine, their_token);
  EXPECT_EQ(RowsAsText("team-b").find("quetzal"), std::string::npos);
}

TEST_F(PgEncryptedFileVersions, AMovedOrChangedValueIsCorruptionNotWrongData) {
  auto one = store_->RecordFileVersion(Version("a", "c1", "/src/app/one.py"), "one\n");
  auto two = store_->RecordFileVersion(Version("a", "c2", "/src/app/two.py"), "two\n");
  ASSERT_TRUE(one && two);
  const std::string id_one = std::to_string(one->id), id_two = std::to_string(two->id);
  auto expect_corruption = [&](const FileVersionQuery& q, const std::string& id) {
    auto r = store_->ListFileVersions(q);
    ASSERT_FALSE(r) << "read " << r->size() << " versions";
    EXPECT_EQ(r.error().code(), StatusCode::kCorruption) << r.error().ToString();
    EXPECT_NE(r.error().message().find("file version " + id), std::string::npos)
        << r.error().ToString();
  };

  // Row one's sealed value moved to row two (with its stored forms, so
  // that every column says "one.py"): it was sealed under another id.
  const std::string saved = pg_->Query(
      "SELECT concat_ws(',', file_path, sha256, sealed) FROM file_versions WHERE id = " + id_two);
  pg_->Query(
      "UPDATE file_versions t SET sealed = s.sealed, file_path = s.file_path, sha256 = "
      "s.sha256 FROM file_versions s WHERE s.id = " +
      id_one + " AND t.id = " + id_two);
  expect_corruption({}, id_two);
  expect_corruption({.file_path = "/src/app/one.py"}, id_two);
  auto by_two = store_->ListFileVersions({.file_path = "/src/app/two.py"});
  ASSERT_TRUE(by_two) << by_two.error().ToString();
  EXPECT_TRUE(by_two->empty());
  // A later record of the same file compares with the damaged row: refused too.
  FileVersion before = Version("a", "c3", "/src/app/one.py");
  before.phase = FileVersionPhase::kBefore;
  auto refused = store_->RecordFileVersion(before, "one\n");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kCorruption) << refused.error().ToString();

  // Put back, it reads again; then only the path token changed (the version
  // moved to another file's history): the seal no longer matches it.
  pg_->Query("UPDATE file_versions t SET file_path = split_part('" + saved +
             "', ',', 1), sha256 = split_part('" + saved + "', ',', 2), sealed = split_part('" +
             saved + "', ',', 3) WHERE t.id = " + id_two);
  auto all = store_->ListFileVersions({});
  ASSERT_TRUE(all) << all.error().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].file_path, "/src/app/two.py");
  pg_->Query(
      "UPDATE file_versions t SET file_path = s.file_path FROM file_versions s WHERE s.id = " +
      id_one + " AND t.id = " + id_two);
  expect_corruption({.file_path = "/src/app/one.py"}, id_two);

  // A byte of the seal changed, or the row written without the key.
  pg_->Query("UPDATE file_versions t SET file_path = split_part('" + saved +
             "', ',', 1), sealed = overlay(sealed placing 'A' from 20 for 1) WHERE t.id = " +
             id_two + " AND substr(sealed, 20, 1) <> 'A'");
  expect_corruption({}, id_two);
  pg_->Query("UPDATE file_versions SET sealed = NULL WHERE id = " + id_two);
  expect_corruption({.agent_sessions = {"a"}}, id_two);
}

TEST_F(PgEncryptedFileVersions, ErasingAProjectErasesTheVersionsUnderItOnly) {
  auto x = store_->RecordFileVersion(Version("a", "c1", "/src/app/x.py", "/src/app"), "x\n");
  auto y = store_->RecordFileVersion(Version("a", "c2", "/src/app/lib/y.py", "/elsewhere"), "y\n");
  auto z = store_->RecordFileVersion(Version("b", "c3", "/src/other/z.py", "/src/other"), "z\n");
  // A sibling whose name starts like the project is not under it.
  auto w = store_->RecordFileVersion(
      Version("b", "c4", "/src/application/w.py", "/src/application"), "w\n");
  ASSERT_TRUE(x && y && z && w);
  auto receipt = store_->Erase({.project = "/src/app"});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_EQ(ErasedCount(*receipt, "file_versions"), 2);  // one by its project, one by its path
  // The receipt names the contents by their digests, as on every backend.
  std::vector<std::string> blobs = receipt->blobs;
  std::sort(blobs.begin(), blobs.end());
  std::vector<std::string> expected = {x->sha256, y->sha256};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(blobs, expected);
  auto left = store_->ListFileVersions({});
  ASSERT_TRUE(left) << left.error().ToString();
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[0].id, z->id);
  EXPECT_EQ((*left)[1].id, w->id);
  EXPECT_EQ(store_->ReadBlob(x->sha256).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(*store_->ReadBlob(z->sha256), "z\n");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "2");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_refs"), "2");
  auto check = store_->VerifyErased(*receipt);
  ASSERT_TRUE(check) << check.error().ToString();
  EXPECT_TRUE(check->problems.empty()) << check->problems.front();

  // Everything: even a version whose seal no longer opens goes.
  pg_->Query("UPDATE file_versions SET sealed = NULL WHERE id = " + std::to_string(z->id));
  auto all = store_->Erase({.everything = true});
  ASSERT_TRUE(all) << all.error().ToString();
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM file_versions"), "0");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_refs"), "0");
  std::vector<std::string> everything = all->blobs;
  std::sort(everything.begin(), everything.end());
  expected = {z->sha256, w->sha256};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(everything, expected) << "the receipt names the contents by their digests";
}

// ---- The object tier ----------------------------------------------------------

constexpr const char* kBucket = "sessiondb-versions";
constexpr int64_t kThreshold = 10'000;

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A plaintext and an encrypted namespace whose blobs above kThreshold go to
// a bucket of moto (an S3-compatible server) started for the test.
class PgFileVersionObjects : public StoreTest, public ::testing::WithParamInterface<Backend> {
 protected:
  Backend backend() const override { return GetParam(); }

  void SetUp() override {
    port_ = FreePort();
    moto_ = ::fork();
    if (moto_ == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      const std::string port = std::to_string(port_);
      ::execlp("python3", "python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", port.c_str(),
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    bool created = false;
    for (int i = 0; i < 300 && !created; ++i) {
      created = Bucket().CreateBucket().ok();
      if (!created) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(created) << "moto did not start: is `python3 -m moto.server` installed?";
    ::setenv("SESSIONDB_S3_ENDPOINT", Endpoint().c_str(), 1);
    ::setenv("SESSIONDB_S3_BUCKET", kBucket, 1);
    ::setenv("AWS_ACCESS_KEY_ID", "testing", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "testing", 1);
    ::setenv("SESSIONDB_S3_THRESHOLD", std::to_string(kThreshold).c_str(), 1);
    StoreTest::SetUp();
  }
  void TearDown() override {
    store_.reset();
    for (const char* name : {"SESSIONDB_S3_ENDPOINT", "SESSIONDB_S3_BUCKET", "AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY", "SESSIONDB_S3_THRESHOLD"}) {
      ::unsetenv(name);
    }
    if (moto_ > 0) {
      ::kill(moto_, SIGTERM);
      ::waitpid(moto_, nullptr, 0);
    }
  }

  std::string Endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  blob::S3ObjectStore Bucket() const {
    return blob::S3ObjectStore({.endpoint = Endpoint(),
                                .bucket = kBucket,
                                .access_key_id = "testing",
                                .secret_access_key = "testing"});
  }

  int port_ = 0;
  pid_t moto_ = -1;
};

TEST_P(PgFileVersionObjects, ALargeVersionGoesToTheBucketAsALargeMessageBlobDoes) {
  const std::string large(static_cast<size_t>(kThreshold) * 3, 'L');
  auto v = store_->RecordFileVersion(Version("agent", "call-1", "/src/app/big.txt"), large);
  ASSERT_TRUE(v) << v.error().ToString();
  // Under its keyed name in an encrypted namespace, as a message's blob.
  const std::string name = StoredBlobName(v->sha256);
  const std::string key = postgres::ObjectKeyOf(name);
  EXPECT_EQ(pg_->Query("SELECT location FROM blobs WHERE sha256 = '" + name + "'"), key);
  EXPECT_EQ(pg_->Query("SELECT length(bytes) FROM blobs"), "0");
  // Its upload was claimed by the transaction that named it.
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "0");
  auto object = Bucket().Exists(key);
  ASSERT_TRUE(object) << object.error().ToString();
  EXPECT_TRUE(*object);
  auto bytes = store_->ReadBlob(v->sha256);
  ASSERT_TRUE(bytes) << bytes.error().ToString();
  EXPECT_EQ(*bytes, large);

  // The same call again is the row kept first: nothing uploaded for it.
  const std::string other(static_cast<size_t>(kThreshold) * 2, 'M');
  auto again = store_->RecordFileVersion(Version("agent", "call-1", "/src/app/big.txt"), other);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again->id, v->id);
  auto not_uploaded =
      Bucket().Exists(postgres::ObjectKeyOf(StoredBlobName(blob::Sha256Hex(other))));
  ASSERT_TRUE(not_uploaded) << not_uploaded.error().ToString();
  EXPECT_FALSE(*not_uploaded);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "0");
}

INSTANTIATE_TEST_SUITE_P(Namespaces, PgFileVersionObjects,
                         ::testing::Values(Backend::kPostgres, Backend::kPostgresEncrypted),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return BackendName(info.param);
                         });

}  // namespace pg_file_versions
}  // namespace
}  // namespace sessiondb::testing
