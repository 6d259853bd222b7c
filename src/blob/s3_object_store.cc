#include "blob/s3_object_store.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "blob/sha256.h"
#include "core/libcurl.h"

namespace sessiondb::blob {
namespace {

// The SHA-256 of no bytes: the payload hash of a request without a body.
constexpr const char* kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// Where curl writes an answer's body; `over` once it passes `cap`.
struct Sink {
  std::string* out;
  int64_t cap;
  bool over = false;
};

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t len = size * n;
  if (static_cast<int64_t>(sink->out->size() + len) > sink->cap) {
    sink->over = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  sink->out->append(data, len);
  return len;
}

bool TransientCurlError(CURLcode code) {
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return true;
    default:
      return false;
  }
}

bool TransientHttpStatus(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

// The <Code> of an S3 error document, or "".
std::string ErrorCode(const std::string& body) {
  const size_t open = body.find("<Code>");
  const size_t close = body.find("</Code>");
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return body.substr(open + 6, std::min<size_t>(close - open - 6, 64));
}

struct CurlHandle {
  const CurlFunctions* curl;
  CURL* handle;
  curl_slist* headers = nullptr;
  ~CurlHandle() {
    if (headers) curl->slist_free_all(headers);
    if (handle) curl->easy_cleanup(handle);
  }
};

}  // namespace

S3ObjectStore::S3ObjectStore(S3Options options) : options_(std::move(options)) {}

std::string S3ObjectStore::Describe() const {
  return "s3://" + options_.bucket + " at " + options_.endpoint;
}

std::string S3ObjectStore::Describe(const Response& r) {
  const std::string code = ErrorCode(r.body);
  return "HTTP " + std::to_string(r.status) + (code.empty() ? "" : " (" + code + ")");
}

Result<S3ObjectStore::Response> S3ObjectStore::Send(const char* method, std::string_view key,
                                                    std::string_view payload, int64_t max_body) {
  ASSIGN_OR_RETURN(const CurlFunctions* curl, LoadCurlFunctions());
  const std::string url = options_.endpoint + "/" + options_.bucket +
                          (key.empty() ? std::string() : "/" + std::string(key));
  const std::string what = std::string(method) + " " + url;
  const bool put = std::string_view(method) == "PUT";
  const std::string payload_sha = put ? Sha256Hex(payload) : kEmptySha256;
  const std::string sigv4 = "aws:amz:" + options_.region + ":s3";
  const std::string userpwd = options_.access_key_id + ":" + options_.secret_access_key;
  std::string last_failure;
  bool timed_out = false;
  int64_t backoff = options_.first_backoff_ms;
  for (int attempt = 1; attempt <= std::max(1, options_.attempts); ++attempt) {
    if (attempt > 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
      backoff *= 2;
    }
    CurlHandle h{curl, curl->easy_init()};
    if (!h.handle) return Err(Status::Internal("libcurl could not make a handle"));
    Response response;
    Sink sink{&response.body, max_body};
    char error[CURL_ERROR_SIZE] = {0};
    // The payload's hash is signed (SigV4) and checked by S3 against what it receives.
    h.headers = curl->slist_append(h.headers, ("x-amz-content-sha256: " + payload_sha).c_str());
    if (!options_.session_token.empty()) {
      h.headers = curl->slist_append(h.headers,
                                     ("x-amz-security-token: " + options_.session_token).c_str());
    }
    h.headers = curl->slist_append(h.headers, "Expect:");
    if (put) h.headers = curl->slist_append(h.headers, "Content-Type: application/octet-stream");
    curl->easy_setopt(h.handle, CURLOPT_URL, url.c_str());
    curl->easy_setopt(h.handle, CURLOPT_CUSTOMREQUEST, method);
    curl->easy_setopt(h.handle, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl->easy_setopt(h.handle, CURLOPT_USERPWD, userpwd.c_str());
    curl->easy_setopt(h.handle, CURLOPT_HTTPHEADER, h.headers);
    curl->easy_setopt(h.handle, CURLOPT_NOSIGNAL, 1L);
    curl->easy_setopt(h.handle, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_ms));
    curl->easy_setopt(h.handle, CURLOPT_CONNECTTIMEOUT_MS,
                      static_cast<long>(options_.connect_timeout_ms));
    curl->easy_setopt(h.handle, CURLOPT_ERRORBUFFER, error);
    curl->easy_setopt(h.handle, CURLOPT_WRITEFUNCTION, &WriteBody);
    curl->easy_setopt(h.handle, CURLOPT_WRITEDATA, &sink);
    if (put) {
      curl->easy_setopt(h.handle, CURLOPT_POSTFIELDSIZE_LARGE,
                        static_cast<curl_off_t>(payload.size()));
      curl->easy_setopt(h.handle, CURLOPT_POSTFIELDS, payload.data());
    } else if (std::string_view(method) == "HEAD") {
      curl->easy_setopt(h.handle, CURLOPT_NOBODY, 1L);
    }
    const CURLcode code = curl->easy_perform(h.handle);
    if (sink.over) {
      return Err(Status::Corruption(what + " answered more than " + std::to_string(max_body) +
                                    " bytes; the object is not what was stored"));
    }
    if (code != CURLE_OK) {
      last_failure = error[0] ? std::string(error) : std::string(curl->easy_strerror(code));
      timed_out = code == CURLE_OPERATION_TIMEDOUT;
      if (TransientCurlError(code)) continue;
      return Err(Status::Io(what + ": " + last_failure));
    }
    curl->easy_getinfo(h.handle, CURLINFO_RESPONSE_CODE, &response.status);
    if (TransientHttpStatus(response.status)) {
      last_failure = Describe(response);
      timed_out = false;
      continue;
    }
    return response;
  }
  const std::string tries = " (after " + std::to_string(std::max(1, options_.attempts)) +
                            " tries; timeout " + std::to_string(options_.timeout_ms) + " ms)";
  if (timed_out || last_failure.starts_with("HTTP 5") || last_failure.starts_with("HTTP 429")) {
    return Err(Status::Busy(what + ": " + last_failure + tries));
  }
  return Err(Status::Io(what + ": " + last_failure + tries));
}

Status S3ObjectStore::Put(std::string_view key, std::string_view bytes) {
  ASSIGN_OR_RETURN(Response r, Send("PUT", key, bytes, int64_t{1} << 20));
  if (r.status != 200) {
    return Status::Io("storing object " + std::string(key) + " in " + Describe() + ": " +
                      Describe(r));
  }
  // Read back and re-hashed: a store that kept other bytes (or none) fails
  // the Put, so nothing is named after an object that is not there.
  Result<std::string> back = Get(key, static_cast<int64_t>(bytes.size()), Sha256Hex(bytes));
  if (!back) {
    return Status(
        back.error().code(),
        "object " + std::string(key) + " did not read back as written: " + back.error().message());
  }
  return Status::Ok();
}

Result<std::string> S3ObjectStore::Get(std::string_view key, int64_t max_bytes,
                                       std::string_view expected_sha256) {
  ASSIGN_OR_RETURN(Response r, Send("GET", key, "", max_bytes));
  if (r.status == 404) {
    return Err(Status::NotFound("object " + std::string(key) + " is not in " + Describe()));
  }
  if (r.status != 200) {
    return Err(Status::Io("reading object " + std::string(key) + " from " + Describe() + ": " +
                          Describe(r)));
  }
  if (!expected_sha256.empty() && Sha256Hex(r.body) != expected_sha256) {
    return Err(Status::Corruption("object " + std::string(key) + " in " + Describe() +
                                  " does not hash to " + std::string(expected_sha256) +
                                  ": its bytes were changed; they are not returned"));
  }
  return std::move(r.body);
}

Status S3ObjectStore::Delete(std::string_view key) {
  ASSIGN_OR_RETURN(Response r, Send("DELETE", key, "", int64_t{1} << 20));
  if (r.status == 204 || r.status == 200 || r.status == 404) return Status::Ok();
  return Status::Io("deleting object " + std::string(key) + " from " + Describe() + ": " +
                    Describe(r));
}

Result<bool> S3ObjectStore::Exists(std::string_view key) {
  ASSIGN_OR_RETURN(Response r, Send("HEAD", key, "", int64_t{1} << 20));
  if (r.status == 200) return true;
  if (r.status == 404) return false;
  return Err(Status::Io("looking for object " + std::string(key) + " in " + Describe() + ": " +
                        Describe(r)));
}

Status S3ObjectStore::CreateBucket() {
  ASSIGN_OR_RETURN(Response r, Send("PUT", "", "", int64_t{1} << 20));
  if (r.status == 200) return Status::Ok();
  if (r.status == 409 && ErrorCode(r.body) == "BucketAlreadyOwnedByYou") return Status::Ok();
  return Status::Io("creating bucket " + options_.bucket + " at " + options_.endpoint + ": " +
                    Describe(r));
}

}  // namespace sessiondb::blob
