// Secrets never stored (docs/retention.md): the detector of credential
// shapes in text, and the redactor that replaces each with a marker naming
// its kind and a keyed fingerprint, so that the same secret always reads the
// same and a conversation stays readable.
//
// Precision first: every kind is anchored on a fixed prefix or a fixed
// keyword, and checked further where its format allows (GitHub's and npm's
// CRC32, a JWT header that decodes to JSON with "alg", a URL password that is
// not a placeholder). The scan is one pass over the text looking for a few
// trigger bytes with memchr, then a hand-written matcher per hit; it is
// linear in the text and never allocates per byte.
//
// Example:
//   SecretRedactor redactor(key, {});
//   std::string text = "token ghp_...";
//   if (redactor.Redact(&text)) { /* text now reads "token [REDACTED:github-token:1a2b3c4d]" */ }
//
// Thread-safety: FindSecrets is a pure function; a SecretRedactor is
// immutable once made and may be shared between threads.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sessiondb {

// One secret found in a text: its kind's stable name (kSecretKinds) and where
// it is. The span covers the secret only, not the name it was assigned to.
struct SecretFinding {
  std::string_view kind;
  size_t offset = 0;
  size_t length = 0;
};

// Every kind's name, as markers and `sessiondb redact --scan` spell it.
extern const std::vector<std::string_view> kSecretKinds;

// The secrets in `text`, in order, not overlapping. Text that is not UTF-8 is
// scanned as bytes.
std::vector<SecretFinding> FindSecrets(std::string_view text);

// Whether `text` holds a marker of an earlier redaction ("[REDACTED:").
bool HasRedactionMarker(std::string_view text);

class SecretRedactor {
 public:
  // `key`: the store's redaction key (any bytes; the fingerprint is the first
  // 4 bytes of HMAC-SHA256(key, secret)). `allow`: exact secrets, or kind
  // names, that are let through.
  SecretRedactor(std::string key, std::vector<std::string> allow);

  // Replaces every secret in `*text` by "[REDACTED:<kind>:<8 hex>]"; true if
  // anything changed. `found`, when not null, receives the kinds replaced.
  bool Redact(std::string* text, std::vector<std::string_view>* found = nullptr) const;
  // The marker `secret` of `kind` becomes.
  std::string Marker(std::string_view kind, std::string_view secret) const;
  // Whether FindSecrets' finding in `text` is let through by the allow-list.
  bool Allowed(std::string_view kind, std::string_view secret) const;

 private:
  std::string key_;
  std::vector<std::string> allow_;
};

}  // namespace sessiondb
