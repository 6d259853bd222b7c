// Authenticated encryption and keyed hashing for encryption at rest
// (docs/encryption.md): AES-256-GCM with a fresh nonce per seal,
// HMAC-SHA256 for keyed names and tokens, HKDF-SHA256 to derive one subkey
// per use from a data key, and scrypt to stretch a passphrase. All through
// OpenSSL's EVP interface, which picks AES-NI where the CPU has it.
//
// Example:
//   cipher::SecretKey key = cipher::SecretKey::Random();
//   std::string sealed = cipher::Seal(key, "hello", "session 42 seq 1");
//   Result<std::string> text = cipher::Open(key, sealed, "session 42 seq 1", "message 1");
//
// Thread-safety: pure functions; a SecretKey is immutable after construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb::cipher {

inline constexpr size_t kKeyBytes = 32;
inline constexpr size_t kNonceBytes = 12;
inline constexpr size_t kTagBytes = 16;
// What Seal adds to the plaintext: the nonce before it, the tag after it.
inline constexpr size_t kSealOverhead = kNonceBytes + kTagBytes;

// 32 bytes of key, wiped from memory when destroyed.
class SecretKey {
 public:
  SecretKey() { bytes_.fill(0); }
  ~SecretKey();
  SecretKey(const SecretKey&) = default;
  SecretKey& operator=(const SecretKey&) = default;

  // A key from the system's CSPRNG.
  static SecretKey Random();
  // The key of exactly kKeyBytes raw bytes; kInvalidArgument otherwise.
  static Result<SecretKey> FromBytes(std::string_view raw);

  const uint8_t* data() const { return bytes_.data(); }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
  }
  // A subkey for one use (`label`, e.g. "sqlite-pages"): HKDF-SHA256, so
  // knowing one subkey tells nothing of another or of this key.
  SecretKey Derive(std::string_view label) const;

 private:
  std::array<uint8_t, kKeyBytes> bytes_;
};

// `n` bytes from the system's CSPRNG.
std::string RandomBytes(size_t n);

// AES-256-GCM of `plaintext` under a fresh nonce (8 random bytes per
// thread and process, then a counter), with `associated`
// (the record's identity) authenticated but not stored: nonce | ciphertext | tag.
std::string Seal(const SecretKey& key, std::string_view plaintext, std::string_view associated);

// Seal without a copy: writes nonce | ciphertext | tag, plaintext.size() +
// kSealOverhead bytes, to `out` (which must not overlap `plaintext`).
void SealTo(const SecretKey& key, std::string_view plaintext, std::string_view associated,
            char* out);

// The plaintext of what Seal made with the same key and `associated`.
// kCorruption naming `what` when it does not open: a wrong key, a changed
// byte, or a ciphertext moved from another record.
Result<std::string> Open(const SecretKey& key, std::string_view sealed, std::string_view associated,
                         std::string_view what);

// Open without a copy: decrypts the `size` bytes at `sealed` (as Seal made
// them) in place, leaving the plaintext at sealed + kNonceBytes, size -
// kSealOverhead bytes long. False (and the bytes unspecified) when they do
// not authenticate or are too short to hold a nonce and tag.
[[nodiscard]] bool OpenSealedInPlace(const SecretKey& key, char* sealed, size_t size,
                                     std::string_view associated);

// In-place forms for fixed-size records (database pages): encrypts `n` bytes
// at `data` and writes the nonce and tag (kSealOverhead bytes) to `trailer`.
void SealInPlace(const SecretKey& key, uint8_t* data, size_t n, std::string_view associated,
                 uint8_t* trailer);
// Decrypts `n` bytes at `data` in place with the nonce and tag in `trailer`;
// false (and `data` unspecified) when they do not authenticate.
[[nodiscard]] bool OpenInPlace(const SecretKey& key, uint8_t* data, size_t n,
                               std::string_view associated, const uint8_t* trailer);

// HMAC-SHA256 of `data` under `key`: 32 raw bytes.
std::string Hmac(const SecretKey& key, std::string_view data);
// The same as 64 lowercase hex digits (a keyed blob name).
std::string HmacHex(const SecretKey& key, std::string_view data);

// Parameters of the memory-hard stretch of a passphrase (scrypt).
struct StretchParams {
  uint64_t log2_n = 15;  // N = 32768: 32 MiB with r = 8, ~0.1 s here
  uint64_t r = 8;
  uint64_t p = 1;
};

// The key a passphrase and salt stretch to; kInvalidArgument for parameters
// beyond what a store may ask (a hostile envelope cannot make us allocate
// more than 1 GiB).
Result<SecretKey> StretchPassphrase(std::string_view passphrase, std::string_view salt,
                                    const StretchParams& params);

// Lowercase hex of `bytes`, and back (nullopt-like kInvalidArgument on a bad digit).
std::string ToHex(std::string_view bytes);
Result<std::string> FromHex(std::string_view hex, std::string_view what);

}  // namespace sessiondb::cipher
