// A fresh store with a controllable clock and captured warnings, for the
// store test suites. The same tests run against every backend: an embedded
// store in a temporary directory, and a PostgreSQL store in a database of its
// own in the test cluster, and the same PostgreSQL store encrypted (a key
// file of its own, docs/encryption.md). The few things a test must do behind the store's
// back (remove or damage a blob, fake a newer schema, look at raw storage)
// are hooks here, written once per backend.
//
// Example:
//   class Sessions : public BackendTest {};
//   TEST_P(Sessions, AreListedNewestFirst) { ... store_->ListSessions(...) ... }
//   SESSIONDB_FOR_EACH_BACKEND(Sessions);
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "blob/blob_store.h"
#include "core/key_file.h"
#include "pg_test_database.h"
#include "sessiondb/store.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_sealer.h"
#include "test_support.h"

namespace sessiondb::testing {

enum class Backend { kEmbedded, kPostgres, kPostgresEncrypted };

// How many rows of `kind` ("file_versions", "code_writes", ...) an erasure's
// receipt counts; -1 when it names no such kind.
inline int64_t ErasedCount(const ErasureReceipt& receipt, std::string_view kind) {
  for (const auto& [name, n] : receipt.counts) {
    if (name == kind) return n;
  }
  return -1;
}

inline std::string BackendName(Backend b) {
  switch (b) {
    case Backend::kEmbedded:
      return "Embedded";
    case Backend::kPostgres:
      return "Postgres";
    case Backend::kPostgresEncrypted:
      return "PostgresEncrypted";
  }
  return "";
}

class StoreTest : public ::testing::Test {
 protected:
  virtual Backend backend() const = 0;
  bool embedded() const { return backend() == Backend::kEmbedded; }
  bool encrypted() const { return backend() == Backend::kPostgresEncrypted; }

  void SetUp() override {
    if (encrypted()) {
      key_file_ = dir_.Sub("master.key");
      auto key = cipher::WriteNewKeyFile(key_file_);
      ASSERT_TRUE(key) << key.error().ToString();
    }
    if (!embedded()) {
      pg_ = std::make_unique<PgTestDatabase>();
      ASSERT_TRUE(pg_->ok());
    }
    Reopen();
  }

  StoreOptions Options() {
    StoreOptions options;
    options.key_file = key_file_;
    options.clock = [this] { return now_ms_; };
    options.warn = [this](std::string_view w) {
      std::lock_guard lock(warn_mu_);
      warnings_.emplace_back(w);
    };
    return options;
  }

  // Where the store lives: a directory or a postgresql:// URI.
  std::string Location() const { return embedded() ? dir_.Sub("store") : pg_->uri(); }

  void Reopen() { Reopen(Options()); }
  void Reopen(const StoreOptions& options) {
    store_.reset();
    auto opened = Store::Open(Location(), options);
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_ = std::move(*opened);
  }

  std::string NewSessionId(const std::string& id = "") {
    auto s = store_->CreateSession(NewSession{.id = id});
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? s->id : "";
  }

  AppendResult AppendText(const std::string& session, const std::string& text,
                          Role role = Role::kUser) {
    Message m;
    m.role = role;
    m.parts.push_back(Part::Text(text));
    auto r = store_->Append(session, m);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? *r : AppendResult{};
  }

  // ---- Behind the store's back ----

  // What namespace `ns` of an encrypted PostgreSQL store seals with: its
  // data key opened from its envelope with the test's master key, as the
  // store does. Plaintext (names are digests) for the other backends.
  postgres::PgSealer Sealer(const std::string& ns = "default") const {
    if (!encrypted()) return postgres::PgSealer();
    const std::string envelope =
        pg_->Query("SELECT value FROM index_meta WHERE namespace = '" + ns + "' AND key = '" +
                   std::string(postgres::kNamespaceEnvelopeKey) + "'");
    auto master = cipher::ReadMasterKey(key_file_);
    EXPECT_TRUE(master) << master.error().ToString();
    if (!master) return postgres::PgSealer();
    auto key = store::OpenKeyEnvelope(envelope, *master, postgres::NamespaceKeyScope(ns), ns);
    EXPECT_TRUE(key) << key.error().ToString();
    return key ? postgres::PgSealer(*key) : postgres::PgSealer();
  }

  // The name blob `sha` is stored under in namespace "default" (the digest
  // itself unless encrypted).
  std::string StoredBlobName(const std::string& sha) const { return Sealer().BlobName(sha); }

  // How many blobs the store holds, referenced or not.
  size_t BlobCount() const {
    if (!embedded()) return std::stoul(pg_->Query("SELECT count(*) FROM blobs"));
    size_t n = 0;
    std::filesystem::path root = std::filesystem::path(StoreDir()) / "blobs" / "sha256";
    if (!std::filesystem::exists(root)) return 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(root)) n += e.is_regular_file();
    return n;
  }

  // Deletes the blob's bytes as a lost file or a careless DBA would.
  void RemoveBlob(const std::string& sha) {
    if (!embedded()) {
      pg_->Query("DELETE FROM blobs WHERE sha256 = '" + StoredBlobName(sha) + "'");
      return;
    }
    ASSERT_TRUE(std::filesystem::remove(blob::BlobFilePath(StoreDir() + "/blobs", sha)));
  }

  // Changes one byte of the blob's stored bytes (bit rot).
  void DamageBlob(const std::string& sha) {
    if (!embedded()) {
      // Flipped rather than set: a sealed blob's byte 20 may already be 88.
      pg_->Query("UPDATE blobs SET bytes = set_byte(bytes, 20, " +
                 std::string(encrypted() ? "get_byte(bytes, 20) # 1" : "88") +
                 ") WHERE sha256 = '" + StoredBlobName(sha) + "'");
      return;
    }
    std::string path = blob::BlobFilePath(StoreDir() + "/blobs", sha);
    std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('X');
  }

  // Marks the stored schema as written by a newer sessiondb. Close the store first.
  void SetStoredSchemaVersion(int version) {
    if (!embedded()) {
      pg_->Query("UPDATE sessiondb_meta SET value = '" + std::to_string(version) +
                 "' WHERE key = 'schema_version'");
      return;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((StoreDir() + "/sessiondb.db").c_str(), &db), SQLITE_OK);
    const std::string sql = "PRAGMA user_version = " + std::to_string(version);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }

  // True if `needle` appears anywhere in the stored log (database files or
  // tables) as stored: never in an encrypted namespace's sealed text.
  bool RawLogContains(const std::string& needle) const {
    if (!embedded()) {
      return pg_->Query("SELECT count(*) FROM events WHERE position('" + needle +
                        "' in text || coalesce(body, '')) > 0") != "0";
    }
    for (const char* file : {"/sessiondb.db", "/sessiondb.db-wal"}) {
      std::ifstream in(StoreDir() + file, std::ios::binary);
      std::string content((std::istreambuf_iterator<char>(in)), {});
      if (content.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  std::string StoreDir() const { return dir_.Sub("store"); }

  TempDir dir_;
  std::string key_file_;  // the master key of an encrypted store; empty otherwise
  std::unique_ptr<PgTestDatabase> pg_;
  int64_t now_ms_ = 1'700'000'000'000;
  std::mutex warn_mu_;
  std::vector<std::string> warnings_;
  std::unique_ptr<Store> store_;
};

// A suite that runs once per backend (TEST_P + SESSIONDB_FOR_EACH_BACKEND).
class BackendTest : public StoreTest, public ::testing::WithParamInterface<Backend> {
 protected:
  Backend backend() const override { return GetParam(); }
};

// Suites for what only one backend has (TEST_F).
class EmbeddedStoreTest : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kEmbedded; }
};
class PostgresStoreTest : public StoreTest {
 protected:
  Backend backend() const override { return Backend::kPostgres; }
};

#define SESSIONDB_FOR_EACH_BACKEND(suite)                                       \
  INSTANTIATE_TEST_SUITE_P(                                                     \
      Backends, suite,                                                          \
      ::testing::Values(::sessiondb::testing::Backend::kEmbedded,               \
                        ::sessiondb::testing::Backend::kPostgres,               \
                        ::sessiondb::testing::Backend::kPostgresEncrypted),     \
      [](const ::testing::TestParamInfo<::sessiondb::testing::Backend>& info) { \
        return ::sessiondb::testing::BackendName(info.param);                   \
      })

}  // namespace sessiondb::testing
