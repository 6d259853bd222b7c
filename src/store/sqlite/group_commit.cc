#include "store/sqlite/group_commit.h"

#include <sys/stat.h>

#include <map>
#include <tuple>

namespace sessiondb::sqlite {
namespace {

// What makes two stores the same for group commit: the database file and the
// blob folder by identity (a path may differ by symlinks, `..` or a bind
// mount and still name them), and the durability of their commits.
using QueueKey = std::tuple<dev_t, ino_t, dev_t, ino_t, bool>;

// The process-wide registry. Weak: a queue lives as long as a store holds it,
// and the next store opened on the file after the last one closed starts a
// new one.
Mutex& RegistryMutex() {
  static Mutex mu;
  return mu;
}
std::map<QueueKey, std::weak_ptr<GroupCommitQueue>>& Registry() REQUIRES(RegistryMutex()) {
  static auto* registry = new std::map<QueueKey, std::weak_ptr<GroupCommitQueue>>();
  return *registry;  // never destroyed: stores may close during static destruction
}

}  // namespace

std::shared_ptr<GroupCommitQueue> GroupCommitQueue::ForFile(const std::string& db_path,
                                                            const std::string& blob_dir,
                                                            bool durable, bool shareable) {
  struct stat db {
  }, blobs{};
  if (!shareable || ::stat(db_path.c_str(), &db) != 0 || ::stat(blob_dir.c_str(), &blobs) != 0) {
    return std::make_shared<GroupCommitQueue>();
  }
  const QueueKey key{db.st_dev, db.st_ino, blobs.st_dev, blobs.st_ino, durable};
  MutexLock lock(&RegistryMutex());
  auto& registry = Registry();
  for (auto it = registry.begin(); it != registry.end();) {
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  }
  if (auto it = registry.find(key); it != registry.end()) {
    if (std::shared_ptr<GroupCommitQueue> queue = it->second.lock()) return queue;
  }
  auto queue = std::make_shared<GroupCommitQueue>();
  registry[key] = queue;
  return queue;
}

void GroupCommitQueue::Submit(Request* request, const CommitFn& commit) {
  MutexLock lock(&mu_);
  queue_.push_back(request);
  while (true) {
    while (!request->done && leader_active_) request->wake.Wait(&mu_);
    if (request->done) return;
    // No commit is under way: lead one. No waiting for more writers: the
    // group is whoever queued while the previous commit ran, so a lone writer
    // commits at once. If more than one group is ahead of our request, ours
    // is committed by this loop's next round (or by a later leader).
    leader_active_ = true;
    std::vector<Request*> group = TakeGroup();
    stats_.appends += static_cast<int64_t>(group.size());
    lock.Unlock();
    commit(group);
    lock.Lock();
    ++stats_.commits;
    leader_active_ = false;
    // Under mu_: a finished caller returns, and destroys its request, as soon
    // as it gets the lock.
    for (Request* r : group) {
      r->done = true;
      r->wake.Signal();
    }
    // Whoever queued during the commit: the oldest of them leads next.
    if (!queue_.empty()) queue_.front()->wake.Signal();
  }
}

std::vector<GroupCommitQueue::Request*> GroupCommitQueue::TakeGroup() {
  std::vector<Request*> group;
  size_t text_bytes = 0;
  while (!queue_.empty() && group.size() < kMaxGroupAppends) {
    Request* next = queue_.front();
    if (!group.empty() && text_bytes + next->text_bytes > kMaxGroupTextBytes) break;
    text_bytes += next->text_bytes;
    group.push_back(next);
    queue_.pop_front();
  }
  return group;
}

GroupCommitQueue::Stats GroupCommitQueue::stats() {
  MutexLock lock(&mu_);
  Stats stats = stats_;
  stats.queued = static_cast<int64_t>(queue_.size());
  return stats;
}

}  // namespace sessiondb::sqlite
