// The master key of encryption at rest (docs/encryption.md), read from the
// file a user names with --key-file or SESSIONDB_KEY_FILE. The file holds
// either a generated key ("sessiondb-key-v1:" and 64 hex digits, written by
// `sessiondb key new`) or a passphrase (any other text; stretched with
// scrypt against the store's salt). Either way it must be a regular file
// that only its owner may read: a key readable by others protects nothing.
//
// Example:
//   ASSIGN_OR_RETURN(cipher::MasterKey master, cipher::ReadMasterKey(path));
//
// Thread-safety: pure functions of the file system.
#pragma once

#include <string>
#include <string_view>

#include "core/cipher.h"
#include "sessiondb/status.h"

namespace sessiondb::cipher {

// The environment variable that names the key file for every face.
inline constexpr std::string_view kKeyFileEnv = "SESSIONDB_KEY_FILE";
// What a generated key file begins with.
inline constexpr std::string_view kKeyFilePrefix = "sessiondb-key-v1:";
// Longer files are refused while reading (a path to the wrong file, a hostile one).
inline constexpr size_t kMaxKeyFileBytes = 4096;
inline constexpr size_t kMinPassphraseBytes = 8;

struct MasterKey {
  // Where it was read from, for messages ("the key in FILE ...").
  std::string source;
  // A generated key: `raw` holds it. Otherwise `passphrase` holds the text.
  bool is_passphrase = false;
  SecretKey raw;
  std::string passphrase;

  MasterKey() = default;
  MasterKey(const MasterKey&) = default;
  MasterKey& operator=(const MasterKey&) = default;
  ~MasterKey();
};

// Reads the key file at `path`. kFailedPrecondition when it is not a regular
// file, is not owned by this user, or may be read or written by group or
// others (the message says which chmod fixes it); kNotFound when missing;
// kInvalidArgument when it is longer than kMaxKeyFileBytes, a generated key
// whose hex is damaged, or a passphrase shorter than kMinPassphraseBytes.
Result<MasterKey> ReadMasterKey(const std::string& path);

// Writes a new generated key to `path`, created 0600 and never overwriting
// (kAlreadyExists when it exists); a missing folder is made 0700. Returns
// the key written.
Result<MasterKey> WriteNewKeyFile(const std::string& path);

}  // namespace sessiondb::cipher
