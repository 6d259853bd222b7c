// Converting an embedded store between plaintext and encrypted, or to a new
// data key (EncryptStore, DecryptStore, RekeyStore in
// include/sessiondb/encryption.h): the database is copied page by page with
// SQLite's VACUUM INTO through the cipher VFS (cipher_vfs.h), each blob is
// read, verified and written again under the new form, and the converted
// folder replaces the store only once it is whole.
//
// A run killed part way is resumed by the next run of the same verb: the
// converted folder keeps its new data key's envelope and every blob already
// converted (each written whole or not at all), and only the database, one
// pass, is copied again (the store may have been written since).
//
//   DIR.converting/    the store being made
//   DIR.converting/sessiondb.db-convert     the verb of the run that made it
//   DIR.converting/sessiondb.db-converted   the mark: whole, to be swapped in
//   DIR.before-VERB-MS the store as it was, after the swap (unless removed)
//
// Thread-safety: one conversion of a store at a time (the writer lock).
#pragma once

#include <optional>
#include <string>

#include "core/cipher.h"
#include "core/key_file.h"
#include "sessiondb/encryption.h"
#include "sessiondb/status.h"

namespace sessiondb::sqlite {

struct ConversionTarget {
  // The master key the converted store's data key is wrapped under; nullopt:
  // plaintext. The data key is new, or the one a killed run of the same
  // verb made (when its envelope opens under this master key).
  std::optional<cipher::MasterKey> master;
};

// Converts the store at `dir` whose data key is `from_key` (nullopt:
// plaintext) to `to`. `verb` ("encrypt", "decrypt", "rekey") names the old
// copy. `busy_timeout_ms` bounds the wait for the writer lock.
Result<ConvertReport> ConvertEmbeddedStore(const std::string& dir,
                                           const std::optional<cipher::SecretKey>& from_key,
                                           const ConversionTarget& to, const std::string& verb,
                                           int busy_timeout_ms, const ConvertOptions& options,
                                           int64_t now_ms);

// When a conversion of the store at `dir` was killed between the two
// renames that end it (`dir` is gone, its converted folder is whole), puts
// the converted folder in place; otherwise does nothing. Store::Open calls
// it first, so that it never makes an empty store where one is half-swapped.
Status FinishInterruptedConversion(const std::string& dir);

}  // namespace sessiondb::sqlite
