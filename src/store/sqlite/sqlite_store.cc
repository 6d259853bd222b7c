#include "store/sqlite/sqlite_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <set>
#include <system_error>

#include "blob/data_uri.h"
#include "blob/sealed_blob_store.h"
#include "blob/sha256.h"
#include "core/event_codec.h"
#include "core/message_codec.h"
#include "core/text_rules.h"
#include "core/uuid.h"
#include "store/forget_rules.h"
#include "store/sqlite/cipher_vfs.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/store_conversion.h"
#include "store/sqlite/text_index_catch_up.h"
#include "store/store_common.h"
#include "store/store_encryption.h"
#include "store/usage_rules.h"

namespace sessiondb::sqlite {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDatabaseFile = kEmbeddedDatabaseFile.data();  // a literal: NUL-terminated
constexpr const char* kActiveSessionKey = "active_session";

int64_t FileSize(const fs::path& p) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

// The first entry of `root` that a store would not have put there, or "".
// A store being created by another process right now, or one whose creation
// was cut short by a crash, holds only its own names and is not refused.
std::string ForeignEntry(const fs::path& root) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name != kEmbeddedBlobDir && name.rfind(kDatabaseFile, 0) != 0) return name;
  }
  return "";
}

// Whether `options` (defaults applied) stamp times with the system clock
// rather than a clock a caller injected.
bool UsesSystemClock(const StoreOptions& options) {
  auto* const* fn = options.clock.target<int64_t (*)()>();
  return fn != nullptr && *fn == &SystemNowMs;
}

}  // namespace

Session SessionFromRow(const Statement& s) {
  Session out;
  out.id = s.ColumnText(0);
  out.title = s.ColumnText(1);
  out.preview = s.ColumnText(2);
  out.created_ms = s.ColumnInt(3);
  out.updated_ms = s.ColumnInt(4);
  out.message_count = s.ColumnInt(5);
  out.last_seq = s.ColumnInt(6);
  out.archived = s.ColumnInt(7) != 0;
  out.metadata_json = s.ColumnText(8);
  out.parent_id = s.ColumnText(9);
  out.fork_seq = s.ColumnInt(10);
  out.trashed_ms = s.ColumnInt(11);
  return out;
}

SqliteStore::SqliteStore(std::string dir, StoreOptions options,
                         std::shared_ptr<PageKeyRegistration> page_key,
                         std::unique_ptr<Database> db, std::unique_ptr<blob::BlobStore> blobs)
    : dir_(std::move(dir)),
      options_(std::move(options)),
      page_key_(std::move(page_key)),
      db_(std::move(db)),
      blobs_(std::move(blobs)) {}

SqliteStore::~SqliteStore() {
  if (read_only_reason_.empty() && db_) CatchUpTextIndexOnClose();
}

void SqliteStore::CatchUpTextIndexOnClose() {
  // Documents past this are left to a search, the server or `reindex`:
  // closing should not take seconds after a bulk load.
  constexpr int64_t kCloseCatchUp = 50'000;
  auto pending = TextIndexStateOf(*db_);
  if (!pending || pending->pending == 0) return;
  // The index is derived from the log: a power loss may lose this catch-up
  // (the next redoes it, the watermark moving with it), never the log. So no
  // fsync for it, and no wait behind another writer (who indexes when it
  // closes): each batch only tries the write lock.
  if (!db_->Exec("PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 0").ok()) return;
  // Bulk batches: nothing else of this process waits for the lock now.
  for (int64_t done = 0; done < std::min(pending->pending, kCloseCatchUp);
       done += store::kBulkTextIndexBatch) {
    auto state = IndexPendingTextOn(*db_, store::kBulkTextIndexBatch);
    if (!state || state->pending == 0) break;
  }
}

namespace {

// Takes group and other permission bits off `path` when it is ours; best
// effort (a file of another user, a read-only file system: left as it is).
void DropGroupAndOtherBits(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || st.st_uid != ::geteuid()) return;
  if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) return;
  if ((st.st_mode & 077) != 0) (void)::chmod(path.c_str(), st.st_mode & 07700);
}

// Private conversations: a store is its owner's alone, whatever the umask and
// whoever made its folder (other local users could otherwise read every
// message and blob). A new store's folder, even one the user made, loses its
// group and other bits, and its database is created 0600 (SQLite gives the
// -wal and -shm the database's mode); the writer lock, blobs, their folders
// and the index files are created 0600, 0400, 0700 and 0600 by their writers.
// An existing store keeps the modes its owner gave its folder and files (it
// may be opened to others on purpose, to be read: docs/security.md); only
// what is created from now on is private.
void MakeNewStorePrivate(const fs::path& root, const fs::path& db_path) {
  DropGroupAndOtherBits(root);
  const int fd = ::open(db_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0) ::close(fd);  // an empty file is a new database to SQLite
}

}  // namespace

Result<std::unique_ptr<store::Backend>> SqliteStore::Open(const std::string& dir,
                                                          const StoreOptions& given) {
  ASSIGN_OR_RETURN(StoreOptions options, WithDefaults(given));
  if (options.read_only) options.create_if_missing = false;  // creating is writing

  std::error_code ec;
  const fs::path root(dir);
  const fs::path db_path = root / kDatabaseFile;
  // A conversion (encrypt, decrypt, rekey) killed as it swapped folders:
  // finished first, never mistaken for a missing store and made anew.
  if (!options.read_only) RETURN_IF_ERROR(FinishInterruptedConversion(dir));
  if (!fs::exists(root, ec)) {
    if (!options.create_if_missing) {
      return Err(Status::NotFound("no store at " + dir + "; run `sessiondb init` to create one"));
    }
    fs::create_directories(root, ec);
    if (ec) return Err(Status::Io("cannot create store directory " + dir + ": " + ec.message()));
  } else if (!fs::is_directory(root, ec)) {
    return Err(Status::InvalidArgument(dir + " is not a directory; a store is a directory"));
  } else if (!fs::exists(db_path, ec)) {
    if (std::string stranger = ForeignEntry(root); !stranger.empty()) {
      return Err(Status::InvalidArgument(dir + " holds '" + stranger + "' and no " + kDatabaseFile +
                                         ", so it is not a store; choose an empty or new "
                                         "directory for a store"));
    }
    if (!options.create_if_missing) return Err(Status::NotFound("no store at " + dir));
  }

  if (options.read_only && !fs::exists(db_path, ec)) {
    return Err(Status::NotFound("no store at " + dir + " to open read-only"));
  }
  // The key first: a wrong or missing one fails here, before any byte of
  // the store is written (a new store's envelope comes before its database).
  ASSIGN_OR_RETURN(std::optional<cipher::SecretKey> data_key,
                   store::LoadEmbeddedDataKey(dir, db_path.string(), options,
                                              /*may_create=*/!options.read_only));
  std::unique_ptr<PageKeyRegistration> page_key;
  if (data_key) {
    if (IsPlaintextDatabase(db_path.string())) {
      return Err(Status::Corruption(
          "the store at " + dir + " has a key envelope but its database is plaintext; " +
          "restore the store (database and " + kDatabaseFile + "-key) from one backup"));
    }
    ASSIGN_OR_RETURN(page_key, PageKeyRegistration::Register(db_path.string(),
                                                             data_key->Derive("sqlite-pages")));
  }
  if (!options.read_only && !fs::exists(db_path, ec)) MakeNewStorePrivate(root, db_path);
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db,
                   Database::Open(db_path.string(), options.busy_timeout_ms,
                                  options.read_only ? Access::kReadOnly : Access::kAuto));
  const std::string read_only_reason = db->read_only_reason();
  RETURN_IF_ERROR(db->Exec(options.durability == Durability::kDurable
                               ? "PRAGMA synchronous = FULL"
                               : "PRAGMA synchronous = NORMAL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY"));
  if (read_only_reason.empty()) {
    // WAL mode (persistent) and the schema; retried while other processes
    // creating the same store hold the locks this needs.
    RETURN_IF_ERROR(PrepareForWriting(db.get(), dir, options.busy_timeout_ms));
  } else {
    ASSIGN_OR_RETURN(std::optional<int64_t> version, db->QueryInt("PRAGMA user_version"));
    if (version.value_or(0) < kSchemaVersion) {
      return Err(Status::FailedPrecondition(
          "the store at " + dir + " is read-only: " + read_only_reason + "; its schema (version " +
          std::to_string(version.value_or(0)) + ") must first be upgraded to version " +
          std::to_string(kSchemaVersion) + " by opening it once with write access"));
    }
    RETURN_IF_ERROR(MigrateSchema(db.get(), dir));  // refuses a newer schema; writes nothing
  }

  ASSIGN_OR_RETURN(std::unique_ptr<blob::FileBlobStore> file_blobs,
                   blob::FileBlobStore::Open(
                       (root / kEmbeddedBlobDir).string(),
                       options.durability == Durability::kDurable && read_only_reason.empty(),
                       options.file_system));
  std::unique_ptr<blob::BlobStore> blobs = std::move(file_blobs);
  if (data_key) blobs = blob::SealBlobStore(std::move(blobs), data_key->Derive("blobs"));
  auto store = std::unique_ptr<SqliteStore>(new SqliteStore(
      dir, std::move(options), std::move(page_key), std::move(db), std::move(blobs)));
  if (data_key) store->data_key_ = std::make_shared<const cipher::SecretKey>(*data_key);
  store->read_only_reason_ = read_only_reason;
  // Commits wake a checkpointer instead of copying the WAL into the database
  // file themselves (wal_checkpointer.h).
  if (read_only_reason.empty()) {
    store->checkpointer_ = WalCheckpointer::Attach(
        store->db_->handle(), db_path.string(), store->options_.durability == Durability::kDurable);
  }
  // One writer per file in this process: every store opened on it shares the
  // queue, so their appends share commits (and fsyncs) instead of taking
  // SQLite's write lock in turn.
  store->group_commit_ = GroupCommitQueue::ForFile(
      db_path.string(), (root / kEmbeddedBlobDir).string(),
      store->options_.durability == Durability::kDurable,
      /*shareable=*/UsesSystemClock(store->options_) && given.file_system == nullptr);
  return std::unique_ptr<store::Backend>(std::move(store));
}

std::string SqliteStore::NewId() const { return NewUuidV7(Now()); }

// ---- Sessions ---------------------------------------------------------------

Result<Session> SqliteStore::LoadSessionLocked(std::string_view id) {
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT " SESSION_COLUMNS " FROM sessions "
                                             "WHERE id = ?1 AND deleted = 0"));
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Err(SessionNotFound(id));
  return SessionFromRow(s);
}

Result<Session> SqliteStore::InsertSession(const store::SessionRow& row) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("INSERT OR IGNORE INTO sessions (id, title, title_fixed, "
                   "created_ms, updated_ms, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  s.Bind(1, row.id).Bind(2, row.title).Bind(3, int64_t{row.title_fixed});
  s.Bind(4, row.created_ms).Bind(5, row.updated_ms).Bind(6, row.metadata_json);
  RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) return Err(SessionIdTaken(row.id));
  RETURN_IF_ERROR(txn.Commit());
  return LoadSessionLocked(row.id);
}

Result<Session> SqliteStore::LoadSession(std::string_view id) {
  std::lock_guard lock(mu_);
  return LoadSessionLocked(id);
}

Result<std::vector<Session>> SqliteStore::SelectSessions(const store::SessionQuery& query) {
  std::optional<std::string> path;
  if (!query.metadata_key.empty()) path = "$.\"" + query.metadata_key + "\"";
  const int64_t archived = query.archived == ArchiveFilter::kAll        ? -1
                           : query.archived == ArchiveFilter::kArchived ? 1
                                                                        : 0;
  std::lock_guard lock(mu_);
  // The trash: its sessions whatever their archived flag (?1 stays bound).
#define LIVE_ROWS " FROM sessions WHERE deleted = 0 AND (?1 < 0 OR archived = ?1) "
#define TRASH_ROWS " FROM sessions WHERE trashed_ms IS NOT NULL AND ?1 = ?1 "
#define METADATA_FILTER "AND (?2 IS NULL OR CAST(json_extract(metadata, ?2) AS TEXT) = ?3) "
#define AFTER_CURSOR "AND (updated_ms, id) < (?5, ?6) "
#define ORDER_AND_LIMIT "ORDER BY updated_ms DESC, id DESC LIMIT ?4"
  // Static texts: the statement cache is keyed by the text's address.
  static constexpr const char* kQueries[2][2] = {
      {"SELECT " SESSION_COLUMNS LIVE_ROWS METADATA_FILTER ORDER_AND_LIMIT,
       "SELECT " SESSION_COLUMNS LIVE_ROWS METADATA_FILTER AFTER_CURSOR ORDER_AND_LIMIT},
      {"SELECT " SESSION_COLUMNS TRASH_ROWS METADATA_FILTER ORDER_AND_LIMIT,
       "SELECT " SESSION_COLUMNS TRASH_ROWS METADATA_FILTER AFTER_CURSOR ORDER_AND_LIMIT}};
#undef LIVE_ROWS
#undef TRASH_ROWS
#undef METADATA_FILTER
#undef AFTER_CURSOR
#undef ORDER_AND_LIMIT
  ASSIGN_OR_RETURN(Statement s, db_->Prepare(kQueries[query.trash ? 1 : 0][query.after ? 1 : 0]));
  s.Bind(1, archived).BindOptional(2, path).Bind(3, query.metadata_value).Bind(4, query.max_rows);
  if (query.after) s.Bind(5, query.after->first).Bind(6, query.after->second);
  std::vector<Session> sessions;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    sessions.push_back(SessionFromRow(s));
  }
  return sessions;
}

Status SqliteStore::UpdateTitle(std::string_view id, std::string_view clean) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("UPDATE sessions SET title = ?2, title_fixed = 1 "
                                             "WHERE id = ?1 AND deleted = 0"));
  s.Bind(1, id).Bind(2, clean);
  RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) return SessionNotFound(id);
  return Status::Ok();
}

Status SqliteStore::UpdateArchived(std::string_view id, bool archived) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("UPDATE sessions SET archived = ?2 "
                                             "WHERE id = ?1 AND deleted = 0"));
  s.Bind(1, id).Bind(2, int64_t{archived});
  RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) return SessionNotFound(id);
  return Status::Ok();
}

Result<bool> SqliteStore::HasForksLocked(std::string_view id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT 1 FROM sessions WHERE parent_id = ?1 LIMIT 1"));
  s.Bind(1, id);
  return s.Step();
}

Status SqliteStore::EraseSessionLocked(std::string_view id) {
  static constexpr const char* kDeletes[] = {
      "DELETE FROM events WHERE session_id = ?1",
      "DELETE FROM blob_refs WHERE session_id = ?1",
      "DELETE FROM usage_totals WHERE session_id = ?1",
      "DELETE FROM usage_days WHERE session_id = ?1",
      "DELETE FROM drafts WHERE session_id = ?1",
      "DELETE FROM meta WHERE key = 'active_session' AND value = ?1",
      "DELETE FROM sessions WHERE id = ?1",
  };
  for (const char* sql : kDeletes) {
    ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql));
    s.Bind(1, id);
    RETURN_IF_ERROR(s.Run());
  }
  return Status::Ok();
}

Result<std::optional<std::string>> SqliteStore::LoadActiveSession() {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT value FROM meta WHERE key = ?1"));
  s.Bind(1, std::string_view(kActiveSessionKey));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.ColumnText(0)));
}

// Settings share the meta table with the schema's own keys, under a prefix
// of their own so no setting can overwrite one of those.
Result<std::optional<std::string>> SqliteStore::LoadSetting(std::string_view key) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT value FROM meta WHERE key = 'setting:' || ?1"));
  s.Bind(1, key);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.ColumnText(0)));
}

Result<std::vector<LedgerEntry>> SqliteStore::ReadLedger(const LedgerQuery& query) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT id, ts_ms, actor, action, scope, counts, "
                                             "receipt_id, receipt_digest FROM forget_ledger "
                                             "WHERE ?1 = 0 OR id < ?1 ORDER BY id DESC LIMIT ?2"));
  s.Bind(1, query.before_id).Bind(2, query.limit);
  std::vector<LedgerEntry> entries;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    entries.push_back({.id = s.ColumnInt(0),
                       .ts_ms = s.ColumnInt(1),
                       .actor = std::string(s.ColumnText(2)),
                       .action = std::string(s.ColumnText(3)),
                       .scope = std::string(s.ColumnText(4)),
                       .counts = store::DecodeCounts(s.ColumnText(5)),
                       .receipt_id = std::string(s.ColumnText(6)),
                       .receipt_digest = std::string(s.ColumnText(7))});
  }
  return entries;
}

Status SqliteStore::StoreSetting(std::string_view key, std::string_view value) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("INSERT OR REPLACE INTO meta (key, value) "
                                             "VALUES ('setting:' || ?1, ?2)"));
  s.Bind(1, key).Bind(2, value);
  return s.Run();
}

Status SqliteStore::StoreActiveSession(std::string_view id) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  if (id.empty()) {
    ASSIGN_OR_RETURN(Statement s, db_->Prepare("DELETE FROM meta WHERE key = ?1"));
    s.Bind(1, std::string_view(kActiveSessionKey));
    RETURN_IF_ERROR(s.Run());
  } else {
    RETURN_IF_ERROR(LoadSessionLocked(id));
    ASSIGN_OR_RETURN(Statement s,
                     db_->Prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)"));
    s.Bind(1, std::string_view(kActiveSessionKey)).Bind(2, id);
    RETURN_IF_ERROR(s.Run());
  }
  return txn.Commit();
}

// ---- Messages ---------------------------------------------------------------

bool SqliteStore::HoldsBlob(std::string_view sha256) { return blobs_->Stat(sha256).has_value(); }

std::shared_ptr<blob::StagedBlob> SqliteStore::StageBlob(std::string_view bytes, size_t ready) {
  return blobs_->Stage(bytes, ready);
}

Result<std::vector<AppendResult>> SqliteStore::InsertMessages(
    std::string_view session_id, std::vector<PreparedMessage>& prepared, const Draft* finishing) {
  if (!finishing) return AppendPrepared(session_id, prepared, {});
  const Draft& draft = *finishing;
  // Runs on the group leader's connection, which may be another store's.
  auto remove_draft = [&](Database& db) -> Status {
    ASSIGN_OR_RETURN(Statement s, db.Prepare("DELETE FROM drafts WHERE id = ?1 AND "
                                             "updated_ms = ?2 AND text = ?3 AND reasoning = ?4"));
    s.Bind(1, draft.id).Bind(2, draft.updated_ms).Bind(3, draft.text).Bind(4, draft.reasoning);
    RETURN_IF_ERROR(s.Run());
    if (db.Changes() > 0) return Status::Ok();
    // Gone, or saved again since the front read it (its newer text would be lost).
    ASSIGN_OR_RETURN(Statement still, db.Prepare("SELECT 1 FROM drafts WHERE id = ?1"));
    still.Bind(1, draft.id);
    ASSIGN_OR_RETURN(bool exists, still.Step());
    if (!exists) return store::DraftNotFound(draft.id);
    return Status::Busy("draft " + draft.id +
                        " was saved again while it was being finished; finish it again");
  };
  return AppendPrepared(session_id, prepared, remove_draft);
}

Result<std::vector<AppendResult>> SqliteStore::AppendPrepared(
    std::string_view session_id, std::vector<PreparedMessage>& prepared,
    const std::function<Status(Database&)>& also) {
  // Blobs first, outside the lock: an event never commits before its bytes.
  // All of them at once, so their syncs are issued together (PutAll); the
  // large ones the front staged are written and syncing already, and PutAll
  // waits for them before it names them.
  size_t text_bytes = 0;
  std::vector<blob::BlobToPut> blobs;
  for (const PreparedMessage& p : prepared) {
    for (const PendingBlob& b : p.blobs) blobs.push_back({b.sha256, b.bytes, b.staged.get()});
    text_bytes += p.text.size();
  }
  RETURN_IF_ERROR(blobs_->PutAll(blobs));

  GroupCommitQueue::Request request{
      .session_id = session_id, .prepared = &prepared, .also = &also, .text_bytes = text_bytes};
  group_commit_->Submit(&request, [this](const std::vector<GroupCommitQueue::Request*>& group) {
    CommitGroup(group);
  });
  return std::move(request.result);
}

void SqliteStore::CommitGroup(const std::vector<GroupCommitQueue::Request*>& group) noexcept {
  auto fail_all = [&](const Status& s) {
    for (GroupCommitQueue::Request* r : group) r->result = Err(s);
  };
  std::lock_guard lock(mu_);
  Result<Transaction> txn = Transaction::Begin(db_.get());
  if (!txn) return fail_all(txn.error());
  for (GroupCommitQueue::Request* r : group) {
    Result<Savepoint> savepoint = Savepoint::Begin(db_.get());
    if (!savepoint) return fail_all(savepoint.error());
    Status also_done = *r->also ? (*r->also)(*db_) : Status::Ok();
    if (also_done.ok()) {
      r->result = AppendPreparedLocked(r->session_id, *r->prepared);
    } else {
      r->result = Err(std::move(also_done));
    }
    // A request that failed is undone alone and keeps its own error. If even
    // that fails, SQLite has ended the transaction itself (after an I/O
    // error, say): nothing written so far will commit, so nobody succeeded.
    Status kept = r->result ? savepoint->Release() : savepoint->Rollback();
    if (!kept.ok()) {
      Status cause = r->result ? std::move(kept) : r->result.error();
      return fail_all(cause);
    }
  }
  if (Status committed = txn->Commit(); !committed.ok()) fail_all(committed);
}

Result<std::vector<AppendResult>> SqliteStore::AppendPreparedLocked(
    std::string_view session_id, std::vector<PreparedMessage>& prepared) {
  IndexEntry entry;
  {
    // Scoped so the SELECT is reset before COMMIT: a statement still holding a
    // row keeps its read snapshot open past the commit, the checkpoint then
    // cannot backfill the frames just written, the WAL is never restarted and
    // grows without bound (and every fsync then also has to extend the file).
    ASSIGN_OR_RETURN(Statement load,
                     db_->Prepare("SELECT last_seq, message_count, title_fixed, title, preview "
                                  "FROM sessions WHERE id = ?1 AND deleted = 0"));
    load.Bind(1, session_id);
    ASSIGN_OR_RETURN(bool found, load.Step());
    if (!found) return Err(SessionNotFound(session_id));
    entry.last_seq = load.ColumnInt(0);
    entry.message_count = load.ColumnInt(1);
    entry.title_fixed = load.ColumnInt(2) != 0;
    entry.title = load.ColumnText(3);
    entry.preview = load.ColumnText(4);
  }

  // Garbage collection deletes only under the write lock we now hold, so a
  // blob present here stays until our references commit.
  for (const PreparedMessage& p : prepared) {
    for (const PendingBlob& b : p.blobs) {
      if (!blobs_->Stat(b.sha256)) RETURN_IF_ERROR(blobs_->Put(b.sha256, b.bytes));
    }
  }

  ASSIGN_OR_RETURN(Statement insert,
                   db_->Prepare("INSERT INTO events (session_id, seq, id, ts_ms, type, role, "
                                "text, body) VALUES (?1, ?2, ?3, ?4, 'message', ?5, ?6, ?7)"));
  ASSIGN_OR_RETURN(Statement add_ref,
                   db_->Prepare("INSERT OR IGNORE INTO blob_refs (sha256, session_id, seq) "
                                "VALUES (?1, ?2, ?3)"));
  std::vector<AppendResult> results;
  results.reserve(prepared.size());
  const int64_t now = Now();
  const int64_t first_seq = entry.last_seq + 1;
  for (PreparedMessage& p : prepared) {
    const Message& m = p.message();
    ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(m));
    ApplyMessageToIndex(m.role, p.text, &entry);
    const int64_t seq = entry.last_seq;
    // Not copied into SQLite (BindStatic): each outlives the Run below.
    insert.BindStatic(1, session_id).Bind(2, seq).BindStatic(3, p.id).Bind(4, now);
    insert.BindStatic(5, RoleName(m.role)).BindStatic(6, p.text);
    if (body) {
      insert.BindStatic(7, *body);
    } else {
      insert.BindNull(7);
    }
    if (Status s = insert.Run(); !s.ok()) {
      if (s.code() != StatusCode::kAlreadyExists) return Err(s);
      return Err(Status::AlreadyExists("message id '" + p.id + "' already exists in this store"));
    }
    for (const std::string& sha : p.referenced_sha256) {
      add_ref.Bind(1, sha).Bind(2, session_id).Bind(3, seq);
      RETURN_IF_ERROR(add_ref.Run());
    }
    RETURN_IF_ERROR(AddUsageLocked(session_id, m, now));

    AppendResult r;
    r.message_id = p.id;
    r.seq = seq;
    r.ts_ms = now;
    for (const Part& part : m.parts) {
      if (part.resource) r.resources.push_back(*part.resource);
    }
    results.push_back(std::move(r));
  }
  if (!results.empty())
    RETURN_IF_ERROR(RecordDocumentsLocked(session_id, first_seq, entry.last_seq));

  ASSIGN_OR_RETURN(Statement update,
                   db_->Prepare("UPDATE sessions SET last_seq = ?2, message_count = ?3, "
                                "updated_ms = ?4, title = ?5, title_fixed = ?6, preview = ?7 "
                                "WHERE id = ?1"));
  update.Bind(1, session_id).Bind(2, entry.last_seq).Bind(3, entry.message_count).Bind(4, now);
  update.Bind(5, entry.title).Bind(6, int64_t{entry.title_fixed}).Bind(7, entry.preview);
  RETURN_IF_ERROR(update.Run());
  return results;
}

// The stored total plus the new turn's count, or INT64_MAX where the sum would
// pass it: totals saturate (docs/harness.md). Counts are never negative.
#define SATURATING_SUM(col)                                 \
  "CASE WHEN excluded." col " > 9223372036854775807 - " col \
  " THEN 9223372036854775807 "                              \
  "ELSE " col " + excluded." col " END"

Status SqliteStore::AddUsageLocked(std::string_view session_id, const Message& m, int64_t ts_ms) {
  if (!m.usage) return Status::Ok();
    // The session's totals and its day's, in the caller's transaction: the two
    // tables always agree (docs/usage.md).
#define USAGE_SUMS \
  "input_tokens = " SATURATING_SUM("input_tokens") ", "                \
  "output_tokens = " SATURATING_SUM("output_tokens") ", "              \
  "cached_tokens = " SATURATING_SUM("cached_tokens") ", "              \
  "reasoning_tokens = " SATURATING_SUM("reasoning_tokens") ", "        \
  "cache_write_tokens = " SATURATING_SUM("cache_write_tokens")
  ASSIGN_OR_RETURN(Statement totals,
                   db_->Prepare("INSERT INTO usage_totals (session_id, provider, model, turns, "
                                "input_tokens, output_tokens, cached_tokens, reasoning_tokens, "
                                "cache_write_tokens) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8) "
                                "ON CONFLICT (session_id, provider, model) DO UPDATE "
                                "SET turns = turns + 1, " USAGE_SUMS));
  totals.Bind(1, session_id).Bind(2, m.provider).Bind(3, m.model);
  totals.Bind(4, m.usage->input_tokens).Bind(5, m.usage->output_tokens);
  totals.Bind(6, m.usage->cached_tokens).Bind(7, m.usage->reasoning_tokens);
  totals.Bind(8, m.usage->cache_write_tokens);
  RETURN_IF_ERROR(totals.Run());
  ASSIGN_OR_RETURN(Statement days,
                   db_->Prepare("INSERT INTO usage_days (session_id, day, provider, model, "
                                "turns, input_tokens, output_tokens, cached_tokens, "
                                "reasoning_tokens, cache_write_tokens) "
                                "VALUES (?1, ?9, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8) "
                                "ON CONFLICT (session_id, day, provider, model) DO "
                                "UPDATE SET turns = turns + 1, " USAGE_SUMS));
  days.Bind(1, session_id).Bind(2, m.provider).Bind(3, m.model);
  days.Bind(4, m.usage->input_tokens).Bind(5, m.usage->output_tokens);
  days.Bind(6, m.usage->cached_tokens).Bind(7, m.usage->reasoning_tokens);
  days.Bind(8, m.usage->cache_write_tokens).Bind(9, store::UtcDay(ts_ms));
  return days.Run();
}
#undef USAGE_SUMS

Result<std::set<std::string>> SqliteStore::PresentBlobs(const std::vector<std::string>& sha256s) {
  std::set<std::string> present;
  for (const std::string& sha : sha256s) {
    if (blobs_->Stat(sha)) present.insert(sha);
  }
  return present;
}

// ---- Blobs ------------------------------------------------------------------

Result<std::string> SqliteStore::ReadBlob(std::string_view sha256) {
  return blobs_->Get(sha256, /*verify=*/false);
}

Result<std::unique_ptr<BlobReader>> SqliteStore::OpenBlob(std::string_view sha256) {
  return blobs_->OpenReader(sha256);
}

// ---- Housekeeping -------------------------------------------------------------

Result<std::vector<store::BlobCandidate>> SqliteStore::UnreferencedBlobs(int64_t* scanned) {
  *scanned = 0;
  std::vector<store::BlobCandidate> candidates;
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement referenced,
                   db_->Prepare("SELECT 1 FROM blob_refs WHERE sha256 = ?1 LIMIT 1"));
  RETURN_IF_ERROR(blobs_->ForEach([&](const blob::BlobInfo& info) -> Status {
    ++*scanned;
    referenced.Bind(1, info.sha256);
    ASSIGN_OR_RETURN(bool used, referenced.Step());
    referenced.Reset();
    if (!used) candidates.push_back({info.sha256, info.size});
    return Status::Ok();
  }));
  return candidates;
}

Result<store::RemovedBlob> SqliteStore::RemoveBlobIfUnreferenced(std::string_view sha256,
                                                                 int64_t grace_cutoff_ms,
                                                                 bool dry_run) {
  // Under the write lock: appends re-check their blobs inside their own
  // transaction, so deleting here can never strand a committing event.
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  {
    ASSIGN_OR_RETURN(Statement referenced,
                     db_->Prepare("SELECT 1 FROM blob_refs WHERE sha256 = ?1 LIMIT 1"));
    referenced.Bind(1, sha256);
    ASSIGN_OR_RETURN(bool used, referenced.Step());
    // The statement is reset as it goes out of scope, before the COMMIT.
    if (used) return store::RemovedBlob{store::BlobRemoval::kReferenced, 0};
  }
  // Stat again: an append that found the file has touched it since it was listed.
  auto info = blobs_->Stat(sha256);
  if (!info) return store::RemovedBlob{store::BlobRemoval::kGone, 0};
  if (info->mtime_ms > grace_cutoff_ms)
    return store::RemovedBlob{store::BlobRemoval::kInGrace, info->size};
  if (!dry_run) RETURN_IF_ERROR(blobs_->Remove(sha256));
  RETURN_IF_ERROR(txn.Commit());
  return store::RemovedBlob{store::BlobRemoval::kRemoved, info->size};
}

void SqliteStore::CheckDatabase(VerifyReport* report) {
  std::lock_guard lock(mu_);
  CheckDatabaseLocked(report);
}

Result<std::vector<std::string>> SqliteStore::ReferencedBlobs() {
  std::vector<std::string> referenced;
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT DISTINCT sha256 FROM blob_refs"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    referenced.emplace_back(s.ColumnText(0));
  }
  return referenced;
}

Result<std::vector<std::string>> SqliteStore::StoredBlobs() {
  std::vector<std::string> stored;
  RETURN_IF_ERROR(blobs_->ForEach([&](const blob::BlobInfo& info) {
    stored.push_back(info.sha256);
    return Status::Ok();
  }));
  return stored;
}

void SqliteStore::CheckDatabaseLocked(VerifyReport* report) {
  report->database_check = "SQLite integrity_check of every page of " + std::string(kDatabaseFile);
  {
    Result<Statement> check = db_->Prepare("PRAGMA integrity_check(100)");
    if (!check) {
      report->database_problems.push_back(check.error().message());
    } else {
      while (true) {
        Result<bool> row = check->Step();
        if (!row) {
          report->database_problems.push_back(row.error().message());
          break;
        }
        if (!*row) break;
        std::string line(check->ColumnText(0));
        if (line != "ok") report->database_problems.push_back(std::move(line));
      }
    }
  }
  if (report->database_problems.empty()) return;

  // Which sessions the damage reaches: read each one's index entry and every
  // event it stores, through the table and again through the id index, as
  // show, export and projections would. Only done when the check failed, so
  // a healthy store's verify costs what it did.
  std::vector<std::string> ids;
  {
    Result<Statement> list = db_->Prepare("SELECT id FROM sessions ORDER BY id");
    if (!list) return report->database_problems.push_back(list.error().message());
    while (true) {
      Result<bool> row = list->Step();
      if (!row) {
        report->database_problems.push_back("the session list cannot be read to the end (" +
                                            row.error().message() + "); sessions after '" +
                                            (ids.empty() ? "" : ids.back()) + "' are unchecked");
        break;
      }
      if (!*row) break;
      ids.emplace_back(list->ColumnText(0));
    }
  }
  for (const std::string& id : ids) {
    Status s = ReadBackSessionLocked(id);
    if (!s.ok()) report->damaged_sessions.push_back({id, s.message()});
  }
}

Status SqliteStore::ReadBackSessionLocked(std::string_view id) {
  std::vector<std::pair<std::string, int64_t>> events;  // id, seq
  {
    ASSIGN_OR_RETURN(Statement entry, db_->Prepare("SELECT " SESSION_COLUMNS " FROM sessions "
                                                   "WHERE id = ?1"));
    entry.Bind(1, id);
    ASSIGN_OR_RETURN(bool found, entry.Step());
    if (!found) return Status::Corruption("its index entry is missing");
  }
  {
    ASSIGN_OR_RETURN(Statement rows,
                     db_->Prepare("SELECT id, seq, length(text), length(body) FROM events "
                                  "WHERE session_id = ?1 ORDER BY seq"));
    rows.Bind(1, id);
    while (true) {
      ASSIGN_OR_RETURN(bool row, rows.Step());
      if (!row) break;
      events.emplace_back(std::string(rows.ColumnText(0)), rows.ColumnInt(1));
    }
  }
  ASSIGN_OR_RETURN(Statement by_id, db_->Prepare("SELECT session_id, seq FROM events "
                                                 "INDEXED BY events_by_id WHERE id = ?1"));
  for (const auto& [event_id, seq] : events) {
    by_id.Bind(1, event_id);
    ASSIGN_OR_RETURN(bool row, by_id.Step());
    if (!row || by_id.ColumnText(0) != id || by_id.ColumnInt(1) != seq) {
      return Status::Corruption("event " + std::to_string(seq) + " (" + event_id +
                                ") is missing from the index of event ids");
    }
    by_id.Reset();
  }
  return Status::Ok();
}

Result<StorageStats> SqliteStore::Stats() {
  StorageStats stats;
  {
    std::lock_guard lock(mu_);
    // Messages are counted where they are stored: a fork's inherited ones are
    // its parent's, and counted once.
    ASSIGN_OR_RETURN(Statement s,
                     db_->Prepare("SELECT (SELECT count(*) FROM sessions WHERE deleted = 0), "
                                  "(SELECT count(*) FROM sessions WHERE deleted = 0 AND archived), "
                                  "(SELECT count(*) FROM events WHERE type = 'message')"));
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      stats.sessions = s.ColumnInt(0);
      stats.archived_sessions = s.ColumnInt(1);
      stats.messages = s.ColumnInt(2);
    }
  }
  RETURN_IF_ERROR(blobs_->ForEach([&](const blob::BlobInfo& info) {
    ++stats.blobs;
    stats.blob_bytes += info.size;
    return Status::Ok();
  }));
  const fs::path db_path = fs::path(dir_) / kDatabaseFile;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    stats.database_bytes += FileSize(db_path.string() + suffix);
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) stats.total_bytes += FileSize(it->path());
  }
  return stats;
}

}  // namespace sessiondb::sqlite
