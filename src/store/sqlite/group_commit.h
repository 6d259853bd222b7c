// The group-commit queue of one embedded database file in this process.
//
// Every SqliteStore opened on the same file (the same device and inode, with
// the same blob folder and durability) shares one queue, as do the threads of
// each: whoever submits an append while no commit is under way becomes the
// leader and commits every append queued so far (up to the caps) in one
// transaction on its own connection, one WAL fsync for all of them. So 64
// Store objects in one process cost one writer's fsyncs, not 64 (issue 19).
// Nobody waits for company: a lone append commits at once.
//
// Thread-safety: every member may be called from any thread.
//
// Example:
//   std::shared_ptr<GroupCommitQueue> queue = GroupCommitQueue::ForFile(db, blobs, true);
//   GroupCommitQueue::Request r{...};
//   queue->Submit(&r, [&](const std::vector<Request*>& group) { /* commit them */ });
//   // r.result now holds this append's outcome.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"
#include "sessiondb/status.h"
#include "sessiondb/types.h"
#include "store/message_preparer.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::sqlite {

class GroupCommitQueue {
 public:
  // One Append, AppendBatch or FinishDraft call waiting in the queue. It lives
  // on the caller's stack, which waits in Submit until it is done.
  struct Request {
    std::string_view session_id;
    std::vector<PreparedMessage>* prepared;
    // Run first inside the request's savepoint, on the leader's connection
    // (which is in the group's transaction); may be empty.
    const std::function<Status(Database&)>* also;
    size_t text_bytes = 0;  // of the messages, for the group's cap
    // Written by the leader before `done` is set; read by the caller after.
    Result<std::vector<AppendResult>> result = Err(Status::Internal("append was never written"));
    // Guarded by the queue's mu_ (which a Request cannot name for the
    // analysis; only Submit touches it).
    bool done = false;
    // Signalled when `done` is set, and when this request is at the front of
    // the queue as a leader finishes, so that it leads the next group. One per
    // request: a finished group wakes its own callers and one more.
    CondVar wake;
  };
  // Writes `group` in one transaction and sets each request's result. Must
  // not throw: a leader that threw would leave its followers waiting forever.
  using CommitFn = std::function<void(const std::vector<Request*>& group)>;

  // A diagnostic for tests and benchmarks: counts since the queue was made
  // (by the first store opened on the file in this process).
  struct Stats {
    int64_t commits = 0;  // groups finished (committed or not)
    int64_t appends = 0;  // requests taken into those groups or the one being written
    int64_t queued = 0;   // requests waiting now for a leader to take them
  };

  // A group never carries more than this many requests, nor more text than
  // this beyond its first request; the rest wait for the next.
  static constexpr size_t kMaxGroupAppends = 256;
  static constexpr size_t kMaxGroupTextBytes = size_t{4} << 20;

  // The queue shared by every store of this process opened on the database
  // file `db_path` with the blob folder `blob_dir` and this durability (a
  // leader's connection commits with its own synchronous setting, so durable
  // and process-crash-safe stores never share). Returns a queue of its own,
  // shared with nobody, when `shareable` is false (a store with an injected
  // clock or file system: a leader writes with its own) or either path
  // cannot be stat'ed.
  static std::shared_ptr<GroupCommitQueue> ForFile(const std::string& db_path,
                                                   const std::string& blob_dir, bool durable,
                                                   bool shareable);

  // Queues `request` and returns once it is done: committed by whoever led
  // its group (perhaps this caller, through `commit`), or failed.
  void Submit(Request* request, const CommitFn& commit) EXCLUDES(mu_);

  Stats stats() EXCLUDES(mu_);

 private:
  // Removes the next group from the front of queue_: at least one request,
  // then as many as fit under the caps.
  std::vector<Request*> TakeGroup() REQUIRES(mu_);

  Mutex mu_;
  std::deque<Request*> queue_ GUARDED_BY(mu_);  // waiting, oldest first
  bool leader_active_ GUARDED_BY(mu_) = false;  // a group is being written
  Stats stats_ GUARDED_BY(mu_);                 // (`queued` is queue_.size())
};

}  // namespace sessiondb::sqlite
