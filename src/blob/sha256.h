// SHA-256 digests as lowercase hex, the names of blobs.
// Thread-safety: pure functions.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace sessiondb::blob {

// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

// The SHA-256 of `pieces` one after the other, without putting them together
// (a piece may be a line of tens of MiB).
std::string Sha256Hex(std::initializer_list<std::string_view> pieces);

// The SHA-256 of bytes given a piece at a time (a blob streamed from disk or
// a database), so that hashing costs one piece of memory, not the whole.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void Update(std::string_view bytes);
  // The digest of everything given so far, as 64 lowercase hex digits; the
  // stream is spent afterwards.
  std::string FinishHex();

 private:
  ::evp_md_ctx_st* ctx_;
};

// True if `text` is exactly 64 lowercase hex digits (a blob name).
bool IsSha256Hex(std::string_view text);
// kInvalidArgument for a blob name that is not IsSha256Hex, quoting (at most
// 80 bytes of) it.
Status NotADigest(std::string_view name);

}  // namespace sessiondb::blob
