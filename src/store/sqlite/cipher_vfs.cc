#include "store/sqlite/cipher_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace sessiondb::sqlite {
namespace {

constexpr char kVfsName[] = "sessiondb-cipher";
constexpr int kSealedBytes = kCipherPageSize - kCipherReserveBytes;  // 4064
constexpr int64_t kWalHeaderBytes = 32;
constexpr int64_t kWalFrameHeaderBytes = 24;
constexpr int64_t kWalFrameBytes = kWalFrameHeaderBytes + kCipherPageSize;
constexpr char kPlaintextHeader[] = "SQLite format 3";  // and its '\0': 16 bytes

thread_local std::string last_failure;

// ---- The registry of page keys, by full path ----

struct KeyEntry {
  cipher::SecretKey key;
  int registrations = 0;
};

struct Registry {
  std::mutex mu;
  std::map<std::string, KeyEntry> keys;  // guarded by mu
};

Registry& Keys() {
  static auto* registry = new Registry;  // never destroyed: VFS calls may outlive statics
  return *registry;
}

std::optional<cipher::SecretKey> KeyFor(const char* full_path) {
  if (full_path == nullptr) return std::nullopt;
  Registry& r = Keys();
  std::lock_guard lock(r.mu);
  auto it = r.keys.find(full_path);
  if (it == r.keys.end()) return std::nullopt;
  return it->second.key;
}

// ---- The file ----

enum class Kind { kDatabase, kWal, kJournal };

struct CipherState {
  Kind kind;
  cipher::SecretKey key;
  std::string path;  // for messages
  std::array<uint8_t, kCipherPageSize> scratch;
  // The page number of the frame header last written, so the page write
  // that follows it (walWriteOneFrame) need not read it back.
  int64_t frame_header_offset = -1;
  uint32_t frame_header_pgno = 0;
};

// SQLite allocates szOsFile bytes: this struct, then the root VFS's file.
struct CipherFile {
  sqlite3_file base;
  sqlite3_file* real;
  CipherState* state;  // null: a file with no key, passed through
};
constexpr size_t kRealOffset = (sizeof(CipherFile) + 15) / 16 * 16;

CipherFile* Cast(sqlite3_file* f) { return reinterpret_cast<CipherFile*>(f); }
sqlite3_file* Real(sqlite3_file* f) { return Cast(f)->real; }
const sqlite3_io_methods* RealMethods(sqlite3_file* f) { return Real(f)->pMethods; }

uint32_t Be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

std::string Associated(uint32_t pgno) {
  std::string ad = "sessiondb-page";
  for (int shift = 24; shift >= 0; shift -= 8) ad += static_cast<char>((pgno >> shift) & 0xFF);
  return ad;
}

bool AllZero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

// Seals the page at `page` (kCipherPageSize bytes, modified) as page `pgno`.
void SealPage(const CipherState& s, uint8_t* page, uint32_t pgno) {
  std::memset(page + kSealedBytes, 0, kCipherReserveBytes);
  cipher::SealInPlace(s.key, page, kSealedBytes, Associated(pgno), page + kSealedBytes);
}

// Opens the sealed page at `page` in place; false when it does not
// authenticate (then `page` is unspecified). The reserve reads as zeros.
bool OpenPage(const CipherState& s, uint8_t* page, uint32_t pgno) {
  if (!cipher::OpenInPlace(s.key, page, kSealedBytes, Associated(pgno), page + kSealedBytes)) {
    return false;
  }
  std::memset(page + kSealedBytes, 0, kCipherReserveBytes);
  return true;
}

int Fail(int rc, std::string detail) {
  last_failure = std::move(detail);
  return rc;
}

int ReadBe32At(sqlite3_file* f, int64_t offset, uint32_t* out) {
  uint8_t b[4];
  const int rc = RealMethods(f)->xRead(Real(f), b, 4, offset);
  if (rc != SQLITE_OK) return rc;
  *out = Be32(b);
  return SQLITE_OK;
}

// Reads one whole page at `offset` into `page`. SQLITE_OK with zeros when the
// file ends before it (a short read: SQLITE_IOERR_SHORT_READ in *short_read).
int ReadRawPage(sqlite3_file* f, uint8_t* page, int64_t offset, bool* short_read) {
  const int rc = RealMethods(f)->xRead(Real(f), page, kCipherPageSize, offset);
  if (rc == SQLITE_IOERR_SHORT_READ) {
    // Never hand out what part of a page there is: it cannot be opened.
    std::memset(page, 0, kCipherPageSize);
    *short_read = true;
    return SQLITE_OK;
  }
  return rc;
}

// ---- The database file: page i at (i-1)*4096 ----

int DatabaseRead(sqlite3_file* f, void* out, int amount, int64_t offset) {
  CipherState& s = *Cast(f)->state;
  auto* dst = static_cast<uint8_t*>(out);
  const int64_t end = offset + amount;
  bool short_read = false;
  for (int64_t at = offset / kCipherPageSize * kCipherPageSize; at < end; at += kCipherPageSize) {
    const bool whole = at >= offset && at + kCipherPageSize <= end;
    uint8_t* page = whole ? dst + (at - offset) : s.scratch.data();
    bool past_end = false;
    const int rc = ReadRawPage(f, page, at, &past_end);
    if (rc != SQLITE_OK) return rc;
    short_read = short_read || past_end;
    const auto pgno = static_cast<uint32_t>(at / kCipherPageSize + 1);
    // Past the end of the file SQLite gets zeros, as from the default VFS. A
    // page of zeros inside it is not let through as one: SQLite never writes
    // one (its pages are sealed), and a zeroed last overflow page would read
    // as a row's content.
    if (!past_end) {
      if (pgno == 1 && std::memcmp(page, kPlaintextHeader, sizeof(kPlaintextHeader)) == 0) {
        return Fail(SQLITE_IOERR_DATA, s.path +
                                           " is a plaintext SQLite database, not one encrypted "
                                           "with this key; encrypt it first (sessiondb encrypt)");
      }
      if (!OpenPage(s, page, pgno)) {
        return Fail(SQLITE_IOERR_DATA, "page " + std::to_string(pgno) + " of " + s.path +
                                           " does not decrypt (changed on disk, or the key is "
                                           "wrong)");
      }
    }
    if (!whole) {
      const int64_t from = std::max(at, offset);
      const int64_t to = std::min(at + kCipherPageSize, end);
      std::memcpy(dst + (from - offset), page + (from - at), static_cast<size_t>(to - from));
    }
  }
  return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

int DatabaseWrite(sqlite3_file* f, const void* in, int amount, int64_t offset) {
  CipherState& s = *Cast(f)->state;
  if (offset % kCipherPageSize != 0 || amount % kCipherPageSize != 0) {
    return Fail(SQLITE_IOERR_WRITE, "an encrypted database has pages of " +
                                        std::to_string(kCipherPageSize) + " bytes; SQLite wrote " +
                                        std::to_string(amount) + " bytes at offset " +
                                        std::to_string(offset) + " of " + s.path);
  }
  const auto* src = static_cast<const uint8_t*>(in);
  for (int done = 0; done < amount; done += kCipherPageSize) {
    const int64_t at = offset + done;
    std::memcpy(s.scratch.data(), src + done, kCipherPageSize);  // never SQLite's buffer
    SealPage(s, s.scratch.data(), static_cast<uint32_t>(at / kCipherPageSize + 1));
    const int rc = RealMethods(f)->xWrite(Real(f), s.scratch.data(), kCipherPageSize, at);
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

// ---- The WAL: a 32-byte header, then frames of a 24-byte header and a page ----

// Where `offset` falls in its frame (negative: in the WAL header).
int64_t InFrame(int64_t offset) {
  return offset < kWalHeaderBytes ? -1 : (offset - kWalHeaderBytes) % kWalFrameBytes;
}
int64_t FrameIndex(int64_t offset) { return (offset - kWalHeaderBytes) / kWalFrameBytes; }

int WalRead(sqlite3_file* f, void* out, int amount, int64_t offset) {
  CipherState& s = *Cast(f)->state;
  auto* dst = static_cast<uint8_t*>(out);
  const int64_t in_frame = InFrame(offset);
  // The WAL header, or a frame's header: plaintext.
  if (offset + amount <= kWalHeaderBytes ||
      (in_frame >= 0 && in_frame + amount <= kWalFrameHeaderBytes)) {
    return RealMethods(f)->xRead(Real(f), out, amount, offset);
  }
  const std::string frame_name =
      "frame " + std::to_string(FrameIndex(offset) + 1) + " of " + s.path + "-wal";
  // A page alone (walReadFrame, a checkpoint): its number is in the frame's header.
  if (in_frame == kWalFrameHeaderBytes && amount == kCipherPageSize) {
    uint32_t pgno = 0;
    int rc = ReadBe32At(f, offset - kWalFrameHeaderBytes, &pgno);
    if (rc == SQLITE_IOERR_SHORT_READ) {
      std::memset(dst, 0, kCipherPageSize);
      return rc;
    }
    if (rc != SQLITE_OK) return rc;
    bool short_read = false;
    rc = ReadRawPage(f, dst, offset, &short_read);
    if (rc != SQLITE_OK) return rc;
    if (short_read) return SQLITE_IOERR_SHORT_READ;
    if (!OpenPage(s, dst, pgno)) {
      return Fail(SQLITE_IOERR_DATA, "page " + std::to_string(pgno) + " in " + frame_name +
                                         " does not decrypt (changed on disk, or the key is "
                                         "wrong)");
    }
    return SQLITE_OK;
  }
  // A whole frame (walIndexRecover, walRewriteChecksums): the page part opened.
  if (in_frame == 0 && amount == kWalFrameBytes) {
    const int rc = RealMethods(f)->xRead(Real(f), dst, amount, offset);
    if (rc != SQLITE_OK) return rc;  // a short read is zero-filled: its checksum fails
    uint8_t* page = dst + kWalFrameHeaderBytes;
    if (!OpenPage(s, page, Be32(dst))) {
      // A frame whose page does not open is handed to recovery as SQLite
      // sees a torn frame, with a checksum that cannot match: the log ends
      // before it, as it would for a frame a crash left half-written. Its
      // page is never handed out.
      std::memset(page, 0, kCipherPageSize);
      for (int i = 16; i < 24; ++i) dst[i] ^= 0xFF;
    }
    return SQLITE_OK;
  }
  return Fail(SQLITE_IOERR_READ,
              "the encrypting VFS reads whole pages of a WAL; SQLite asked "
              "for " +
                  std::to_string(amount) + " bytes at offset " + std::to_string(offset) + " of " +
                  s.path + "-wal");
}

int WalWrite(sqlite3_file* f, const void* in, int amount, int64_t offset) {
  CipherState& s = *Cast(f)->state;
  const auto* src = static_cast<const uint8_t*>(in);
  const int64_t in_frame = InFrame(offset);
  if (offset + amount <= kWalHeaderBytes ||
      (in_frame >= 0 && in_frame + amount <= kWalFrameHeaderBytes)) {
    if (in_frame == 0 && amount == kWalFrameHeaderBytes) {
      s.frame_header_offset = offset;
      s.frame_header_pgno = Be32(src);
    }
    return RealMethods(f)->xWrite(Real(f), in, amount, offset);
  }
  // SQLite writes a frame's header, then its page (walWriteOneFrame), or
  // rewrites a page in place in an uncommitted frame; never a part of a page:
  // it would split one only at a sync point when the device lacks
  // SQLITE_IOCAP_POWERSAFE_OVERWRITE, which this VFS reports for a WAL.
  if (in_frame == kWalFrameHeaderBytes && amount == kCipherPageSize) {
    uint32_t pgno = s.frame_header_pgno;
    if (s.frame_header_offset != offset - kWalFrameHeaderBytes) {
      const int rc = ReadBe32At(f, offset - kWalFrameHeaderBytes, &pgno);
      if (rc != SQLITE_OK) return rc;
    }
    std::memcpy(s.scratch.data(), src, kCipherPageSize);
    SealPage(s, s.scratch.data(), pgno);
    return RealMethods(f)->xWrite(Real(f), s.scratch.data(), kCipherPageSize, offset);
  }
  return Fail(SQLITE_IOERR_WRITE, "the encrypting VFS writes whole pages of a WAL; SQLite wrote " +
                                      std::to_string(amount) + " bytes at offset " +
                                      std::to_string(offset) + " of " + s.path + "-wal");
}

// ---- The rollback journal: a header per sector, then records of a 4-byte
// page number, the page, and a 4-byte checksum. A record's page starts 4 bytes
// past a multiple of 8 (headers are sector-aligned, records 4104 bytes long);
// nothing else SQLite puts there is a page long. ----

bool IsJournalPage(int amount, int64_t offset) {
  return amount == kCipherPageSize && offset >= 4 && offset % 8 == 4;
}

int JournalRead(sqlite3_file* f, void* out, int amount, int64_t offset) {
  if (!IsJournalPage(amount, offset)) return RealMethods(f)->xRead(Real(f), out, amount, offset);
  CipherState& s = *Cast(f)->state;
  auto* page = static_cast<uint8_t*>(out);
  uint32_t pgno = 0;
  int rc = ReadBe32At(f, offset - 4, &pgno);
  if (rc != SQLITE_OK) return rc;
  bool short_read = false;
  rc = ReadRawPage(f, page, offset, &short_read);
  if (rc != SQLITE_OK) return rc;
  if (short_read) return SQLITE_IOERR_SHORT_READ;
  if (AllZero(page, kCipherPageSize)) return SQLITE_OK;
  if (!OpenPage(s, page, pgno)) {
    return Fail(SQLITE_IOERR_DATA, "the record of page " + std::to_string(pgno) + " in " + s.path +
                                       "-journal does not decrypt (changed on disk, "
                                       "or the key is wrong)");
  }
  return SQLITE_OK;
}

int JournalWrite(sqlite3_file* f, const void* in, int amount, int64_t offset) {
  if (!IsJournalPage(amount, offset)) return RealMethods(f)->xWrite(Real(f), in, amount, offset);
  CipherState& s = *Cast(f)->state;
  uint32_t pgno = 0;  // written just before the page (pager_write)
  const int rc = ReadBe32At(f, offset - 4, &pgno);
  if (rc != SQLITE_OK) return rc;
  std::memcpy(s.scratch.data(), in, kCipherPageSize);
  SealPage(s, s.scratch.data(), pgno);
  return RealMethods(f)->xWrite(Real(f), s.scratch.data(), kCipherPageSize, offset);
}

// ---- io methods ----

int CipherClose(sqlite3_file* f) {
  const int rc = RealMethods(f)->xClose(Real(f));
  delete Cast(f)->state;
  Cast(f)->state = nullptr;
  return rc;
}

int CipherRead(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  const CipherState* s = Cast(f)->state;
  if (s == nullptr) return RealMethods(f)->xRead(Real(f), out, amount, offset);
  switch (s->kind) {
    case Kind::kDatabase:
      return DatabaseRead(f, out, amount, offset);
    case Kind::kWal:
      return WalRead(f, out, amount, offset);
    case Kind::kJournal:
      return JournalRead(f, out, amount, offset);
  }
  return SQLITE_IOERR_READ;
}

int CipherWrite(sqlite3_file* f, const void* in, int amount, sqlite3_int64 offset) {
  const CipherState* s = Cast(f)->state;
  if (s == nullptr) return RealMethods(f)->xWrite(Real(f), in, amount, offset);
  switch (s->kind) {
    case Kind::kDatabase:
      return DatabaseWrite(f, in, amount, offset);
    case Kind::kWal:
      return WalWrite(f, in, amount, offset);
    case Kind::kJournal:
      return JournalWrite(f, in, amount, offset);
  }
  return SQLITE_IOERR_WRITE;
}

int CipherTruncate(sqlite3_file* f, sqlite3_int64 size) {
  return RealMethods(f)->xTruncate(Real(f), size);
}
int CipherSync(sqlite3_file* f, int flags) { return RealMethods(f)->xSync(Real(f), flags); }
int CipherFileSize(sqlite3_file* f, sqlite3_int64* size) {
  return RealMethods(f)->xFileSize(Real(f), size);
}
int CipherLock(sqlite3_file* f, int level) { return RealMethods(f)->xLock(Real(f), level); }
int CipherUnlock(sqlite3_file* f, int level) { return RealMethods(f)->xUnlock(Real(f), level); }
int CipherCheckReservedLock(sqlite3_file* f, int* out) {
  return RealMethods(f)->xCheckReservedLock(Real(f), out);
}
int CipherFileControl(sqlite3_file* f, int op, void* arg) {
  return RealMethods(f)->xFileControl(Real(f), op, arg);
}
int CipherSectorSize(sqlite3_file* f) { return RealMethods(f)->xSectorSize(Real(f)); }
int CipherDeviceCharacteristics(sqlite3_file* f) {
  int flags = RealMethods(f)->xDeviceCharacteristics(Real(f));
  // A WAL page is sealed whole, so SQLite must never split one at a sync
  // point (walWriteToLog). It does so only to pad a commit to a sector
  // boundary, when the database file (sqlite3WalOpen asks it, not the WAL)
  // lacks this flag, as with the URI parameter psow=0. The default unix VFS
  // sets it; a keyed file always has it.
  if (Cast(f)->state != nullptr) flags |= SQLITE_IOCAP_POWERSAFE_OVERWRITE;
  return flags;
}
int CipherShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  if (RealMethods(f)->iVersion < 2) return SQLITE_IOERR_SHMMAP;
  return RealMethods(f)->xShmMap(Real(f), region, size, extend, out);
}
int CipherShmLock(sqlite3_file* f, int offset, int n, int flags) {
  if (RealMethods(f)->iVersion < 2) return SQLITE_IOERR_SHMLOCK;
  return RealMethods(f)->xShmLock(Real(f), offset, n, flags);
}
void CipherShmBarrier(sqlite3_file* f) {
  if (RealMethods(f)->iVersion >= 2) RealMethods(f)->xShmBarrier(Real(f));
}
int CipherShmUnmap(sqlite3_file* f, int delete_flag) {
  if (RealMethods(f)->iVersion < 2) return SQLITE_OK;
  return RealMethods(f)->xShmUnmap(Real(f), delete_flag);
}
// A memory map would show SQLite the ciphertext: a keyed file offers none,
// so SQLite reads through xRead even with PRAGMA mmap_size set.
int CipherFetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  *out = nullptr;
  if (Cast(f)->state != nullptr || RealMethods(f)->iVersion < 3) return SQLITE_OK;
  return RealMethods(f)->xFetch(Real(f), offset, amount, out);
}
int CipherUnfetch(sqlite3_file* f, sqlite3_int64 offset, void* page) {
  if (Cast(f)->state != nullptr || RealMethods(f)->iVersion < 3) return SQLITE_OK;
  return RealMethods(f)->xUnfetch(Real(f), offset, page);
}

const sqlite3_io_methods kIoMethods = {
    3,
    CipherClose,
    CipherRead,
    CipherWrite,
    CipherTruncate,
    CipherSync,
    CipherFileSize,
    CipherLock,
    CipherUnlock,
    CipherCheckReservedLock,
    CipherFileControl,
    CipherSectorSize,
    CipherDeviceCharacteristics,
    CipherShmMap,
    CipherShmLock,
    CipherShmBarrier,
    CipherShmUnmap,
    CipherFetch,
    CipherUnfetch,
};

// ---- The VFS ----

sqlite3_vfs* Root(sqlite3_vfs* vfs) { return static_cast<sqlite3_vfs*>(vfs->pAppData); }

constexpr int kTempFiles = SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_SUBJOURNAL |
                           SQLITE_OPEN_TRANSIENT_DB;

int CipherOpen(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
               int* out_flags) {
  auto* f = Cast(file);
  f->base.pMethods = nullptr;
  f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kRealOffset);
  f->state = nullptr;
  sqlite3_vfs* root = Root(vfs);

  std::optional<cipher::SecretKey> key;
  Kind kind = Kind::kDatabase;
  std::string db_path;
  if (flags & SQLITE_OPEN_MAIN_DB) {
    key = KeyFor(name);
    if (key) db_path = name;
  } else if (flags & (SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) {
    kind = (flags & SQLITE_OPEN_WAL) ? Kind::kWal : Kind::kJournal;
    const char* db = name != nullptr ? sqlite3_filename_database(name) : nullptr;
    key = KeyFor(db);
    if (key) db_path = db;
  } else if (flags & kTempFiles) {
    // Only keyed connections open files through this VFS, and their
    // temporary files would hold plaintext pages.
    return Fail(SQLITE_CANTOPEN,
                "an encrypted store keeps no temporary files; its connections need PRAGMA "
                "temp_store = MEMORY");
  }

  const int rc = root->xOpen(root, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK) {
    if (f->real->pMethods != nullptr) f->real->pMethods->xClose(f->real);
    return rc;
  }
  f->base.pMethods = &kIoMethods;
  if (key) f->state = new CipherState{kind, *key, std::move(db_path), {}};
  return SQLITE_OK;
}

int CipherDelete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  return Root(vfs)->xDelete(Root(vfs), name, sync_dir);
}
int CipherAccess(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  return Root(vfs)->xAccess(Root(vfs), name, flags, out);
}
int CipherFullPathname(sqlite3_vfs* vfs, const char* name, int n, char* out) {
  return Root(vfs)->xFullPathname(Root(vfs), name, n, out);
}
void* CipherDlOpen(sqlite3_vfs* vfs, const char* name) {
  return Root(vfs)->xDlOpen(Root(vfs), name);
}
void CipherDlError(sqlite3_vfs* vfs, int n, char* out) { Root(vfs)->xDlError(Root(vfs), n, out); }
void (*CipherDlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  return Root(vfs)->xDlSym(Root(vfs), handle, symbol);
}
void CipherDlClose(sqlite3_vfs* vfs, void* handle) { Root(vfs)->xDlClose(Root(vfs), handle); }
int CipherRandomness(sqlite3_vfs* vfs, int n, char* out) {
  return Root(vfs)->xRandomness(Root(vfs), n, out);
}
int CipherSleep(sqlite3_vfs* vfs, int micros) { return Root(vfs)->xSleep(Root(vfs), micros); }
int CipherCurrentTime(sqlite3_vfs* vfs, double* out) {
  return Root(vfs)->xCurrentTime(Root(vfs), out);
}
int CipherGetLastError(sqlite3_vfs* vfs, int n, char* out) {
  return Root(vfs)->xGetLastError(Root(vfs), n, out);
}
int CipherCurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  return Root(vfs)->xCurrentTimeInt64(Root(vfs), out);
}

// Registers the VFS once (not as the default); null if SQLite has no default VFS.
sqlite3_vfs* CipherVfs() {
  static sqlite3_vfs* registered = []() -> sqlite3_vfs* {
    sqlite3_initialize();
    sqlite3_vfs* root = sqlite3_vfs_find(nullptr);
    if (root == nullptr) return nullptr;
    auto* vfs = new sqlite3_vfs{};
    vfs->iVersion = 2;  // no system-call overrides
    vfs->szOsFile = static_cast<int>(kRealOffset) + root->szOsFile;
    vfs->mxPathname = root->mxPathname;
    vfs->zName = kVfsName;
    vfs->pAppData = root;
    vfs->xOpen = CipherOpen;
    vfs->xDelete = CipherDelete;
    vfs->xAccess = CipherAccess;
    vfs->xFullPathname = CipherFullPathname;
    vfs->xDlOpen = CipherDlOpen;
    vfs->xDlError = CipherDlError;
    vfs->xDlSym = CipherDlSym;
    vfs->xDlClose = CipherDlClose;
    vfs->xRandomness = CipherRandomness;
    vfs->xSleep = CipherSleep;
    vfs->xCurrentTime = CipherCurrentTime;
    vfs->xGetLastError = CipherGetLastError;
    vfs->xCurrentTimeInt64 = root->iVersion >= 2 ? CipherCurrentTimeInt64 : nullptr;
    if (sqlite3_vfs_register(vfs, /*makeDflt=*/0) != SQLITE_OK) return nullptr;
    return vfs;
  }();
  return registered;
}

// `path` as SQLite's default VFS spells it when it opens it; nullopt if it cannot.
std::optional<std::string> FullPath(const std::string& path) {
  sqlite3_initialize();
  sqlite3_vfs* root = sqlite3_vfs_find(nullptr);
  if (root == nullptr) return std::nullopt;
  std::vector<char> out(static_cast<size_t>(root->mxPathname) + 1, '\0');
  const int rc = root->xFullPathname(root, path.c_str(), static_cast<int>(out.size()), out.data());
  if (rc != SQLITE_OK && rc != SQLITE_OK_SYMLINK) return std::nullopt;
  return std::string(out.data());
}

}  // namespace

Result<std::unique_ptr<PageKeyRegistration>> PageKeyRegistration::Register(
    const std::string& db_path, const cipher::SecretKey& key) {
  if (CipherVfs() == nullptr) {
    return Err(Status::Internal("cannot register SQLite's encrypting VFS (no default VFS)"));
  }
  std::optional<std::string> full = FullPath(db_path);
  if (!full) return Err(Status::InvalidArgument("SQLite cannot make a full path of " + db_path));
  Registry& r = Keys();
  std::lock_guard lock(r.mu);
  auto [it, inserted] = r.keys.try_emplace(*full);
  if (!inserted && it->second.key.view() != key.view()) {
    return Err(
        Status::FailedPrecondition(db_path + " is already open in this process with another key"));
  }
  if (inserted) it->second.key = key;
  ++it->second.registrations;
  return std::unique_ptr<PageKeyRegistration>(new PageKeyRegistration(*full));
}

PageKeyRegistration::~PageKeyRegistration() {
  Registry& r = Keys();
  std::lock_guard lock(r.mu);
  auto it = r.keys.find(full_path_);
  if (it != r.keys.end() && --it->second.registrations == 0) r.keys.erase(it);
}

const char* VfsFor(const std::string& db_path) {
  {
    Registry& r = Keys();
    std::lock_guard lock(r.mu);
    if (r.keys.empty()) return nullptr;
  }
  std::optional<std::string> full = FullPath(db_path);
  if (!full || !KeyFor(full->c_str())) return nullptr;
  return CipherVfs() != nullptr ? kVfsName : nullptr;
}

bool IsPlaintextDatabase(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof(kPlaintextHeader)] = {};
  if (!in.read(head, sizeof(head))) return false;
  return std::memcmp(head, kPlaintextHeader, sizeof(head)) == 0;
}

std::string LastCipherFailure() { return last_failure; }

}  // namespace sessiondb::sqlite
