// Checkpoints of a store's write-ahead log, taken off the commit path.
//
// SQLite's autocheckpoint runs inside the COMMIT that takes the WAL past
// 1,000 frames: that commit copies every frame into the database file and
// fsyncs it before it returns (15 % of a durable AppendBatch). Attached to a
// writer connection, a WalCheckpointer replaces it: a commit past
// kBackgroundFrames only wakes a thread of the checkpointer, which runs a
// PASSIVE checkpoint on a connection of its own while the writer goes on.
// A pass copies what was committed when it began, and the log restarts from
// its beginning only when every frame is copied, so under sustained writes
// the thread seldom lets it restart. A commit that leaves kInlineFrames or
// more therefore waits for the thread's pass and copies the rest itself
// (little: the thread copied the bulk), and the log restarts at the next
// write: the -wal file never holds more than kInlineFrames plus one commit's
// frames (while no reader pins an old snapshot, as with SQLite's own).
// Small commits (single appends) mostly find the thread done with little
// left, at most kFinishFrames: the commit copies that rest at once and the
// log restarts near kBackgroundFrames, as with SQLite's own, so their fsyncs
// overwrite the -wal file instead of extending it (W1's latency). A
// checkpoint only copies committed frames, and SQLite restarts the log only
// once they are all in the synced database file, so nothing acknowledged
// depends on the thread having run.
//
// Several processes may each have one on the same store: SQLite lets one
// checkpoint run at a time, and a PASSIVE one that finds another under way
// gives up (the other does the work).
//
// Thread-safety: Attach and the destructor on the writer connection's owner
// (under the lock that serialises that connection); the hook runs inside the
// writer's COMMIT, so under that lock too. stats() from any thread.
//
// Example:
//   auto checkpointer = WalCheckpointer::Attach(writer_db, "/s/sessiondb.db", true);
//   ... commits ...
//   checkpointer.reset();  // before the writer connection closes
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/mutex.h"

namespace sessiondb::sqlite {

class WalCheckpointer {
 public:
  // A commit that leaves at least this many frames in the log wakes the
  // thread (SQLite's own autocheckpoint threshold).
  static constexpr int kBackgroundFrames = 1000;
  // A commit that leaves at least this many frames checkpoints in line: the
  // bound on the log when the thread cannot keep up.
  static constexpr int kInlineFrames = 4000;
  // A commit past kBackgroundFrames that finds the thread idle with at most
  // this many frames left uncopied copies them itself (a few pages and an
  // fsync), so that the log restarts: what small appends leave after a pass.
  static constexpr int kFinishFrames = 64;
  // This process's first commit to a file (the first of any of its
  // connections with a checkpointer attached, while one is) that finds at
  // least this many frames in the log copies them itself: a log this process
  // did not write. Processes that ended without closing the store
  // left them (the hook ends with _Exit; a kill does the same), and whoever
  // opens the store next, when no other process has it open, reads every
  // frame back to rebuild SQLite's index of the log (a hook call over a
  // 4 MiB log took 5 ms more than over an empty one). Such processes never
  // run the thread long enough to copy anything, so without this the log
  // grew to kInlineFrames. Copied here and the -wal file emptied
  // (TruncateWithoutWaiting), no open reads more than about this many
  // frames.
  static constexpr int kInheritedFrames = 64;

  // Counts since Attach, for tests and benchmarks.
  struct Stats {
    int64_t background = 0;    // PASSIVE checkpoints the thread ran
    int64_t in_line = 0;       // checkpoints a commit past kInlineFrames ran itself
    int64_t rest_in_line = 0;  // checkpoints of the last kFinishFrames a commit ran
    int64_t inherited = 0;     // checkpoints a first commit ran (kInheritedFrames)
  };

  // Installs the hook on `writer` (replacing SQLite's autocheckpoint) for the
  // database file at `path`. The thread and its connection, opened on `path`
  // with synchronous FULL when `durable` (else NORMAL), start at the first
  // commit that needs them. `writer` must outlive the result.
  static std::unique_ptr<WalCheckpointer> Attach(sqlite3* writer, std::string path, bool durable);
  // Removes the hook (the writer then checkpoints in line past
  // kBackgroundFrames, as SQLite's default does), stops the thread and closes
  // its connection.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Returns once the thread is not checkpointing, and drops a request it has
  // not taken up, so that a checkpoint the writer runs next finds SQLite's
  // checkpoint lock free (a second checkpointer gives up at once). No pass
  // starts until a commit asks again. On the writer's side, like the hook.
  void Quiesce() EXCLUDES(mu_);

  Stats stats() EXCLUDES(mu_);

 private:
  WalCheckpointer(sqlite3* writer, std::string path, bool durable)
      : writer_(writer), path_(std::move(path)), durable_(durable) {}

  // The database file as this process's checkpointers know it: by device
  // and inode, counted while attached (so a file deleted and its inode
  // reused is a new one), and whether one of them has seen a commit.
  struct FileId {
    uint64_t device = 0;
    uint64_t inode = 0;
  };
  // True for the first commit any checkpointer of this process sees on the
  // file (false when the file could not be identified).
  bool FirstCommitOfProcess();

  // sqlite3_wal_hook's callback: `frames` are in the log after a commit.
  static int OnCommit(void* self, sqlite3* db, const char* schema, int frames);
  // The checkpoint of an inherited log (kInheritedFrames): TRUNCATE when no
  // reader holds the log, never waiting for one.
  static void TruncateWithoutWaiting(sqlite3* db, const char* schema);
  // The thread: a PASSIVE checkpoint each time it is woken, until stop_.
  void Run() EXCLUDES(mu_);

  sqlite3* const writer_;
  const std::string path_;
  const bool durable_;

  Mutex mu_;
  CondVar wake_;                          // the thread waits here for wanted_ or stop_
  CondVar idle_;                          // an in-line checkpoint waits here for !running_
  bool wanted_ GUARDED_BY(mu_) = false;   // a commit asked for a checkpoint
  bool running_ GUARDED_BY(mu_) = false;  // the thread is checkpointing
  // The log's restarts the hook has seen (cycle_), the frames the last commit
  // left (last_frames_), and how far the thread's last pass copied (copied_)
  // in which of them (copied_cycle_).
  int64_t cycle_ GUARDED_BY(mu_) = 0;
  int last_frames_ GUARDED_BY(mu_) = 0;
  int copied_ GUARDED_BY(mu_) = 0;
  int64_t copied_cycle_ GUARDED_BY(mu_) = -1;
  bool stop_ GUARDED_BY(mu_) = false;
  bool committed_ GUARDED_BY(mu_) = false;  // a commit has run the hook
  std::optional<FileId> file_;              // set by Attach, when stat succeeds
  Stats stats_ GUARDED_BY(mu_);
  std::thread thread_;  // started by the first OnCommit that wakes it
};

}  // namespace sessiondb::sqlite
