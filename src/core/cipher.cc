#include "core/cipher.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace sessiondb::cipher {
namespace {

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

const auto* U8(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Only a programmer's error (or an exhausted CSPRNG) fails here, never input.
void Check(int ok) {
  if (ok != 1) std::abort();
}

// OpenSSL set up once, without reading the system's openssl.cnf: parsing it
// and the algorithms it names cost a process that opens an encrypted store
// (the hook runs once per tool call) more than all its AES; sessiondb uses
// the default provider's AES-GCM, SHA-256, HMAC, HKDF and scrypt only.
void InitOpenSsl() {
  static const bool done = [] {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                                   OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
                               nullptr) == 1;
  }();
  if (!done) std::abort();
}

// AES-256-GCM fetched from its provider once: an implicit fetch per call
// (EVP_aes_256_gcm() in EVP_EncryptInit_ex) cost more than sealing a page.
const EVP_CIPHER* Gcm() {
  static EVP_CIPHER* const cipher = [] {
    InitOpenSsl();
    return EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  }();
  if (cipher == nullptr) std::abort();
  return cipher;
}

// A thread's contexts with a key already expanded, for the few keys a
// process uses at once (a store's page, blob and vector keys): setting up
// the key schedule per page cost as much as the page's AES. Keyed by the
// key's bytes; the copy is wiped when the thread ends.
class KeyedContexts {
 public:
  ~KeyedContexts() {
    for (Slot& s : slots_) OPENSSL_cleanse(s.key, sizeof s.key);
  }
  // The context for `key` in direction `encrypt`, ready for a new nonce.
  EVP_CIPHER_CTX* For(const SecretKey& key, bool encrypt) {
    for (Slot& s : slots_) {
      if (s.used && CRYPTO_memcmp(s.key, key.data(), kKeyBytes) == 0) {
        return encrypt ? s.enc.get() : s.dec.get();
      }
    }
    Slot& s = slots_[next_++ % slots_.size()];
    if (!s.enc) s.enc.reset(EVP_CIPHER_CTX_new());
    if (!s.dec) s.dec.reset(EVP_CIPHER_CTX_new());
    if (!s.enc || !s.dec) std::abort();  // out of memory
    Check(EVP_EncryptInit_ex(s.enc.get(), Gcm(), nullptr, key.data(), nullptr));
    Check(EVP_DecryptInit_ex(s.dec.get(), Gcm(), nullptr, key.data(), nullptr));
    std::memcpy(s.key, key.data(), kKeyBytes);
    s.used = true;
    return encrypt ? s.enc.get() : s.dec.get();
  }

 private:
  struct Slot {
    bool used = false;
    uint8_t key[kKeyBytes] = {};
    CipherCtx enc;
    CipherCtx dec;
  };
  std::array<Slot, 4> slots_;
  size_t next_ = 0;
};

KeyedContexts& ThreadContexts() {
  thread_local KeyedContexts contexts;
  return contexts;
}

// A fresh nonce without a CSPRNG call per seal: 8 random bytes drawn per
// thread (again after a fork, and every 2^32 seals) and a 4-byte counter.
// Two seals share a nonce only if two threads drew the same 64-bit prefix:
// about T^2 / 2^65 for T threads over the key's life, far below the 2^-32
// that random 96-bit nonces reach after 2^32 seals.
void NextNonce(uint8_t* out) {
  struct State {
    uint8_t prefix[8];
    uint32_t counter = 0;
    pid_t pid = -1;
  };
  thread_local State state;
  const pid_t pid = ::getpid();
  if (state.pid != pid || state.counter == 0xFFFFFFFFu) {
    InitOpenSsl();
    Check(RAND_bytes(state.prefix, sizeof state.prefix));
    state.counter = 0;
    state.pid = pid;
  }
  const uint32_t n = state.counter++;
  std::memcpy(out, state.prefix, 8);
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<uint8_t>(n >> (8 * i));
}

// GCM takes lengths as int: larger inputs go through in pieces.
constexpr size_t kMaxPiece = size_t{1} << 30;

// Runs `n` bytes through the thread's context for `key` in direction
// `encrypt` under `nonce`, after `associated`; the caller finishes it.
EVP_CIPHER_CTX* GcmRun(const SecretKey& key, bool encrypt, const uint8_t* nonce, const uint8_t* in,
                       uint8_t* out, size_t n, std::string_view associated) {
  EVP_CIPHER_CTX* ctx = ThreadContexts().For(key, encrypt);
  Check(EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, nonce, encrypt ? 1 : 0));
  int len = 0;
  if (!associated.empty()) {
    Check(
        EVP_CipherUpdate(ctx, nullptr, &len, U8(associated), static_cast<int>(associated.size())));
  }
  for (size_t done = 0; done < n;) {
    const size_t piece = std::min(n - done, kMaxPiece);
    Check(EVP_CipherUpdate(ctx, out + done, &len, in + done, static_cast<int>(piece)));
    done += piece;
  }
  return ctx;
}

void GcmEncrypt(const SecretKey& key, const uint8_t* nonce, const uint8_t* in, uint8_t* out,
                size_t n, std::string_view associated, uint8_t* tag) {
  EVP_CIPHER_CTX* ctx = GcmRun(key, /*encrypt=*/true, nonce, in, out, n, associated);
  int len = 0;
  Check(EVP_EncryptFinal_ex(ctx, out + n, &len));
  Check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTagBytes, tag));
}

bool GcmDecrypt(const SecretKey& key, const uint8_t* nonce, const uint8_t* in, uint8_t* out,
                size_t n, std::string_view associated, const uint8_t* tag) {
  EVP_CIPHER_CTX* ctx = GcmRun(key, /*encrypt=*/false, nonce, in, out, n, associated);
  int len = 0;
  Check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTagBytes, const_cast<uint8_t*>(tag)));
  return EVP_DecryptFinal_ex(ctx, out + n, &len) == 1;
}

}  // namespace

SecretKey::~SecretKey() { OPENSSL_cleanse(bytes_.data(), bytes_.size()); }

SecretKey SecretKey::Random() {
  InitOpenSsl();
  SecretKey key;
  Check(RAND_bytes(key.bytes_.data(), static_cast<int>(key.bytes_.size())));
  return key;
}

Result<SecretKey> SecretKey::FromBytes(std::string_view raw) {
  if (raw.size() != kKeyBytes) {
    return Err(Status::InvalidArgument("a key is " + std::to_string(kKeyBytes) + " bytes, not " +
                                       std::to_string(raw.size())));
  }
  SecretKey key;
  std::copy(raw.begin(), raw.end(), reinterpret_cast<char*>(key.bytes_.data()));
  return key;
}

SecretKey SecretKey::Derive(std::string_view label) const {
  static EVP_KDF* const hkdf = [] {
    InitOpenSsl();
    return EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  }();
  if (hkdf == nullptr) std::abort();
  std::unique_ptr<EVP_KDF_CTX, decltype(&EVP_KDF_CTX_free)> ctx(EVP_KDF_CTX_new(hkdf),
                                                                EVP_KDF_CTX_free);
  if (!ctx) std::abort();
  char digest[] = "SHA256";
  char salt[] = "sessiondb-v1";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(bytes_.data()),
                                        bytes_.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt, 12),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(label.data()),
                                        label.size()),
      OSSL_PARAM_construct_end()};
  SecretKey out;
  Check(EVP_KDF_derive(ctx.get(), out.bytes_.data(), out.bytes_.size(), params));
  return out;
}

std::string RandomBytes(size_t n) {
  InitOpenSsl();
  std::string out(n, '\0');
  if (n > 0) Check(RAND_bytes(reinterpret_cast<uint8_t*>(out.data()), static_cast<int>(n)));
  return out;
}

void SealTo(const SecretKey& key, std::string_view plaintext, std::string_view associated,
            char* out) {
  auto* o = reinterpret_cast<uint8_t*>(out);
  NextNonce(o);
  GcmEncrypt(key, o, U8(plaintext), o + kNonceBytes, plaintext.size(), associated,
             o + kNonceBytes + plaintext.size());
}

std::string Seal(const SecretKey& key, std::string_view plaintext, std::string_view associated) {
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  SealTo(key, plaintext, associated, out.data());
  return out;
}

Result<std::string> Open(const SecretKey& key, std::string_view sealed, std::string_view associated,
                         std::string_view what) {
  if (sealed.size() < kSealOverhead) {
    return Err(Status::Corruption(std::string(what) + " is encrypted but too short (" +
                                  std::to_string(sealed.size()) + " bytes) to hold its tag"));
  }
  const size_t n = sealed.size() - kSealOverhead;
  std::string out(n, '\0');
  const uint8_t* s = U8(sealed);
  if (!GcmDecrypt(key, s, s + kNonceBytes, reinterpret_cast<uint8_t*>(out.data()), n, associated,
                  s + kNonceBytes + n)) {
    return Err(Status::Corruption(
        std::string(what) +
        " does not decrypt: its bytes were changed, it was moved from another record, or the "
        "key is not the one it was written with"));
  }
  return out;
}

bool OpenSealedInPlace(const SecretKey& key, char* sealed, size_t size,
                       std::string_view associated) {
  if (size < kSealOverhead) return false;
  auto* s = reinterpret_cast<uint8_t*>(sealed);
  const size_t n = size - kSealOverhead;
  return GcmDecrypt(key, s, s + kNonceBytes, s + kNonceBytes, n, associated, s + kNonceBytes + n);
}

void SealInPlace(const SecretKey& key, uint8_t* data, size_t n, std::string_view associated,
                 uint8_t* trailer) {
  NextNonce(trailer);
  GcmEncrypt(key, trailer, data, data, n, associated, trailer + kNonceBytes);
}

bool OpenInPlace(const SecretKey& key, uint8_t* data, size_t n, std::string_view associated,
                 const uint8_t* trailer) {
  return GcmDecrypt(key, trailer, data, data, n, associated, trailer + kNonceBytes);
}

std::string Hmac(const SecretKey& key, std::string_view data) {
  InitOpenSsl();
  std::string out(32, '\0');
  unsigned int len = 32;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(kKeyBytes), U8(data), data.size(),
           reinterpret_cast<uint8_t*>(out.data()), &len) == nullptr) {
    std::abort();
  }
  return out;
}

std::string HmacHex(const SecretKey& key, std::string_view data) { return ToHex(Hmac(key, data)); }

Result<SecretKey> StretchPassphrase(std::string_view passphrase, std::string_view salt,
                                    const StretchParams& params) {
  InitOpenSsl();
  // 128 * r * N bytes of memory: refuse what a hostile envelope could use to
  // exhaust the machine.
  if (params.log2_n < 10 || params.log2_n > 20 || params.r < 1 || params.r > 16 || params.p < 1 ||
      params.p > 4) {
    return Err(Status::InvalidArgument(
        "the passphrase stretch asks for scrypt log2(N)=" + std::to_string(params.log2_n) +
        " r=" + std::to_string(params.r) + " p=" + std::to_string(params.p) +
        "; sessiondb accepts log2(N) 10-20, r 1-16, p 1-4"));
  }
  SecretKey out;
  std::string raw(kKeyBytes, '\0');
  const uint64_t n = uint64_t{1} << params.log2_n;
  const uint64_t max_mem = 128 * params.r * n * params.p + (uint64_t{64} << 20);
  if (EVP_PBE_scrypt(passphrase.data(), passphrase.size(), U8(salt), salt.size(), n, params.r,
                     params.p, max_mem, reinterpret_cast<uint8_t*>(raw.data()), raw.size()) != 1) {
    return Err(Status::Internal("scrypt failed (out of memory?)"));
  }
  Result<SecretKey> key = SecretKey::FromBytes(raw);
  OPENSSL_cleanse(raw.data(), raw.size());
  return key;
}

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

Result<std::string> FromHex(std::string_view hex, std::string_view what) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) {
    return Err(Status::InvalidArgument(std::string(what) + " is not hex (odd length)"));
  }
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]);
    const int lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return Err(Status::InvalidArgument(std::string(what) + " is not hex (a digit at " +
                                         std::to_string(2 * i) + ")"));
    }
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

}  // namespace sessiondb::cipher
