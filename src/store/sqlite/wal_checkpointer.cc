#include "store/sqlite/wal_checkpointer.h"

#include <sys/stat.h>

#include <map>
#include <system_error>
#include <utility>

#include "store/sqlite/cipher_vfs.h"

namespace sessiondb::sqlite {

namespace {

// This process's attached checkpointers, per database file (device, inode).
struct AttachedFile {
  int checkpointers = 0;
  bool committed = false;  // one of them has seen a commit
};
struct AttachedFiles {
  Mutex mu;
  std::map<std::pair<uint64_t, uint64_t>, AttachedFile> files GUARDED_BY(mu);
};
AttachedFiles& Attached() {
  static auto* attached = new AttachedFiles();  // never destroyed: used at exit
  return *attached;
}

}  // namespace

std::unique_ptr<WalCheckpointer> WalCheckpointer::Attach(sqlite3* writer, std::string path,
                                                         bool durable) {
  std::unique_ptr<WalCheckpointer> checkpointer(
      new WalCheckpointer(writer, std::move(path), durable));
  struct stat st {};
  if (::stat(checkpointer->path_.c_str(), &st) == 0) {
    checkpointer->file_ =
        FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    AttachedFiles& attached = Attached();
    MutexLock lock(&attached.mu);
    ++attached.files[{checkpointer->file_->device, checkpointer->file_->inode}].checkpointers;
  }
  // Replaces the hook sqlite3_wal_autocheckpoint installed: one per connection.
  sqlite3_wal_hook(writer, &WalCheckpointer::OnCommit, checkpointer.get());
  return checkpointer;
}

WalCheckpointer::~WalCheckpointer() {
  if (file_) {
    AttachedFiles& attached = Attached();
    MutexLock lock(&attached.mu);
    auto it = attached.files.find({file_->device, file_->inode});
    if (it != attached.files.end() && --it->second.checkpointers == 0) attached.files.erase(it);
  }
  sqlite3_wal_autocheckpoint(writer_, kBackgroundFrames);
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.Signal();
  if (thread_.joinable()) thread_.join();
}

void WalCheckpointer::Quiesce() {
  MutexLock lock(&mu_);
  while (running_) idle_.Wait(&mu_);
  wanted_ = false;
}

WalCheckpointer::Stats WalCheckpointer::stats() {
  MutexLock lock(&mu_);
  return stats_;
}

namespace {

// The connection's busy timeout in ms (0 when it has none).
int BusyTimeoutMs(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  int ms = 0;
  if (sqlite3_prepare_v2(db, "PRAGMA busy_timeout", -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    ms = sqlite3_column_int(stmt, 0);
  }
  sqlite3_finalize(stmt);
  return ms;
}

}  // namespace

bool WalCheckpointer::FirstCommitOfProcess() {
  if (!file_) return false;
  AttachedFiles& attached = Attached();
  MutexLock lock(&attached.mu);
  AttachedFile& file = attached.files[{file_->device, file_->inode}];
  const bool first = !file.committed;
  file.committed = true;
  return first;
}

void WalCheckpointer::TruncateWithoutWaiting(sqlite3* db, const char* schema) {
  // A PASSIVE checkpoint is not enough here: SQLite records what it copied
  // only in the -shm file, which the next process to open the store alone
  // resets, so that one would read every frame back and copy them all
  // again. TRUNCATE empties the -wal file; it needs every reader of the log
  // gone, and waits for none (busy timeout 0): with one still reading it
  // copies what it can, as PASSIVE does, and the next call tries again.
  const int busy_ms = BusyTimeoutMs(db);
  sqlite3_busy_timeout(db, 0);
  (void)sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  sqlite3_busy_timeout(db, busy_ms);
}

int WalCheckpointer::OnCommit(void* arg, sqlite3* db, const char* schema, int frames) {
  auto* self = static_cast<WalCheckpointer*>(arg);
  bool finish = frames >= kInlineFrames;
  bool small_rest = false;
  bool inherited = false;
  {
    MutexLock lock(&self->mu_);
    // A log this process wrote (another connection of it committed first)
    // is no other process's leftover: its own checkpointers copy it.
    inherited = !self->committed_ && self->FirstCommitOfProcess() && frames >= kInheritedFrames;
    self->committed_ = true;
    // Fewer frames than the last commit saw: the log restarted, and what the
    // thread copied of the one before says nothing of this one.
    if (frames < self->last_frames_) ++self->cycle_;
    self->last_frames_ = frames;
    // The thread copied nearly all of it: copy the rest now, while it is
    // little, so that the log restarts at the next write instead of growing
    // towards kInlineFrames (appending past the -wal file's end makes every
    // fsync extend the file too, which costs single appends dear).
    small_rest = frames >= kBackgroundFrames && !self->running_ &&
                 self->copied_cycle_ == self->cycle_ && frames - self->copied_ <= kFinishFrames;
  }
  if (finish || small_rest || inherited) {
    // Past kInlineFrames the thread has not let the log restart (the writer
    // keeps adding frames while it copies, so it seldom catches up): finish
    // here, as SQLite's autocheckpoint would. Wait for the thread's pass
    // first, which holds SQLite's checkpoint lock (ours would give up at
    // once); after it, little is left to copy. No new pass starts meanwhile:
    // only this hook, on the writer, asks for one.
    self->Quiesce();
    // Errors are not the commit's (it has committed); a checkpoint that
    // another process runs makes this one give up, and the next commit
    // past the bound tries again.
    if (inherited && !finish && !small_rest) {
      TruncateWithoutWaiting(db, schema);
    } else {
      (void)sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
    MutexLock lock(&self->mu_);
    ++(finish       ? self->stats_.in_line
       : small_rest ? self->stats_.rest_in_line
                    : self->stats_.inherited);
    return SQLITE_OK;
  }
  if (frames < kBackgroundFrames) return SQLITE_OK;
  {
    MutexLock lock(&self->mu_);
    // A pass under way is not asked for another: the first commit after it
    // ends decides, seeing how much it left.
    if (self->running_) return SQLITE_OK;
    self->wanted_ = true;
  }
  // Only commits start it (under the writer's lock, as the destructor runs):
  // a store that only reads never has a thread.
  if (!self->thread_.joinable()) {
    // This runs inside SQLite's C frames: nothing may be thrown through them.
    // Without a thread, commits past kInlineFrames still checkpoint in line.
    try {
      self->thread_ = std::thread([self] { self->Run(); });
    } catch (const std::system_error&) {
      MutexLock lock(&self->mu_);
      self->wanted_ = false;
    }
  } else {
    self->wake_.Signal();
  }
  return SQLITE_OK;
}

void WalCheckpointer::Run() {
  sqlite3* db = nullptr;
  // No CREATE: the writer's file exists. If this fails, commits past
  // kInlineFrames still checkpoint in line.
  // Through the encrypting VFS when the store's file has a page key.
  if (sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                      VfsFor(path_)) != SQLITE_OK) {
    sqlite3_close(db);
    db = nullptr;
  } else {
    // The checkpoint syncs the database file before the log may restart;
    // never OFF, which would let a power loss take frames the log dropped.
    (void)sqlite3_exec(db, durable_ ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
                       nullptr, nullptr, nullptr);
  }
  MutexLock lock(&mu_);
  while (true) {
    while (!stop_ && !wanted_) wake_.Wait(&mu_);
    if (stop_) break;
    wanted_ = false;
    running_ = true;
    const int64_t cycle = cycle_;
    lock.Unlock();
    // PASSIVE: never waits for readers or the writer; copies what it can.
    int copied = -1;
    if (db != nullptr) {
      int in_log = 0;
      if (sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, &in_log, &copied) !=
          SQLITE_OK) {
        copied = -1;
      }
    }
    lock.Lock();
    running_ = false;
    if (copied >= 0) {
      copied_ = copied;
      copied_cycle_ = cycle;
    }
    if (db != nullptr) ++stats_.background;
    idle_.SignalAll();
  }
  lock.Unlock();
  sqlite3_close(db);
}

}  // namespace sessiondb::sqlite
