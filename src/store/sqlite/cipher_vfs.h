// An encrypting SQLite VFS for the embedded store (issue 35): with a page key
// registered for a database path, every page SQLite writes to that database's
// file, its WAL and its rollback journal is sealed with AES-256-GCM
// (core/cipher.h), so no byte of a page is stored in plaintext. A shim over
// the default VFS named "sessiondb-cipher"; a file with no key passes through.
//
// On disk (docs/encryption.md):
//   database file: pages of 4096 bytes; bytes [0, 4064) of each are the
//     ciphertext, [4064, 4076) the nonce, [4076, 4092) the GCM tag, the last
//     4 zero. SQLite leaves those 32 bytes free (the page's reserve,
//     kCipherReserveBytes), so the b-tree's layout is unchanged. Associated
//     data: "sessiondb-page" and the page number, so a page copied over
//     another does not open.
//   -wal: SQLite's 32-byte header and each frame's 24-byte header stay
//     plaintext (page number, commit size, salts, and SQLite's checksums,
//     which it computes over the plaintext page); the frame's 4096 page bytes
//     are sealed as above with the frame's page number.
//   -journal: header plaintext; each page record's 4096 bytes sealed with the
//     record's page number (its checksum, over 1 plaintext byte in 200, stays).
//   -shm: the WAL index (page numbers, frame numbers, salts): not encrypted.
//   Temporary files (statement journals, temp tables, sorter spills): none;
//     keyed connections run with PRAGMA temp_store = MEMORY and the VFS
//     refuses to create one.
// File sizes, the page count and which pages each commit changed stay visible.
//
// Example:
//   ASSIGN_OR_RETURN(auto registration, sqlite::PageKeyRegistration::Register(path, page_key));
//   ASSIGN_OR_RETURN(auto db, sqlite::Database::Open(path, 5000));  // goes through the VFS
//
// Thread-safety: all functions are thread-safe. A connection copies the key
// when it opens a file, so ending a registration does not affect open ones.
#pragma once

#include <memory>
#include <string>

#include "core/cipher.h"
#include "sessiondb/status.h"

namespace sessiondb::sqlite {

// Bytes SQLite leaves free at the end of every page of an encrypted database:
// nonce 12 + tag 16 + 4 spare.
inline constexpr int kCipherReserveBytes = 32;
static_assert(kCipherReserveBytes >= static_cast<int>(cipher::kSealOverhead));
// The only page size an encrypted database may have.
inline constexpr int kCipherPageSize = 4096;

// While alive, every connection opened on `db_path` (by Database::Open and the
// WAL checkpointer) goes through the cipher VFS with `key`, the page key (the
// caller derives it). Registrations of one path with the same key nest.
class PageKeyRegistration {
 public:
  // kFailedPrecondition when `db_path` is already registered in this process
  // with another key ("already open in this process with another key");
  // kInvalidArgument when SQLite cannot make a full path of it.
  static Result<std::unique_ptr<PageKeyRegistration>> Register(const std::string& db_path,
                                                               const cipher::SecretKey& key);
  ~PageKeyRegistration();
  PageKeyRegistration(const PageKeyRegistration&) = delete;
  PageKeyRegistration& operator=(const PageKeyRegistration&) = delete;

 private:
  explicit PageKeyRegistration(std::string full_path) : full_path_(std::move(full_path)) {}
  std::string full_path_;  // as SQLite's default VFS spells it (xFullPathname)
};

// The VFS name to pass to sqlite3_open_v2 for `db_path`: the cipher VFS's
// when a key is registered for it, else nullptr (SQLite's default).
const char* VfsFor(const std::string& db_path);

// True when the file at `path` exists and begins with SQLite's plaintext
// header "SQLite format 3\0" (an encrypted database's first bytes are
// ciphertext).
bool IsPlaintextDatabase(const std::string& path);

// What the cipher VFS last refused on this thread, e.g. "page 7 of
// /x/sessiondb.db does not decrypt (changed on disk, or the key is wrong)";
// empty when nothing. StatusFromSqlite reads it for SQLITE_IOERR_DATA.
std::string LastCipherFailure();

}  // namespace sessiondb::sqlite
