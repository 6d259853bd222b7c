// Where an embedded store keeps its wrapped data key, and how a Store finds
// its data key when it opens (docs/encryption.md). The envelope
// (key_envelope.h) is a file beside the database, sessiondb.db-key: it must
// exist before the first encrypted page does, and it travels with the store
// in a backup (without it the data is lost, by design).
// Thread-safety: functions of the file system; creating an envelope is
// atomic against other processes creating the same store.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/cipher.h"
#include "sessiondb/encryption.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb::store {

// The scope bound into an embedded store's envelope: an envelope moved to a
// PostgreSQL namespace (another scope) does not open there.
inline constexpr std::string_view kEmbeddedKeyScope = "embedded store";

// The envelope file of the embedded store whose database is `db_path`.
std::string EnvelopePathFor(const std::string& db_path);

// An embedded store's folder as its siblings are named from it: absolute,
// with no trailing separator ("st/" and "." would otherwise give
// "st/.converting" and "..converting").
std::filesystem::path StoreFolderOf(const std::string& location);
// Where a conversion of that store builds the converted one
// (sqlite/store_conversion.h), and the mark, beside its database, that says
// it is whole.
std::filesystem::path ConvertingFolderOf(const std::string& location);
inline constexpr std::string_view kConvertedMarkSuffix = "-converted";

// The text of a small file of a store (an envelope, a conversion's plan),
// capped at kMaxEnvelopeBytes while reading; nullopt when there is none.
// `what` names it in errors.
Result<std::optional<std::string>> ReadSmallFile(const std::string& path, const std::string& what);

// The data key of the embedded store at `dir` (database `db_path`), or
// nullopt for a plaintext store opened without a key. With a key and no
// envelope: a new store (`may_create`, and no database pages yet) gets one,
// created exclusively (two processes making the same store agree on one
// data key); an existing plaintext store is kFailedPrecondition. With an
// envelope and no key: kFailedPrecondition saying how to give it.
Result<std::optional<cipher::SecretKey>> LoadEmbeddedDataKey(const std::string& dir,
                                                             const std::string& db_path,
                                                             const StoreOptions& options,
                                                             bool may_create);

// GetEncryptionStatus and RotateStoreKey (sessiondb/encryption.h) for an
// embedded store; store_keys.cc picks them or PostgreSQL's (pg_key_admin.h).
Result<EncryptionStatus> EmbeddedEncryptionStatus(const std::string& location);
Status RotateEmbeddedKey(const std::string& location, const StoreOptions& options,
                         const std::string& new_key_file);

}  // namespace sessiondb::store
