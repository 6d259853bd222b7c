// Converting an embedded store between plaintext and encrypted, or to a new
// data key (EncryptStore, DecryptStore, RekeyStore in
// include/sessiondb/encryption.h): the database is copied page by page with
// SQLite's VACUUM INTO through the cipher VFS (cipher_vfs.h), each blob is
// read, verified and written again under the new form, and the converted
// folder replaces the store only once it is whole.
//
//   DIR.converting/    the store being made (removed and redone when a run
//                      finds it without its "done" mark)
//   DIR.converting/sessiondb.db-converted   the mark: whole, to be swapped in
//   DIR.before-VERB-MS the store as it was, after the swap (unless removed)
//
// Thread-safety: one conversion of a store at a time (the writer lock).
#pragma once

#include <optional>
#include <string>

#include "core/cipher.h"
#include "sessiondb/encryption.h"
#include "sessiondb/status.h"

namespace sessiondb::sqlite {

struct ConversionTarget {
  // The new envelope's text and the data key it wraps; nullopt: plaintext.
  std::optional<std::string> envelope;
  std::optional<cipher::SecretKey> data_key;
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
