// A store's data key, wrapped under its master key (docs/encryption.md).
// Every encrypted store (and, on PostgreSQL, every encrypted namespace) has
// one random data key; everything it writes is sealed under keys derived
// from it. The data key is never written unwrapped: its envelope holds it
// sealed (AES-256-GCM) under a wrapping key made from the master key (a
// generated key through HKDF, or a passphrase through scrypt with the
// envelope's salt), bound to the store's scope so an envelope copied to
// another store does not open there.
//
// The envelope is JSON with no secret in the clear:
//   {"format":"sessiondb-key-envelope","version":1,"kdf":"hkdf"|"scrypt",
//    "scrypt":{"log2_n":15,"r":8,"p":1},"salt":HEX,"wrapped_key":HEX,
//    "key_id":HEX(8 bytes),"created_ms":N,"wrapped_ms":N}
// key_id names the data key (an HMAC of it, not the key) so that a rotation
// can be checked to keep the same data key, and a rekey to change it.
//
// Rotation re-wraps the same data key under a new master key (no data is
// rewritten); a store's envelope file is replaced atomically, so a rotation
// killed at any point leaves the old envelope or the new one, each whole.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/cipher.h"
#include "core/key_file.h"
#include "sessiondb/status.h"

namespace sessiondb::store {

// Envelopes larger than this are refused while reading.
inline constexpr size_t kMaxEnvelopeBytes = size_t{64} * 1024;

// What an envelope says about itself, without opening it.
struct EnvelopeInfo {
  std::string kdf;     // "hkdf" or "scrypt"
  std::string key_id;  // hex
  int64_t created_ms = 0;
  int64_t wrapped_ms = 0;
};

struct NewEnvelope {
  std::string text;
  cipher::SecretKey data_key;
};

// A new random data key and its envelope under `master`, for `scope` (the
// store's or namespace's identity bound into the wrapping).
NewEnvelope MakeKeyEnvelope(const cipher::MasterKey& master, std::string_view scope,
                            int64_t now_ms);

// The data key `text` wraps. kInvalidArgument for an envelope that is not
// one (naming `where`); kFailedPrecondition ("the key in FILE does not open
// WHERE") when `master` is not the key it was wrapped with, or the envelope
// belongs to another scope.
Result<cipher::SecretKey> OpenKeyEnvelope(std::string_view text, const cipher::MasterKey& master,
                                          std::string_view scope, std::string_view where);

// The same data key wrapped under `new_master` (a fresh salt), keeping
// created_ms; kFailedPrecondition as OpenKeyEnvelope when `old_master` does
// not open it.
Result<std::string> RewrapKeyEnvelope(std::string_view text, const cipher::MasterKey& old_master,
                                      const cipher::MasterKey& new_master, std::string_view scope,
                                      std::string_view where, int64_t now_ms);

// An envelope for `data_key` (a rekey's new key) under `master`.
std::string WrapDataKey(const cipher::SecretKey& data_key, const cipher::MasterKey& master,
                        std::string_view scope, int64_t created_ms, int64_t now_ms);

// What the envelope says about itself; kInvalidArgument when it is not one.
Result<EnvelopeInfo> DescribeKeyEnvelope(std::string_view text, std::string_view where);

// The public name of a data key: hex of the first 8 bytes of its HMAC.
std::string DataKeyId(const cipher::SecretKey& data_key);

}  // namespace sessiondb::store
