// Encryption at rest: what a store's keys are and how they change
// (docs/encryption.md). A store opens encrypted through StoreOptions::key_file
// (or $SESSIONDB_KEY_FILE); these calls manage the keys themselves.
//
// Example:
//   RETURN_IF_ERROR(sessiondb::NewKeyFile("/home/me/.sessiondb.key"));
//   StoreOptions options;
//   options.key_file = "/home/me/.sessiondb.key";
//   ASSIGN_OR_RETURN(auto store, Store::Open("/home/me/.sessiondb", options));  // encrypted
//   RETURN_IF_ERROR(sessiondb::RotateStoreKey("/home/me/.sessiondb", options, "/home/me/new.key"));
//
// Thread-safety: each call is a transaction of its own on the store's files
// or rows; a process that has the store open keeps working through a rotation.
#pragma once

#include <cstdint>
#include <string>

#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb {

// Whether and how a store is encrypted; nothing secret.
struct EncryptionStatus {
  bool encrypted = false;
  // "hkdf" (a generated key) or "scrypt" (a passphrase).
  std::string kdf;
  // The public name of the data key (not the key); changes only on rekey.
  std::string key_id;
  int64_t created_ms = 0;
  // When the data key was last wrapped (made, or rotated to a new master key).
  int64_t wrapped_ms = 0;
  // Where the wrapped data key is kept: a file beside an embedded store's
  // database, or a row of a PostgreSQL namespace's index_meta.
  std::string envelope;
};

// Writes a new random master key to `path` (mode 0600, never overwriting:
// kAlreadyExists).
Status NewKeyFile(const std::string& path);

// Whether the store at `location` is encrypted (PostgreSQL: the namespace
// of options.namespace_name or the URI's; each has a key of its own); opens
// no database and needs no key. kNotFound when there is no store there.
Result<EncryptionStatus> GetEncryptionStatus(const std::string& location,
                                             const StoreOptions& options = StoreOptions());

// Re-wraps the store's data key under the master key in `new_key_file`
// (options.key_file, or $SESSIONDB_KEY_FILE, holds the current one). No data
// is rewritten; the envelope is replaced atomically, so a rotation killed at
// any point leaves the store readable with the old key or the new one.
// kFailedPrecondition when the current key does not open the store or the
// store is not encrypted.
Status RotateStoreKey(const std::string& location, const StoreOptions& options,
                      const std::string& new_key_file);

// How a store is converted: encrypted, decrypted, or given a new data key.
struct ConvertOptions {
  // The master key the converted store's data key is wrapped under (encrypt,
  // rekey). Empty for a rekey: the current master key.
  std::string new_key_file;
  // Remove the store as it was once the converted one is in place (the old
  // copy is otherwise kept beside it, and its path reported). Embedded only:
  // a PostgreSQL namespace is converted in place and keeps no copy.
  bool remove_old = false;
  // Embedded: receives (blobs done, blobs in all) while blobs are
  // converted, after the database (one pass of SQLite's VACUUM INTO, in
  // bounded memory). PostgreSQL: (rows done, rows in all) after each batch.
  ProgressFn progress;
};

struct ConvertReport {
  // Where the store as it was is kept (empty with remove_old).
  std::string old_copy;
  // Embedded: the converted database's size. PostgreSQL: 0.
  int64_t database_bytes = 0;
  // PostgreSQL: the namespace's rows converted in place. Embedded: 0.
  int64_t rows = 0;
  int64_t blobs = 0;
  // Of those, how many a killed run had converted already (kept, not redone).
  int64_t blobs_resumed = 0;
  // The converted store's data key (empty when it is now plaintext).
  std::string key_id;
};

// The embedded store at `location`, converted in a folder beside it and put
// in its place only once whole: a conversion killed at any point leaves the
// store as it was (or, killed between the two renames that end it, finished
// by the next run), and running it again resumes it: the blobs converted
// already are kept, with the data key they were sealed under. Writers of this
// process and others wait on the store's writer lock meanwhile; stop the
// processes that keep the store open (serve, an MCP server) first, as they
// would go on with the old copy.
//
// EncryptStore: a plaintext store becomes encrypted under the master key in
// options.new_key_file. DecryptStore: an encrypted store (its key from
// `store_options`) becomes plaintext. RekeyStore: an encrypted store gets a
// new data key (everything re-encrypted), wrapped under new_key_file or, when
// empty, the current master key; the old data key then opens nothing of it.
//
// A PostgreSQL namespace (options.namespace_name, or the URI's) is
// converted in place instead, in batches of rows, each batch one
// transaction that also records how far the run got: a run killed at any
// point loses nothing, and running it again (the same verb) goes on from
// there with the same new data key. Meanwhile the namespace refuses to open
// (kFailedPrecondition saying to run the verb again). It does not start
// while any process has the namespace open (kBusy naming their PostgreSQL
// backends): they would go on writing under the old key.
//
// kFailedPrecondition for a store already in the asked form, a missing or
// wrong key, or (PostgreSQL) another conversion of the namespace under way.
Result<ConvertReport> EncryptStore(const std::string& location, const StoreOptions& store_options,
                                   const ConvertOptions& options);
Result<ConvertReport> DecryptStore(const std::string& location, const StoreOptions& store_options,
                                   const ConvertOptions& options);
Result<ConvertReport> RekeyStore(const std::string& location, const StoreOptions& store_options,
                                 const ConvertOptions& options);

}  // namespace sessiondb
