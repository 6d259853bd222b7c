// File versions on PostgreSQL (pg_file_versions.cc): what only a shared
// database can get wrong. Namespaces never see each other's versions or
// their content; writers racing to record one tool call keep one row and
// nothing of the losers; a project's erasure takes its versions; a store of
// schema 8 upgrades to hold them; a large version goes to the object tier
// as a large message blob does, and an encrypted namespace's refusal
// uploads nothing. The contract on every backend is file_versions_test.cc.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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
  int64_t counted = -1;
  for (const auto& [kind, n] : receipt->counts) {
    if (kind == "file_versions") counted = n;
  }
  EXPECT_EQ(counted, 2);  // one by its project, one by its path
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
  if (encrypted()) {
    // Refused before anything is stored: no object, no upload record, no row.
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code(), StatusCode::kFailedPrecondition) << v.error().ToString();
    EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "0");
    EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "0");
    auto object = Bucket().Exists(postgres::ObjectKeyOf(StoredBlobName(blob::Sha256Hex(large))));
    ASSERT_TRUE(object) << object.error().ToString();
    EXPECT_FALSE(*object);
    return;
  }
  ASSERT_TRUE(v) << v.error().ToString();
  const std::string key = postgres::ObjectKeyOf(v->sha256);
  EXPECT_EQ(pg_->Query("SELECT location FROM blobs WHERE sha256 = '" + v->sha256 + "'"), key);
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
  auto not_uploaded = Bucket().Exists(postgres::ObjectKeyOf(blob::Sha256Hex(other)));
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
