#include "blob/sha256.h"

// The one-shot digests use OpenSSL's SHA256_* functions, deprecated in 3.0
// for EVP but kept: EVP's first use in a process loads the configuration and
// the default provider, about 4 ms of CPU (measured: a process hashing 8 KiB
// takes 3.9-5.4 ms through SHA256_*, 8.6-10.5 ms through EVP_Digest), which
// every short process (the Claude Code hook above all) paid for one digest.
// Both run the same assembly (SHA-NI where the CPU has it): the same
// throughput on large inputs, and 80 ns instead of 340 for 64 bytes.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>

namespace sessiondb::blob {

namespace {

std::string Hex(const unsigned char* digest, unsigned int length) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(size_t{2} * length, '\0');
  for (unsigned int i = 0; i < length; ++i) {
    out[size_t{2} * i] = kHex[digest[i] >> 4];
    out[size_t{2} * i + 1] = kHex[digest[i] & 0x0F];
  }
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) { return Sha256Hex({bytes}); }

std::string Sha256Hex(std::initializer_list<std::string_view> pieces) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  for (std::string_view piece : pieces) SHA256_Update(&ctx, piece.data(), piece.size());
  SHA256_Final(digest, &ctx);
  return Hex(digest, SHA256_DIGEST_LENGTH);
}

Sha256Stream::Sha256Stream() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr);
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(ctx_); }

void Sha256Stream::Update(std::string_view bytes) {
  EVP_DigestUpdate(ctx_, bytes.data(), bytes.size());
}

std::string Sha256Stream::FinishHex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx_, digest, &length);
  return Hex(digest, length);
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status NotADigest(std::string_view name) {
  return Status::InvalidArgument("blob name '" + std::string(name.substr(0, 80)) +
                                 "' is not a SHA-256 (64 lowercase hex digits)");
}

}  // namespace sessiondb::blob
