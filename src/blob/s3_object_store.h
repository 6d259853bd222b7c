// An ObjectStore over the S3 protocol (AWS S3, MinIO, Ceph RGW, moto, ...):
// libcurl (loaded on first use, core/libcurl.h) signs each request with AWS
// Signature Version 4 (CURLOPT_AWS_SIGV4) and sends it to a path-style URL,
// ENDPOINT/BUCKET/KEY. No SDK. Every request has a timeout; timeouts, 5xx
// answers and dropped connections are retried with backoff a few times.
// A Put is read back and re-hashed before it counts; a Get is re-hashed
// whenever the caller knows the digest.
//
// Example:
//   S3ObjectStore s3({.endpoint = "http://127.0.0.1:9000", .bucket = "blobs",
//                     .access_key_id = "...", .secret_access_key = "..."});
//   RETURN_IF_ERROR(s3.Put("sha256/ab/ab12...", bytes));
//
// Thread-safety: safe to share; each request uses a curl handle of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "blob/object_store.h"

namespace sessiondb::blob {

struct S3Options {
  std::string endpoint;  // scheme, host and port: "https://s3.eu-west-1.amazonaws.com"
  std::string bucket;
  std::string region = "us-east-1";
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;    // temporary credentials; empty: none
  int64_t timeout_ms = 60'000;  // one request, transfer included
  int64_t connect_timeout_ms = 5'000;
  int attempts = 3;                // tries of one request (timeouts, 5xx, dropped connections)
  int64_t first_backoff_ms = 100;  // doubled after each failed try
};

class S3ObjectStore final : public ObjectStore {
 public:
  explicit S3ObjectStore(S3Options options);

  Status Put(std::string_view key, std::string_view bytes) override;
  Result<std::string> Get(std::string_view key, int64_t max_bytes,
                          std::string_view expected_sha256) override;
  Status Delete(std::string_view key) override;
  Result<bool> Exists(std::string_view key) override;
  std::string Describe() const override;

  // Creates the bucket; Ok when this account already owns it. For setup
  // and tests: the store itself never creates buckets.
  Status CreateBucket();

 private:
  struct Response {
    long status = 0;
    std::string body;
  };
  // One request, retried while the failure is transient. kBusy when every
  // try timed out or got a 5xx, kIo when the endpoint cannot be reached, and
  // kCorruption when the answer is longer than `max_body`.
  Result<Response> Send(const char* method, std::string_view key, std::string_view payload,
                        int64_t max_body);
  // What went wrong in an answer, for messages: "HTTP 403 (AccessDenied)".
  static std::string Describe(const Response& r);

  const S3Options options_;
};

}  // namespace sessiondb::blob
