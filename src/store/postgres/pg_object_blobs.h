// The object tier of a PostgreSQL store's blobs (docs/postgres.md, "Blobs in
// object storage"): a blob above a size threshold is kept in an S3 bucket
// under `sha256/ab/<stored name>`, and its `blobs` row keeps its size,
// digest and the object's key in `location`, with `bytes` empty. The object
// holds exactly what `bytes` would: the plaintext, or in an encrypted
// namespace the sealed bytes under the blob's keyed name.
//
// The protocol that keeps every row's object present (schema v6,
// docs/formats.md: `blobs.location`, `blob_uploads`):
//   - an append records its upload (key, a token, the time) in
//     `blob_uploads` and commits that, then PUTs the object and reads it
//     back (blob/object_store.h) before its own transaction begins;
//   - inside that transaction it claims the upload (deletes its record)
//     before the row naming the object is inserted; a claim that finds its
//     record gone (gc took it) stores the bytes in the row instead;
//   - gc deletes an object only when no row names it and no upload record
//     younger than the grace period does: first it drops the stale records
//     and leaves a tombstone (committed), then, under the key's advisory
//     lock (which claims and records take too), deletes the object.
// So an object is deleted only when no transaction can still name it, and
// a crash anywhere leaves at worst an object that the next gc deletes.
// Thread-safety: ObjectTier is safe to share; the functions that take a
// connection work on one the caller uses alone.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blob/object_store.h"
#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"
#include "store/write_transaction.h"

namespace sessiondb::postgres {

// The tier as configured by the environment (docs/postgres.md):
// SESSIONDB_S3_ENDPOINT (none: no tier), SESSIONDB_S3_BUCKET,
// SESSIONDB_S3_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, SESSIONDB_S3_THRESHOLD, SESSIONDB_S3_TIMEOUT_MS,
// SESSIONDB_S3_GRACE_SECONDS.
struct ObjectTierConfig {
  std::string endpoint, bucket, region, access_key_id, secret_access_key, session_token;
  int64_t threshold_bytes = int64_t{256} * 1024;  // blobs larger than this go to the bucket
  int64_t timeout_ms = 60'000;
  int64_t grace_ms = int64_t{3600} * 1000;  // an upload's record protects its object this long
};

// nullopt when SESSIONDB_S3_ENDPOINT is unset or empty; kInvalidArgument
// naming the variable when one is malformed or the bucket is missing.
Result<std::optional<ObjectTierConfig>> ObjectTierFromEnvironment();

// The tier `config` describes, over S3 (blob/s3_object_store.h). Nothing is
// sent until a blob is stored or read.
std::unique_ptr<class ObjectTier> MakeObjectTier(const ObjectTierConfig& config);

// The key of the object of a blob stored under `name` (its digest, or its
// keyed name "k<hex>"): "sha256/" + two hex digits + "/" + name.
std::string ObjectKeyOf(std::string_view name);

// True for a key ObjectKeyOf makes (gc's candidates name objects this way).
bool IsObjectKey(std::string_view text);

// An upload recorded and stored before an append's transaction.
struct ObjectUpload {
  std::string key;
  std::string token;
};
using ObjectUploads = std::map<std::string, ObjectUpload>;  // stored name -> its upload

class ObjectTier {
 public:
  ObjectTier(std::unique_ptr<blob::ObjectStore> objects, int64_t threshold_bytes, int64_t grace_ms);

  // Whether a blob of `size` bytes belongs in the bucket.
  bool Holds(int64_t size) const { return size > threshold_bytes_; }
  int64_t grace_ms() const { return grace_ms_; }
  blob::ObjectStore& objects() { return *objects_; }

  // Outside any transaction on `c`: records the upload of `stored` (its own
  // committed transaction) at `now_ms`, then stores it under the key of
  // `name` and reads it back. The object store's error, naming the blob's
  // key, when it fails; the record then protects nothing that a row names,
  // and gc removes it after the grace period.
  Result<ObjectUpload> Upload(PgConnection& c, std::string_view name, std::string_view stored,
                              int64_t now_ms);

  // The stored bytes of object `key`; at most `max_bytes`, re-hashed against
  // `expected_sha256` when it is given. kNotFound for a missing object.
  Result<std::string> Read(std::string_view key, int64_t max_bytes,
                           std::string_view expected_sha256);

  // gc of object `key` (a row naming it was deleted, or its upload was never
  // claimed). kReferenced when a row names it again, kInGrace when an upload
  // recorded after `cutoff_ms` may still name it; otherwise the object is
  // deleted (not with `dry_run`) and kRemoved.
  Result<store::BlobRemoval> Collect(PgConnection& c, std::string_view key, int64_t cutoff_ms,
                                     bool dry_run);

 private:
  const std::unique_ptr<blob::ObjectStore> objects_;
  const int64_t threshold_bytes_;
  const int64_t grace_ms_;
};

// Inside the append's transaction, before the row naming the object is
// inserted: true when the upload's record was still there (now removed, the
// object safe to name until the commit); false when gc took it, in which
// case a tombstone is left for the object and the caller stores the bytes
// in the row instead.
Result<bool> ClaimUpload(PgConnection& c, const ObjectUpload& upload);

// Inside the transaction that deletes a row naming `key`: the object is
// left for gc (ObjectTier::Collect), which deletes it.
Status ForgetObject(PgConnection& c, std::string_view key);

// Objects that no row names but that may exist: unclaimed uploads and the
// objects of deleted rows, by key.
Result<std::vector<std::string>> UnnamedObjects(PgConnection& c);

}  // namespace sessiondb::postgres
