// Blobs in object storage (docs/postgres.md): a PostgreSQL store whose large
// blobs go to an S3 bucket. The bucket is a real S3-compatible server (moto,
// started here on a free port) behind a small proxy of our own that can
// answer 500, stall past the timeout or return wrong bytes. moto checks no
// checksums, so every read here is re-hashed. Whatever fails, no row ever
// names a missing or wrong object.

#include "store/postgres/pg_object_blobs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "blob/s3_object_store.h"
#include "blob/sha256.h"
#include "httplib.h"
#include "sessiondb/forget.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr const char* kBucket = "sessiondb-blobs";
constexpr int64_t kThreshold = 100'000;
constexpr int64_t kGraceSeconds = 3600;

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

bool Accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// What the proxy does to the requests it forwards to moto.
enum class Fault { kNone, kServerError, kStall, kWrongBytes };

// moto on a free port, and the fault-injecting proxy in front of it.
class ObjectServer {
 public:
  ObjectServer() {
    moto_port_ = FreePort();
    moto_pid_ = ::fork();
    if (moto_pid_ == 0) {
      const std::string port = std::to_string(moto_port_);
      // Its request log would bury the test's output.
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      ::execlp("python3", "python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", port.c_str(),
               static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 300 && !Accepts(moto_port_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto forward = [this](const httplib::Request& req, httplib::Response& res) {
      Forward(req, res);
    };
    proxy_.Get(".*", forward);
    proxy_.Put(".*", forward);
    proxy_.Delete(".*", forward);
    proxy_.Post(".*", forward);
    proxy_port_ = proxy_.bind_to_any_port("127.0.0.1");
    proxy_thread_ = std::thread([this] { proxy_.listen_after_bind(); });
    for (int i = 0; i < 100 && !Accepts(proxy_port_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~ObjectServer() {
    proxy_.stop();
    if (proxy_thread_.joinable()) proxy_thread_.join();
    if (moto_pid_ > 0) {
      ::kill(moto_pid_, SIGTERM);
      ::waitpid(moto_pid_, nullptr, 0);
    }
  }

  bool ok() const { return Accepts(moto_port_) && Accepts(proxy_port_); }
  std::string proxy_endpoint() const { return "http://127.0.0.1:" + std::to_string(proxy_port_); }
  // The bucket as the tests see it: straight to moto, no faults.
  blob::S3ObjectStore Direct() const {
    return blob::S3ObjectStore({.endpoint = "http://127.0.0.1:" + std::to_string(moto_port_),
                                .bucket = kBucket,
                                .access_key_id = "testing",
                                .secret_access_key = "testing"});
  }
  void set_fault(Fault f) { fault_ = f; }
  int forwarded() const { return forwarded_; }

 private:
  void Forward(const httplib::Request& req, httplib::Response& res) {
    ++forwarded_;
    const Fault fault = fault_;
    if (fault == Fault::kServerError) {
      res.status = 500;
      res.set_content("<Error><Code>InternalError</Code></Error>", "application/xml");
      return;
    }
    if (fault == Fault::kStall) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    httplib::Client moto("127.0.0.1", moto_port_);
    httplib::Headers headers;
    for (const auto& [name, value] : req.headers) {
      if (name != "Host" && name != "Content-Length" && name != "REMOTE_ADDR" &&
          name != "REMOTE_PORT" && name != "LOCAL_ADDR" && name != "LOCAL_PORT") {
        headers.emplace(name, value);
      }
    }
    const std::string type = req.get_header_value("Content-Type");
    httplib::Result r = [&] {
      if (req.method == "PUT") {
        return moto.Put(req.target.c_str(), headers, req.body,
                        type.empty() ? "application/octet-stream" : type.c_str());
      }
      if (req.method == "DELETE") return moto.Delete(req.target.c_str(), headers);
      if (req.method == "HEAD") return moto.Head(req.target.c_str(), headers);
      return moto.Get(req.target.c_str(), headers);
    }();
    if (!r) {
      res.status = 502;
      return;
    }
    res.status = r->status;
    std::string body = r->body;
    if (fault == Fault::kWrongBytes && req.method == "GET" && !body.empty()) body[0] ^= 1;
    res.set_content(body, r->get_header_value("Content-Type").c_str());
  }

  int moto_port_ = 0;
  pid_t moto_pid_ = -1;
  httplib::Server proxy_;
  int proxy_port_ = 0;
  std::thread proxy_thread_;
  std::atomic<Fault> fault_{Fault::kNone};
  std::atomic<int> forwarded_{0};
};

class PgObjectBlobs : public StoreTest, public ::testing::WithParamInterface<Backend> {
 protected:
  Backend backend() const override { return GetParam(); }

  void SetUp() override {
    server_ = std::make_unique<ObjectServer>();
    ASSERT_TRUE(server_->ok()) << "moto did not start: is `python3 -m moto.server` installed?";
    blob::S3ObjectStore direct = server_->Direct();
    ASSERT_TRUE(direct.CreateBucket().ok());
    ::setenv("SESSIONDB_S3_ENDPOINT", server_->proxy_endpoint().c_str(), 1);
    ::setenv("SESSIONDB_S3_BUCKET", kBucket, 1);
    ::setenv("AWS_ACCESS_KEY_ID", "testing", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "testing", 1);
    ::setenv("SESSIONDB_S3_THRESHOLD", std::to_string(kThreshold).c_str(), 1);
    ::setenv("SESSIONDB_S3_TIMEOUT_MS", "500", 1);
    ::setenv("SESSIONDB_S3_GRACE_SECONDS", std::to_string(kGraceSeconds).c_str(), 1);
    StoreTest::SetUp();
  }
  void TearDown() override {
    store_.reset();
    for (const char* name : {"SESSIONDB_S3_ENDPOINT", "SESSIONDB_S3_BUCKET", "AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY", "SESSIONDB_S3_THRESHOLD",
                             "SESSIONDB_S3_TIMEOUT_MS", "SESSIONDB_S3_GRACE_SECONDS"}) {
      ::unsetenv(name);
    }
    server_.reset();
  }

  static Message WithImage(const std::string& png) {
    Message m;
    m.parts = {Part::Text("look"), Part::ImageFromBytes(png, "image/png")};
    return m;
  }
  static std::string BigPng(const std::string& salt) { return MakePng(4, 4, salt, 300 * 1024); }

  std::string KeyOf(const std::string& sha) const {
    return postgres::ObjectKeyOf(StoredBlobName(sha));
  }
  // Whether the bucket holds the object of blob `sha`.
  bool InBucket(const std::string& sha) {
    auto exists = server_->Direct().Exists(KeyOf(sha));
    EXPECT_TRUE(exists) << exists.error().ToString();
    return exists && *exists;
  }
  // The rows of blobs whose bytes are in the bucket / in the row.
  std::string ObjectRows() const {
    return pg_->Query(
        "SELECT count(*) FROM blobs WHERE location IS NOT NULL AND length(bytes) = 0");
  }
  std::string RowsNamingMissingObjects() {
    const std::string locations =
        pg_->Query("SELECT coalesce(string_agg(location, ' '), '') FROM blobs");
    std::istringstream in(locations);
    std::string key;
    int missing = 0;
    blob::S3ObjectStore direct = server_->Direct();
    while (in >> key) missing += !*direct.Exists(key);
    return std::to_string(missing);
  }

  std::unique_ptr<ObjectServer> server_;
};

TEST_P(PgObjectBlobs, ALargeBlobGoesToTheBucketAndASmallOneStaysInItsRow) {
  const std::string session = NewSessionId();
  const std::string big = BigPng("big");
  const std::string small = MakePng(4, 4, "small");
  auto a = store_->Append(session, WithImage(big));
  ASSERT_TRUE(a) << a.error().ToString();
  auto b = store_->Append(session, WithImage(small));
  ASSERT_TRUE(b) << b.error().ToString();
  const std::string big_sha = a->resources[0].content_sha256;
  const std::string small_sha = b->resources[0].content_sha256;

  EXPECT_EQ(ObjectRows(), "1");
  EXPECT_EQ(
      pg_->Query("SELECT location FROM blobs WHERE sha256 = '" + StoredBlobName(big_sha) + "'"),
      KeyOf(big_sha));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs WHERE location IS NULL AND length(bytes) > 0"),
            "1");
  EXPECT_TRUE(InBucket(big_sha));
  EXPECT_FALSE(InBucket(small_sha));
  // The object holds what `bytes` would: the plaintext, or the sealed bytes.
  auto object = server_->Direct().Get(KeyOf(big_sha), 1 << 22, "");
  ASSERT_TRUE(object) << object.error().ToString();
  if (encrypted()) {
    EXPECT_NE(*object, big);
    auto opened = Sealer().OpenBytes(postgres::PgColumn::kBlob, StoredBlobName(big_sha), *object);
    ASSERT_TRUE(opened);
    EXPECT_EQ(*opened, big);
  } else {
    EXPECT_EQ(blob::Sha256Hex(*object), big_sha);
  }

  // Both read back exactly, whole and in pieces.
  auto read_big = store_->ReadBlob(big_sha, /*verify=*/true);
  ASSERT_TRUE(read_big) << read_big.error().ToString();
  EXPECT_EQ(blob::Sha256Hex(*read_big), big_sha);
  EXPECT_EQ(*store_->ReadBlob(small_sha, true), small);
  auto reader = store_->OpenBlob(big_sha);
  ASSERT_TRUE(reader) << reader.error().ToString();
  std::string pieces;
  while (true) {
    auto piece = (*reader)->Read(64 * 1024);
    ASSERT_TRUE(piece);
    if (piece->empty()) break;
    pieces += *piece;
  }
  EXPECT_EQ(pieces, big);
  auto verified = store_->Verify({});
  ASSERT_TRUE(verified) << verified.error().ToString();
  EXPECT_TRUE(verified->corrupt.empty());
  EXPECT_TRUE(verified->missing.empty());

  // The same bytes again: no second upload, the same row.
  const int before = server_->forwarded();
  ASSERT_TRUE(store_->Append(session, WithImage(big)));
  EXPECT_EQ(server_->forwarded(), before);
  EXPECT_EQ(ObjectRows(), "1");
}

TEST_P(PgObjectBlobs, ANamespaceCannotReadAnotherNamespacesObjectByDigest) {
  const std::string session = NewSessionId();
  auto a = store_->Append(session, WithImage(BigPng("team-a")));
  ASSERT_TRUE(a) << a.error().ToString();
  const std::string sha = a->resources[0].content_sha256;
  StoreOptions o = Options();
  o.namespace_name = "team-b";
  auto b = Store::Open(pg_->uri(), o);
  ASSERT_TRUE(b) << b.error().ToString();
  const int before = server_->forwarded();
  EXPECT_EQ((*b)->ReadBlob(sha).error().code(), StatusCode::kNotFound);
  EXPECT_EQ((*b)->OpenBlob(sha).error().code(), StatusCode::kNotFound);
  // Refused in SQL, before the bucket is asked.
  EXPECT_EQ(server_->forwarded(), before);
}

TEST_P(PgObjectBlobs, AnUploadAnsweredWith500FailsTheAppendAndNoRowNamesTheObject) {
  const std::string session = NewSessionId();
  server_->set_fault(Fault::kServerError);
  auto r = store_->Append(session, WithImage(BigPng("five-hundred")));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kBusy) << r.error().ToString();
  EXPECT_NE(r.error().message().find("HTTP 500"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("object storage"), std::string::npos);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "0");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM events"), "0");
  // A small blob never goes near the bucket.
  ASSERT_TRUE(store_->Append(session, WithImage(MakePng(4, 4, "small"))));
}

TEST_P(PgObjectBlobs, AnUploadThatTimesOutFailsTheAppendAndNoRowNamesTheObject) {
  const std::string session = NewSessionId();
  server_->set_fault(Fault::kStall);
  auto r = store_->Append(session, WithImage(BigPng("stalled")));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kBusy) << r.error().ToString();
  EXPECT_NE(r.error().message().find("timeout"), std::string::npos) << r.error().message();
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "0");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM events"), "0");
  server_->set_fault(Fault::kNone);
  // Once the bucket answers again, the same append goes through.
  auto again = store_->Append(session, WithImage(BigPng("stalled")));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(RowsNamingMissingObjects(), "0");
}

TEST_P(PgObjectBlobs, AnObjectThatReadsBackWrongFailsTheAppend) {
  const std::string session = NewSessionId();
  server_->set_fault(Fault::kWrongBytes);
  auto r = store_->Append(session, WithImage(BigPng("wrong")));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kCorruption) << r.error().ToString();
  EXPECT_NE(r.error().message().find("did not read back"), std::string::npos);
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "0");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM events"), "0");
}

TEST_P(PgObjectBlobs, AnObjectReplacedWithWrongBytesReadsAsCorruption) {
  const std::string session = NewSessionId();
  auto a = store_->Append(session, WithImage(BigPng("replaced")));
  ASSERT_TRUE(a) << a.error().ToString();
  const std::string sha = a->resources[0].content_sha256;
  auto object = server_->Direct().Get(KeyOf(sha), 1 << 22, "");
  ASSERT_TRUE(object);
  std::string damaged = *object;
  damaged[damaged.size() / 2] ^= 1;
  ASSERT_TRUE(server_->Direct().Put(KeyOf(sha), damaged).ok());
  auto read = store_->ReadBlob(sha);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), StatusCode::kCorruption) << read.error().ToString();
  EXPECT_EQ(store_->OpenBlob(sha).error().code(), StatusCode::kCorruption);
  auto verified = store_->Verify({});
  ASSERT_TRUE(verified);
  EXPECT_EQ(verified->corrupt, std::vector<std::string>{sha});
}

TEST_P(PgObjectBlobs, GcLeavesAnUnclaimedUploadAloneForTheGracePeriod) {
  const std::string session = NewSessionId();
  // The object is stored, but the append fails before any row names it:
  // as if its transaction were still on its way.
  server_->set_fault(Fault::kWrongBytes);
  const std::string png = BigPng("in-flight");
  const std::string sha = blob::Sha256Hex(png);
  ASSERT_FALSE(store_->Append(session, WithImage(png)));
  server_->set_fault(Fault::kNone);
  ASSERT_TRUE(InBucket(sha));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "1");

  auto gc = store_->CollectGarbage({.grace_ms = 0});
  ASSERT_TRUE(gc) << gc.error().ToString();
  EXPECT_EQ(gc->blobs_in_grace, 1);
  EXPECT_TRUE(InBucket(sha));

  now_ms_ += (kGraceSeconds + 1) * 1000;
  auto dry = store_->CollectGarbage({.grace_ms = 0, .dry_run = true});
  ASSERT_TRUE(dry);
  EXPECT_TRUE(InBucket(sha));
  gc = store_->CollectGarbage({.grace_ms = 0});
  ASSERT_TRUE(gc) << gc.error().ToString();
  EXPECT_EQ(gc->blobs_deleted, 1);
  EXPECT_FALSE(InBucket(sha));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "0");
}

TEST_P(PgObjectBlobs, GcDeletesAnUnreferencedObjectButNotOneAnAppendIsAboutToName) {
  const std::string session = NewSessionId();
  auto a = store_->Append(session, WithImage(BigPng("collected")));
  ASSERT_TRUE(a) << a.error().ToString();
  const std::string sha = a->resources[0].content_sha256;
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "0");  // claimed
  // Unreferenced behind the store's back, while another append of the same
  // bytes has recorded its upload and not yet committed.
  pg_->Query("DELETE FROM blob_refs");
  pg_->Query("INSERT INTO blob_uploads (key, token, since_ms) VALUES ('" + KeyOf(sha) +
             "', 'other-append', " + std::to_string(now_ms_) + ")");
  auto gc = store_->CollectGarbage({.grace_ms = 0});
  ASSERT_TRUE(gc) << gc.error().ToString();
  EXPECT_EQ(gc->blobs_deleted, 1);  // the row
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "0");
  EXPECT_TRUE(InBucket(sha));  // the object: the other append may name it

  now_ms_ += (kGraceSeconds + 1) * 1000;
  gc = store_->CollectGarbage({.grace_ms = 0});
  ASSERT_TRUE(gc) << gc.error().ToString();
  EXPECT_FALSE(InBucket(sha));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "0");
}

TEST_P(PgObjectBlobs, ErasingASessionDeletesItsObject) {
  const std::string session = NewSessionId();
  auto a = store_->Append(session, WithImage(BigPng("erased")));
  ASSERT_TRUE(a) << a.error().ToString();
  const std::string sha = a->resources[0].content_sha256;
  ASSERT_TRUE(InBucket(sha));
  auto receipt = store_->Erase({.session_ids = {session}});
  ASSERT_TRUE(receipt) << receipt.error().ToString();
  EXPECT_FALSE(InBucket(sha));
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blobs"), "0");
  EXPECT_EQ(pg_->Query("SELECT count(*) FROM blob_uploads"), "0");
  // The same bytes appended again are uploaded again.
  const std::string again = NewSessionId();
  ASSERT_TRUE(store_->Append(again, WithImage(BigPng("erased"))));
  EXPECT_TRUE(InBucket(sha));
  EXPECT_EQ(RowsNamingMissingObjects(), "0");
}

INSTANTIATE_TEST_SUITE_P(Backends, PgObjectBlobs,
                         ::testing::Values(Backend::kPostgres, Backend::kPostgresEncrypted),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return BackendName(info.param);
                         });

}  // namespace
}  // namespace sessiondb::testing
