#include "store/postgres/pg_object_blobs.h"

#include <cstdlib>

#include "blob/s3_object_store.h"
#include "core/uuid.h"

namespace sessiondb::postgres {
namespace {

// The token of a tombstone: the object of a deleted row (or of an upload gc
// took), to be deleted by gc. Never protects an object.
constexpr const char* kTombstone = "";

// Serialises, per key, recording an upload, claiming it and deleting the
// object, for the rest of the caller's transaction.
Status LockKey(PgConnection& c, std::string_view key) {
  PgParams p;
  p.Add(key);
  return c.Run("SELECT pg_advisory_xact_lock(hashtextextended($1, 6))", p);
}

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

// A positive whole number from `name`, or `fallback` when it is unset.
Result<int64_t> NumberFromEnvironment(const char* name, int64_t fallback) {
  const std::string text = Environment(name);
  if (text.empty()) return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || value < 0) {
    return Err(Status::InvalidArgument("$" + std::string(name) + " is '" + text +
                                       "'; it takes a whole number of at least 0"));
  }
  return static_cast<int64_t>(value);
}

}  // namespace

Result<std::optional<ObjectTierConfig>> ObjectTierFromEnvironment() {
  ObjectTierConfig config;
  config.endpoint = Environment("SESSIONDB_S3_ENDPOINT");
  if (config.endpoint.empty()) return std::optional<ObjectTierConfig>();
  while (config.endpoint.ends_with('/')) config.endpoint.pop_back();
  config.bucket = Environment("SESSIONDB_S3_BUCKET");
  if (config.bucket.empty()) {
    return Err(Status::InvalidArgument(
        "$SESSIONDB_S3_ENDPOINT is set but $SESSIONDB_S3_BUCKET is not; name the bucket that "
        "holds the store's large blobs"));
  }
  config.region = Environment("SESSIONDB_S3_REGION");
  if (config.region.empty()) config.region = "us-east-1";
  config.access_key_id = Environment("AWS_ACCESS_KEY_ID");
  config.secret_access_key = Environment("AWS_SECRET_ACCESS_KEY");
  config.session_token = Environment("AWS_SESSION_TOKEN");
  ASSIGN_OR_RETURN(config.threshold_bytes,
                   NumberFromEnvironment("SESSIONDB_S3_THRESHOLD", config.threshold_bytes));
  ASSIGN_OR_RETURN(config.timeout_ms,
                   NumberFromEnvironment("SESSIONDB_S3_TIMEOUT_MS", config.timeout_ms));
  ASSIGN_OR_RETURN(int64_t grace_s,
                   NumberFromEnvironment("SESSIONDB_S3_GRACE_SECONDS", config.grace_ms / 1000));
  config.grace_ms = grace_s * 1000;
  return std::optional<ObjectTierConfig>(std::move(config));
}

std::unique_ptr<ObjectTier> MakeObjectTier(const ObjectTierConfig& config) {
  blob::S3Options s3{.endpoint = config.endpoint,
                     .bucket = config.bucket,
                     .region = config.region,
                     .access_key_id = config.access_key_id,
                     .secret_access_key = config.secret_access_key,
                     .session_token = config.session_token,
                     .timeout_ms = config.timeout_ms};
  return std::make_unique<ObjectTier>(std::make_unique<blob::S3ObjectStore>(std::move(s3)),
                                      config.threshold_bytes, config.grace_ms);
}

std::string ObjectKeyOf(std::string_view name) {
  // A keyed name is "k" and hex: its first two hex digits spread it the same way.
  const std::string_view hex = name.starts_with('k') ? name.substr(1) : name;
  return "sha256/" + std::string(hex.substr(0, 2)) + "/" + std::string(name);
}

bool IsObjectKey(std::string_view text) { return text.starts_with("sha256/"); }

ObjectTier::ObjectTier(std::unique_ptr<blob::ObjectStore> objects, int64_t threshold_bytes,
                       int64_t grace_ms)
    : objects_(std::move(objects)), threshold_bytes_(threshold_bytes), grace_ms_(grace_ms) {}

Result<ObjectUpload> ObjectTier::Upload(PgConnection& c, std::string_view name,
                                        std::string_view stored, int64_t now_ms) {
  ObjectUpload upload{ObjectKeyOf(name), NewUuidV7(now_ms)};
  {
    // Recorded and committed first: from here on gc leaves the object alone
    // for the grace period, however long the PUT and the append take.
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    RETURN_IF_ERROR(LockKey(c, upload.key));
    PgParams p;
    p.Add(upload.key).Add(upload.token).Add(now_ms);
    RETURN_IF_ERROR(
        c.Run("INSERT INTO blob_uploads (key, token, since_ms) VALUES ($1, $2, $3)", p));
    RETURN_IF_ERROR(txn.Commit());
  }
  Status put = objects_->Put(upload.key, stored);
  if (!put.ok()) {
    return Err(Status(put.code(), "storing a blob of " + std::to_string(stored.size()) +
                                      " bytes in object storage (" + objects_->Describe() +
                                      "): " + put.message()));
  }
  return upload;
}

Result<std::string> ObjectTier::Read(std::string_view key, int64_t max_bytes,
                                     std::string_view expected_sha256) {
  return objects_->Get(key, max_bytes, expected_sha256);
}

Result<store::BlobRemoval> ObjectTier::Collect(PgConnection& c, std::string_view key,
                                               int64_t cutoff_ms, bool dry_run) {
  PgParams p;
  p.Add(key);
  {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    RETURN_IF_ERROR(LockKey(c, key));
    ASSIGN_OR_RETURN(PgResult named, c.Exec("SELECT 1 FROM blobs WHERE location = $1 LIMIT 1", p));
    if (named.rows() > 0) {
      if (dry_run) return store::BlobRemoval::kReferenced;
      // Named again (an append of the same bytes since): the tombstone goes.
      RETURN_IF_ERROR(c.Run("DELETE FROM blob_uploads WHERE key = $1 AND token = ''", p));
      RETURN_IF_ERROR(txn.Commit());
      return store::BlobRemoval::kReferenced;
    }
    PgParams fresh;
    fresh.Add(key).Add(cutoff_ms);
    ASSIGN_OR_RETURN(PgResult young, c.Exec("SELECT 1 FROM blob_uploads WHERE key = $1 AND "
                                            "token <> '' AND since_ms > $2 LIMIT 1",
                                            fresh));
    if (young.rows() > 0) return store::BlobRemoval::kInGrace;
    if (dry_run) return store::BlobRemoval::kRemoved;
    // The stale records go, and a tombstone stays, before the object does:
    // once this commits no append can claim them, and if the DELETE below
    // fails the tombstone brings gc back to it.
    RETURN_IF_ERROR(c.Run("DELETE FROM blob_uploads WHERE key = $1 AND token <> ''", p));
    RETURN_IF_ERROR(
        c.Run("INSERT INTO blob_uploads (key, token, since_ms) VALUES ($1, '', 0) "
              "ON CONFLICT DO NOTHING",
              p));
    RETURN_IF_ERROR(txn.Commit());
  }
  ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
  RETURN_IF_ERROR(LockKey(c, key));
  // Under the lock: an upload recorded since is about to PUT (or has): the
  // object is its, and the tombstone waits for a later gc.
  ASSIGN_OR_RETURN(PgResult since, c.Exec("SELECT 1 FROM blob_uploads WHERE key = $1 AND "
                                          "token <> '' LIMIT 1",
                                          p));
  if (since.rows() > 0) return store::BlobRemoval::kInGrace;
  ASSIGN_OR_RETURN(PgResult named, c.Exec("SELECT 1 FROM blobs WHERE location = $1 LIMIT 1", p));
  if (named.rows() == 0) {
    // Deleted while the lock is held: no upload of this key can start until
    // the commit, so no PUT lands before this DELETE.
    Status deleted = objects_->Delete(key);
    if (!deleted.ok()) {
      return Err(Status(deleted.code(), "deleting object " + std::string(key) + " from " +
                                            objects_->Describe() + ": " + deleted.message()));
    }
  }
  RETURN_IF_ERROR(c.Run("DELETE FROM blob_uploads WHERE key = $1 AND token = ''", p));
  RETURN_IF_ERROR(txn.Commit());
  return named.rows() == 0 ? store::BlobRemoval::kRemoved : store::BlobRemoval::kReferenced;
}

Result<bool> ClaimUpload(PgConnection& c, const ObjectUpload& upload) {
  RETURN_IF_ERROR(LockKey(c, upload.key));
  PgParams p;
  p.Add(upload.key).Add(upload.token);
  ASSIGN_OR_RETURN(PgResult claimed, c.Exec("DELETE FROM blob_uploads WHERE key = $1 AND "
                                            "token = $2 RETURNING 1",
                                            p));
  if (claimed.rows() > 0) return true;
  // gc took the record (the upload outlasted the grace period) and may have
  // deleted the object: it is not named, and the object is left to gc.
  RETURN_IF_ERROR(ForgetObject(c, upload.key));
  return false;
}

Status ForgetObject(PgConnection& c, std::string_view key) {
  PgParams p;
  p.Add(key).Add(std::string_view(kTombstone));
  return c.Run(
      "INSERT INTO blob_uploads (key, token, since_ms) VALUES ($1, $2, 0) "
      "ON CONFLICT DO NOTHING",
      p);
}

Result<std::vector<std::string>> UnnamedObjects(PgConnection& c) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT DISTINCT u.key FROM blob_uploads u WHERE NOT "
                                      "EXISTS (SELECT 1 FROM blobs b WHERE b.location = u.key) "
                                      "ORDER BY 1"));
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) keys.emplace_back(r.Text(i, 0));
  return keys;
}

}  // namespace sessiondb::postgres
