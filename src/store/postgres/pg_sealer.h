// What an encrypted PostgreSQL namespace stores in place of its content
// (docs/encryption.md, "PostgreSQL"). Without a key every call passes its
// value through, so the SQL of the store is the same either way. With the
// namespace's data key (pg_namespace_key.h), each content value is sealed
// with AES-256-GCM under a subkey derived for columns, with the value's
// identity (its column and the id of its record) as associated data: a
// ciphertext copied to another record, column or namespace does not open.
//
// Text columns hold "sdb1:" and the base64 of nonce | ciphertext | tag, so
// they stay valid text; bytea columns hold the sealed bytes as they are.
// Search terms and blob names become HMACs under subkeys of their own:
// equal terms (and equal blobs) stay equal within the namespace, so keyword
// search and deduplication work, but nothing can be compared across
// namespaces or read back.
//
// Example:
//   PgSealer sealer(data_key);
//   std::string stored = sealer.Text(PgColumn::kEventBody, event_id, body);
//   ASSIGN_OR_RETURN(std::string body, sealer.OpenText(PgColumn::kEventBody, event_id, stored));
//
// Thread-safety: immutable after construction; share it freely.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/cipher.h"
#include "sessiondb/status.h"

namespace sessiondb::postgres {

// The content columns of the schema (pg_schema.cc), each named in the
// associated data of what it holds.
enum class PgColumn {
  kSessionTitle,
  kSessionPreview,
  kSessionMetadata,
  kEventText,
  kEventBody,
  kDraftText,
  kDraftReasoning,
  kSetting,
  kCodeFilePath,
  kCodeOld,
  kCodeNew,
  kCodeFunction,
  kCodeProject,
  kEmbedding,
  kBlob,
  kBlobDigest,
  // A file version's path, project, tool and digest (pg_file_versions.cc),
  // sealed as one JSON object under the version's id. Last, so that no
  // other column's value shifts.
  kFileVersion,
};

// The prefix of a sealed text value.
inline constexpr std::string_view kSealedTextPrefix = "sdb1:";

class PgSealer {
 public:
  // Plaintext: every value is stored as it is.
  PgSealer() = default;
  explicit PgSealer(const cipher::SecretKey& data_key);

  bool encrypted() const { return keys_.has_value(); }
  // The public name of the data key (key_envelope.h's DataKeyId); empty when plaintext.
  const std::string& key_id() const { return key_id_; }

  // The stored form of `plain` in a text column of record `record`.
  std::string Text(PgColumn column, std::string_view record, std::string_view plain) const;
  // The value a stored text holds. kCorruption naming the column and the
  // record when it does not open (a changed byte, a value moved from another
  // record, or plaintext in an encrypted namespace).
  Result<std::string> OpenText(PgColumn column, std::string_view record,
                               std::string_view stored) const;
  // The same for a bytea column: the sealed bytes, without base64.
  std::string Bytes(PgColumn column, std::string_view record, std::string_view plain) const;
  Result<std::string> OpenBytes(PgColumn column, std::string_view record,
                                std::string_view stored) const;

  // The token a normalized search term is indexed and queried as: the term
  // itself when plaintext; else "t" and 24 hex digits of its HMAC, which
  // tsvector and tsquery take as one word.
  std::string Term(std::string_view term) const;
  // The name a blob is stored and referred to under: its SHA-256 when
  // plaintext; else "k" and the hex HMAC of the digest, so equal bytes are
  // stored once per namespace and a digest tells nothing of another's blobs.
  std::string BlobName(std::string_view sha256) const;
  // A stand-in for an identity that must stay comparable inside the
  // namespace but tell nothing outside it (a code write's content hash, a
  // file path's equality token): `text` itself when plaintext; else the hex
  // HMAC-SHA256 of it under a subkey of its own.
  std::string KeyedDigest(std::string_view text) const;

 private:
  struct Keys {
    cipher::SecretKey fields;
    cipher::SecretKey terms;
    cipher::SecretKey blob_names;
    cipher::SecretKey digests;
  };
  std::optional<Keys> keys_;
  std::string key_id_;
};

// The column's name as it appears in errors and associated data.
std::string_view PgColumnName(PgColumn column);

// A code_edits key (file path or function name) as stored: in an encrypted
// namespace, a keyed token that SQL compares and groups by, a space, then the
// name sealed under that token, so the name can be shown again. The token is
// a fixed 33 bytes, so starts_with(column, token || ' ') is equality. The
// file as a whole ('' function) stays '': every write has one such row.
std::string EditKey(const PgSealer& sealer, PgColumn column, std::string_view name);
// The token of an EditKey; what a query compares it with, followed by ' '.
std::string EditToken(const PgSealer& sealer, PgColumn column, std::string_view name);
// The name an EditKey holds. kCorruption when its sealed half does not open.
Result<std::string> OpenEditKey(const PgSealer& sealer, PgColumn column, std::string_view stored);

}  // namespace sessiondb::postgres
