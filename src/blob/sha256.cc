#include "blob/sha256.h"

#include <openssl/evp.h>

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

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // One-shot EVP_Digest: no context to leak, and OpenSSL picks the fastest
  // implementation (SHA-NI where the CPU has it).
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return Hex(digest, length);
}

std::string Sha256Hex(std::initializer_list<std::string_view> pieces) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  for (std::string_view piece : pieces) EVP_DigestUpdate(ctx, piece.data(), piece.size());
  EVP_DigestFinal_ex(ctx, digest, &length);
  EVP_MD_CTX_free(ctx);
  return Hex(digest, length);
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
