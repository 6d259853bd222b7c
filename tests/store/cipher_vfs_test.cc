// The encrypting SQLite VFS (src/store/sqlite/cipher_vfs.h): with a page key
// registered, no planted word is left in any file of the database's folder
// (database, WAL, -shm, journal, free pages, FTS5 tables); what is written
// reads back after reopening, checkpoints, VACUUM and through a second
// connection; a changed, moved or foreign page is an error naming it, never
// data; a wrong key or a plaintext file is refused without a byte written.
#include "store/sqlite/cipher_vfs.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "store/sqlite/sqlite_db.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;
using sqlite::Database;
using sqlite::PageKeyRegistration;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteAll(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Every file of `dir` (name -> bytes).
std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files[e.path().filename().string()] = ReadAll(e.path());
  }
  return files;
}

// "canary word in file" for each hit.
std::vector<std::string> Hits(const fs::path& dir, const std::vector<std::string>& canaries) {
  std::vector<std::string> hits;
  for (const auto& [name, bytes] : Files(dir)) {
    for (const std::string& c : canaries) {
      if (bytes.find(c) != std::string::npos) hits.push_back(c + " in " + name);
    }
  }
  return hits;
}

std::unique_ptr<Database> OpenOrDie(const std::string& path) {
  Result<std::unique_ptr<Database>> db = Database::Open(path, 5000, sqlite::Access::kReadWrite);
  EXPECT_TRUE(db.has_value()) << (db ? "" : db.error().ToString());
  return db ? std::move(*db) : nullptr;
}

void ExecOrDie(Database* db, const std::string& sql) {
  Status s = db->Exec(sql);
  ASSERT_TRUE(s.ok()) << sql << ": " << s.ToString();
}

int64_t IntOrDie(Database* db, const char* sql) {
  Result<std::optional<int64_t>> v = db->QueryInt(sql);
  EXPECT_TRUE(v.has_value()) << sql << ": " << (v ? "" : v.error().ToString());
  return v && *v ? **v : -1;
}

std::string Padding(int n, int seed) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>('a' + (i * 7 + seed) % 26);
  return s;
}

// Inserts `rows` rows of ~600 bytes into t (and its FTS5 twin), planting
// `canary` in every tenth, in one transaction.
void InsertRows(Database* db, int rows, const std::string& canary, int seed = 0) {
  ExecOrDie(db, "BEGIN");
  for (int i = 0; i < rows; ++i) {
    const std::string body = (i % 10 == 0 ? canary + " " : std::string()) + Padding(600, seed + i);
    ExecOrDie(db, "INSERT INTO t(body) VALUES ('" + body + "')");
    ExecOrDie(db, "INSERT INTO f(body) VALUES ('" + body + "')");
  }
  ExecOrDie(db, "COMMIT");
}

void CreateTables(Database* db) {
  ExecOrDie(db, "PRAGMA journal_mode = WAL");
  ExecOrDie(db, "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, body TEXT)");
  ExecOrDie(db, "CREATE INDEX IF NOT EXISTS t_body ON t(body)");
  ExecOrDie(db, "CREATE VIRTUAL TABLE IF NOT EXISTS f USING fts5(body)");
}

class CipherVfs : public ::testing::Test {
 protected:
  void SetUp() override { key_ = cipher::SecretKey::Random(); }
  std::unique_ptr<PageKeyRegistration> RegisterOrDie(const std::string& path,
                                                     const cipher::SecretKey& key) {
    auto r = PageKeyRegistration::Register(path, key);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().ToString());
    return r ? std::move(*r) : nullptr;
  }

  TempDir dir_;
  cipher::SecretKey key_;
};

// Plants canaries in a database at `dir`/sessiondb.db: a part checkpointed
// into the file (with rows deleted, so free pages hold old ones), a part left
// in the WAL, read by a second connection (so the -shm is in use), and a
// database in rollback-journal mode whose persisted journal holds the
// pre-images of changed pages. Scans every file while the WAL is still there.
std::vector<std::string> PlantAndScan(const fs::path& dir, bool keyed,
                                      const cipher::SecretKey& key) {
  const std::string path = (dir / "sessiondb.db").string();
  const std::string journaled = (dir / "journaled.db").string();
  std::unique_ptr<PageKeyRegistration> r1, r2;
  if (keyed) {
    r1 = *PageKeyRegistration::Register(path, key);
    r2 = *PageKeyRegistration::Register(journaled, key);
  }
  const std::vector<std::string> canaries = {"CANARYcheckpointed7731", "CANARYdeleted5512",
                                             "CANARYinwal9043", "CANARYjournal2287"};
  auto db = OpenOrDie(path);
  CreateTables(db.get());
  ExecOrDie(db.get(), "PRAGMA wal_autocheckpoint = 0");
  // Debian's SQLite zeroes what is deleted by default: keep it in free pages.
  ExecOrDie(db.get(), "PRAGMA secure_delete = OFF");
  InsertRows(db.get(), 200, canaries[0]);
  InsertRows(db.get(), 200, canaries[1], 1000);
  ExecOrDie(db.get(), "DELETE FROM t WHERE body LIKE 'CANARYdeleted%'");
  ExecOrDie(db.get(), "DELETE FROM f WHERE body MATCH 'CANARYdeleted5512'");
  ExecOrDie(db.get(), "DELETE FROM t WHERE id > 300");
  ExecOrDie(db.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
  EXPECT_GT(IntOrDie(db.get(), "PRAGMA freelist_count"), 0);
  InsertRows(db.get(), 100, canaries[2], 2000);
  auto reader = OpenOrDie(path);
  EXPECT_EQ(IntOrDie(reader.get(), "SELECT count(*) FROM f WHERE f MATCH 'CANARYinwal9043'"), 10);

  auto jdb = OpenOrDie(journaled);
  ExecOrDie(jdb.get(), "PRAGMA journal_mode = PERSIST");
  ExecOrDie(jdb.get(), "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)");
  ExecOrDie(jdb.get(), "CREATE VIRTUAL TABLE f USING fts5(body)");
  InsertRows(jdb.get(), 50, canaries[3]);
  ExecOrDie(jdb.get(), "UPDATE t SET body = 'changed' WHERE body LIKE 'CANARY%'");
  EXPECT_GT(fs::file_size(journaled + "-journal"), 4096u);

  EXPECT_TRUE(fs::exists(path + "-wal"));
  EXPECT_GT(fs::file_size(path + "-wal"), 100u * 1000);
  EXPECT_TRUE(fs::exists(path + "-shm"));
  return Hits(dir, canaries);
}

TEST_F(CipherVfs, NoCanaryIsInAnyFileOfAnEncryptedDatabase) {
  const std::vector<std::string> hits = PlantAndScan(dir_.path(), /*keyed=*/true, key_);
  EXPECT_TRUE(hits.empty()) << ::testing::PrintToString(hits);
  // And the files are ciphertext from the first byte.
  EXPECT_FALSE(sqlite::IsPlaintextDatabase(dir_.Sub("sessiondb.db")));
}

TEST_F(CipherVfs, TheCanaryScanFindsEveryCanaryWithoutAKey) {
  const std::vector<std::string> hits = PlantAndScan(dir_.path(), /*keyed=*/false, key_);
  for (const char* where :
       {"CANARYcheckpointed7731 in sessiondb.db", "CANARYdeleted5512 in sessiondb.db",
        "CANARYinwal9043 in sessiondb.db-wal", "CANARYjournal2287 in journaled.db-journal"}) {
    EXPECT_NE(std::find(hits.begin(), hits.end(), where), hits.end())
        << where << "; hits: " << ::testing::PrintToString(hits);
  }
  EXPECT_TRUE(sqlite::IsPlaintextDatabase(dir_.Sub("sessiondb.db")));
}

std::string Digest(Database* db) {
  auto stmt = db->Prepare("SELECT group_concat(id || ':' || body, ',') FROM t ORDER BY id");
  EXPECT_TRUE(stmt.has_value());
  auto row = stmt->Step();
  EXPECT_TRUE(row.has_value() && *row) << (row ? "" : row.error().ToString());
  return row && *row ? std::string(stmt->ColumnText(0)) : "";
}

TEST_F(CipherVfs, ReadsBackAfterReopenCheckpointVacuumAndThroughASecondConnection) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  std::string expected;
  {
    auto db = OpenOrDie(path);
    CreateTables(db.get());
    InsertRows(db.get(), 300, "CANARYone");
    ExecOrDie(db.get(), "DELETE FROM t WHERE id % 3 = 0");
    expected = Digest(db.get());
    ASSERT_FALSE(expected.empty());
    // A second connection reads what the first left in the WAL.
    auto second = OpenOrDie(path);
    EXPECT_EQ(Digest(second.get()), expected);
    // And with a memory map asked for: SQLite still reads through the VFS.
    ExecOrDie(second.get(), "PRAGMA mmap_size = 268435456");
    EXPECT_EQ(Digest(second.get()), expected);
  }
  {
    auto db = OpenOrDie(path);  // reopened: the last close checkpointed
    EXPECT_EQ(Digest(db.get()), expected);
    InsertRows(db.get(), 50, "CANARYtwo", 7);
    expected = Digest(db.get());
    ExecOrDie(db.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
    EXPECT_EQ(fs::file_size(path + "-wal"), 0u);
    auto other = OpenOrDie(path);
    EXPECT_EQ(Digest(other.get()), expected);
    ExecOrDie(db.get(), "VACUUM");
    EXPECT_EQ(IntOrDie(db.get(), "PRAGMA freelist_count"), 0);
    EXPECT_EQ(Digest(db.get()), expected);
    EXPECT_EQ(Digest(other.get()), expected);
    EXPECT_EQ(IntOrDie(db.get(), "SELECT count(*) FROM f WHERE f MATCH 'CANARYtwo'"), 5);
    EXPECT_EQ(IntOrDie(db.get(), "PRAGMA page_size"), 4096);
    ExecOrDie(db.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
  }
  auto db = OpenOrDie(path);
  EXPECT_EQ(Digest(db.get()), expected);
  auto check = db->Prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.has_value());
  ASSERT_TRUE(*check->Step());
  EXPECT_EQ(check->ColumnText(0), "ok");
  EXPECT_EQ(fs::file_size(path) % 4096, 0u);
}

TEST_F(CipherVfs, ARolledBackTransactionRestoresPagesFromTheEncryptedJournal) {
  const std::string path = dir_.Sub("journaled.db");
  auto reg = RegisterOrDie(path, key_);
  auto db = OpenOrDie(path);
  ExecOrDie(db.get(), "PRAGMA journal_mode = DELETE");
  ExecOrDie(db.get(), "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)");
  ExecOrDie(db.get(), "CREATE VIRTUAL TABLE f USING fts5(body)");
  InsertRows(db.get(), 100, "CANARYkept");
  const std::string expected = Digest(db.get());
  ExecOrDie(db.get(), "PRAGMA cache_size = 2");  // spills changed pages to the file mid-way
  ExecOrDie(db.get(), "BEGIN");
  ExecOrDie(db.get(), "UPDATE t SET body = 'gone' || id");
  ExecOrDie(db.get(), "DELETE FROM t WHERE id > 50");
  ExecOrDie(db.get(), "ROLLBACK");
  EXPECT_EQ(Digest(db.get()), expected);
  auto again = OpenOrDie(path);
  EXPECT_EQ(Digest(again.get()), expected);
}

// The offset of page `pgno` in the database file.
int64_t PageOffset(int pgno) { return int64_t{pgno - 1} * 4096; }

void FlipByte(const std::string& path, int64_t offset) {
  std::string bytes = ReadAll(path);
  ASSERT_LT(offset, static_cast<int64_t>(bytes.size()));
  bytes[static_cast<size_t>(offset)] ^= 0x01;
  WriteAll(path, bytes);
}

// A checkpointed database whose table t holds 100 rows; t's root is page 2.
void MakeCheckpointed(const std::string& path) {
  auto db = OpenOrDie(path);
  ExecOrDie(db.get(), "PRAGMA journal_mode = WAL");
  ExecOrDie(db.get(), "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)");
  ExecOrDie(db.get(), "BEGIN");
  for (int i = 0; i < 100; ++i) {
    ExecOrDie(db.get(), "INSERT INTO t(body) VALUES ('" + Padding(900, i) + "')");
  }
  ExecOrDie(db.get(), "COMMIT");
}

Status ScanAll(const std::string& path) {
  Result<std::unique_ptr<Database>> db = Database::Open(path, 5000, sqlite::Access::kReadWrite);
  if (!db) return db.error();
  auto stmt = (*db)->Prepare("SELECT sum(length(body)) FROM t");
  if (!stmt) return stmt.error();
  Result<bool> row = stmt->Step();
  if (!row) return row.error();
  return Status::Ok();
}

TEST_F(CipherVfs, AFlippedByteInADatabasePageIsCorruptionNamingThePage) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  MakeCheckpointed(path);
  ASSERT_TRUE(ScanAll(path).ok());
  FlipByte(path, PageOffset(2) + 1000);
  Status s = ScanAll(path);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("does not decrypt: page 2 of " + fs::canonical(path).string()),
            std::string::npos)
      << s.message();
  // A flipped nonce or tag is the same.
  FlipByte(path, PageOffset(2) + 1000);
  ASSERT_TRUE(ScanAll(path).ok());
  FlipByte(path, PageOffset(2) + 4096 - 20);
  EXPECT_EQ(ScanAll(path).code(), StatusCode::kCorruption);
}

TEST_F(CipherVfs, APageCopiedOverAnotherDoesNotOpen) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  MakeCheckpointed(path);
  std::string bytes = ReadAll(path);
  ASSERT_GE(bytes.size(), 4u * 4096);
  bytes.replace(PageOffset(2), 4096, bytes.substr(PageOffset(4), 4096));
  WriteAll(path, bytes);
  Status s = ScanAll(path);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("page 2 of "), std::string::npos) << s.message();
}

TEST_F(CipherVfs, APageOfZerosIsCorruptionNotAnEmptyPage) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  MakeCheckpointed(path);
  std::string bytes = ReadAll(path);
  const int last = static_cast<int>(bytes.size() / 4096);
  bytes.replace(PageOffset(last), 4096, std::string(4096, '\0'));
  WriteAll(path, bytes);
  Status s = ScanAll(path);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("page " + std::to_string(last) + " of "), std::string::npos)
      << s.message();
}

TEST_F(CipherVfs, AnEncryptedDatabaseOpensReadOnly) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  MakeCheckpointed(path);
  Result<std::unique_ptr<Database>> db = Database::Open(path, 5000, sqlite::Access::kReadOnly);
  ASSERT_TRUE(db.has_value()) << db.error().ToString();
  EXPECT_EQ(IntOrDie(db->get(), "SELECT count(*) FROM t"), 100);
}

// The byte offset in the WAL of the page part of the last frame holding page
// `pgno` (the one a reader reads).
int64_t WalPageOffset(const std::string& wal, uint32_t pgno) {
  const std::string bytes = ReadAll(wal);
  int64_t found = -1;
  for (size_t off = 32; off + 24 + 4096 <= bytes.size(); off += 24 + 4096) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data() + off);
    if (((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]) == pgno) {
      found = static_cast<int64_t>(off + 24);
    }
  }
  return found;
}

TEST_F(CipherVfs, AFlippedByteInAWalPageFailsTheRead) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  auto writer = OpenOrDie(path);
  ExecOrDie(writer.get(), "PRAGMA journal_mode = WAL");
  ExecOrDie(writer.get(), "PRAGMA wal_autocheckpoint = 0");
  ExecOrDie(writer.get(), "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)");
  ExecOrDie(writer.get(), "INSERT INTO t(body) VALUES ('" + Padding(3000, 1) + "')");
  ASSERT_TRUE(ScanAll(path).ok());
  const int64_t offset = WalPageOffset(path + "-wal", 2);
  ASSERT_GT(offset, 0);
  FlipByte(path + "-wal", offset + 500);
  Status s = ScanAll(path);  // a new connection: its page cache is empty
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("page 2 in frame"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("-wal does not decrypt"), std::string::npos) << s.message();
}

TEST_F(CipherVfs, ACopyTakenMidWriteRecoversFromItsEncryptedLog) {
  const std::string path = dir_.Sub("sessiondb.db");
  const std::string copy = dir_.Sub("copy.db");
  auto reg = RegisterOrDie(path, key_);
  auto copy_reg = RegisterOrDie(copy, key_);
  auto writer = OpenOrDie(path);
  CreateTables(writer.get());
  ExecOrDie(writer.get(), "PRAGMA wal_autocheckpoint = 0");
  InsertRows(writer.get(), 100, "CANARYrecovered");
  const std::string expected = Digest(writer.get());
  // As a crash would leave it: the file and its WAL, no index.
  fs::copy_file(path, copy);
  fs::copy_file(path + "-wal", copy + "-wal");
  auto db = OpenOrDie(copy);
  EXPECT_EQ(Digest(db.get()), expected);
  EXPECT_EQ(IntOrDie(db.get(), "SELECT count(*) FROM f WHERE f MATCH 'CANARYrecovered'"), 10);
}

TEST_F(CipherVfs, AWrongKeyIsRefusedWithoutAByteWritten) {
  const std::string path = dir_.Sub("sessiondb.db");
  {
    auto reg = RegisterOrDie(path, key_);
    MakeCheckpointed(path);
    // Another key for a path registered in this process is refused at once.
    auto other = PageKeyRegistration::Register(path, cipher::SecretKey::Random());
    ASSERT_FALSE(other.has_value());
    EXPECT_EQ(other.error().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(other.error().message().find("already open in this process with another key"),
              std::string::npos);
    // The same key nests.
    auto again = RegisterOrDie(path, key_);
  }
  const auto before = Files(dir_.path());
  auto wrong = RegisterOrDie(path, cipher::SecretKey::Random());
  Result<std::unique_ptr<Database>> db = Database::Open(path, 5000, sqlite::Access::kReadWrite);
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().code(), StatusCode::kCorruption);
  EXPECT_NE(db.error().message().find("page 1 of"), std::string::npos) << db.error().message();
  EXPECT_NE(db.error().message().find("the key is wrong"), std::string::npos);
  auto after = Files(dir_.path());
  EXPECT_EQ(after.at("sessiondb.db"), before.at("sessiondb.db"));
  for (const auto& [name, bytes] : after) {
    if (name != "sessiondb.db" && !before.count(name)) {
      EXPECT_EQ(bytes.size(), 0u) << name;
    }
  }
}

TEST_F(CipherVfs, AWrongKeyFailsOnAnUncheckpointedLogToo) {
  const std::string path = dir_.Sub("sessiondb.db");
  const std::string copy = dir_.Sub("copy.db");
  {
    auto reg = RegisterOrDie(path, key_);
    auto writer = OpenOrDie(path);
    MakeCheckpointed(path);
    ExecOrDie(writer.get(), "PRAGMA wal_autocheckpoint = 0");
    ExecOrDie(writer.get(), "INSERT INTO t(body) VALUES ('in the log')");
    fs::copy_file(path, copy);
    fs::copy_file(path + "-wal", copy + "-wal");
  }
  const std::string db_bytes = ReadAll(copy), wal_bytes = ReadAll(copy + "-wal");
  auto wrong = RegisterOrDie(copy, cipher::SecretKey::Random());
  EXPECT_FALSE(ScanAll(copy).ok());
  EXPECT_EQ(ReadAll(copy), db_bytes);
  EXPECT_EQ(ReadAll(copy + "-wal"), wal_bytes);
}

TEST_F(CipherVfs, APlaintextDatabaseOpenedWithAKeyIsRefused) {
  const std::string path = dir_.Sub("sessiondb.db");
  MakeCheckpointed(path);  // no key: plaintext
  ASSERT_TRUE(sqlite::IsPlaintextDatabase(path));
  const std::string bytes = ReadAll(path);
  auto reg = RegisterOrDie(path, key_);
  Result<std::unique_ptr<Database>> db = Database::Open(path, 5000, sqlite::Access::kReadWrite);
  ASSERT_FALSE(db.has_value());
  EXPECT_EQ(db.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(db.error().message().find("plaintext"), std::string::npos) << db.error().message();
  EXPECT_EQ(ReadAll(path), bytes);

  // The VFS itself never reads a plaintext page as decrypted.
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_EXRESCODE,
                           sqlite::VfsFor(path));
  sqlite3_extended_result_codes(raw, 1);
  if (rc == SQLITE_OK) rc = sqlite3_exec(raw, "SELECT count(*) FROM t", nullptr, nullptr, nullptr);
  EXPECT_EQ(rc, SQLITE_IOERR_DATA);
  EXPECT_NE(sqlite::LastCipherFailure().find("plaintext SQLite database"), std::string::npos);
  sqlite3_close(raw);
  EXPECT_EQ(ReadAll(path), bytes);
}

TEST_F(CipherVfs, TemporaryFilesAreRefusedNotWrittenInPlaintext) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  auto db = OpenOrDie(path);
  EXPECT_EQ(IntOrDie(db.get(), "PRAGMA temp_store"), 2);  // MEMORY, set by Database::Open
  ExecOrDie(db.get(), "CREATE TEMP TABLE in_memory(x)");
  // A temporary database on disk is made when its pages spill from the cache.
  ExecOrDie(db.get(), "PRAGMA temp_store = FILE");
  Status s = db->Exec(
      "CREATE TEMP TABLE on_disk(x); PRAGMA temp.cache_size = 2;"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) "
      "INSERT INTO on_disk SELECT randomblob(1000) FROM n");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(sqlite::LastCipherFailure().find("temp_store = MEMORY"), std::string::npos);
}

// SQLite splits a WAL page write at a sync point only when the device lacks
// POWERSAFE_OVERWRITE (psow=0): the VFS reports it for a keyed WAL, so full
// syncs with psow=0 still write whole pages (a split one would fail).
TEST_F(CipherVfs, FullSyncWithoutPowersafeOverwriteNeverSplitsAPage) {
  const std::string path = dir_.Sub("sessiondb.db");
  auto reg = RegisterOrDie(path, key_);
  sqlite3* raw = nullptr;
  const std::string uri = "file:" + path + "?psow=0";
  ASSERT_EQ(sqlite3_open_v2(uri.c_str(), &raw,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                            sqlite::VfsFor(path)),
            SQLITE_OK);
  int reserve = sqlite::kCipherReserveBytes;
  ASSERT_EQ(sqlite3_file_control(raw, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
                         "CREATE TABLE t(x)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw) << " " << sqlite::LastCipherFailure();
  for (int i = 0; i < 40; ++i) {
    const std::string sql =
        "INSERT INTO t VALUES (randomblob(" + std::to_string(500 + i * 97) + "))";
    ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(raw) << " " << sqlite::LastCipherFailure();
  }
  sqlite3_close(raw);
  auto db = OpenOrDie(path);
  EXPECT_EQ(IntOrDie(db.get(), "SELECT count(*) FROM t"), 40);
}

}  // namespace
}  // namespace sessiondb::testing
