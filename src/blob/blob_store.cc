#include "blob/blob_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

#include "blob/sha256.h"
#include "core/file_io.h"

namespace sessiondb::blob {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kStaleTempMs = int64_t{60} * 60 * 1000;
// PutAll holds this many temp files open at most (a batch of messages may
// carry far more blobs than a process may have files open).
constexpr size_t kBlobsSyncedTogether = 64;

Status Missing(std::string_view sha256) {
  return Status::NotFound("blob " + std::string(sha256) + " is missing");
}

int64_t MtimeMs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

int HexDigit(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

Result<std::string> ReadAll(const std::string& path, std::string_view sha256) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Err(Missing(sha256));
    return Err(IoError("cannot open blob", path));
  }
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return Err(IoError("cannot stat blob", path));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Err(IoError("cannot read blob", path));
    }
    // Blobs are immutable and replaced only by rename, so an open file does not
    // shrink unless something outside the store truncated it.
    if (n == 0) return Err(Status::Io("blob " + path + " shrank while being read"));
    done += static_cast<size_t>(n);
  }
  return bytes;
}

// A temp file name no other thread or process picks: the pid tells processes
// apart, the process-wide counter tells threads and calls apart (the thread
// id is there for whoever reads a leftover name). O_EXCL guards the rest.
std::string TempName() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "-" +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "-" +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed)) + ".tmp";
}

// Runs every task, all at once: the first on the calling thread, each other
// on a thread of its own. They are the fdatasyncs of several files, which
// wait on the disk, not on a core: issued together, their data is written
// side by side and the file system commits them in one journal transaction
// instead of one after another. Returns the first error in task order,
// after every task has ended.
Status RunAtOnce(std::vector<std::function<Status()>>& tasks) {
  if (tasks.empty()) return Status::Ok();
  std::vector<Status> results(tasks.size());
  std::vector<std::thread> threads;
  threads.reserve(tasks.size() - 1);
  for (size_t i = 1; i < tasks.size(); ++i) {
    try {
      threads.emplace_back([&tasks, &results, i] { results[i] = tasks[i](); });
    } catch (const std::system_error&) {
      results[i] = tasks[i]();  // no thread to be had: run it here, in turn
    }
  }
  results[0] = tasks[0]();
  for (std::thread& t : threads) t.join();
  for (Status& r : results) {
    if (!r.ok()) return std::move(r);
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<FileBlobStore>> FileBlobStore::Open(const std::string& root, bool sync,
                                                           FileSystem* file_system) {
  if (file_system == nullptr) file_system = FileSystem::Default();
  std::error_code ec;
  const bool root_existed = fs::exists(root, ec);
  // The folders a store makes are its owner's alone (mode 0700 whatever the
  // umask); the parents, if any are missing, are the caller's.
  if (!root_existed && fs::path(root).has_parent_path()) {
    fs::create_directories(fs::path(root).parent_path(), ec);
    ec.clear();  // the mkdir below says what is wrong
  }
  for (const fs::path& dir : {fs::path(root), fs::path(root) / "sha256", fs::path(root) / "tmp"}) {
    if (fs::is_directory(dir, ec)) continue;
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Err(
          Status::Io("cannot create blob folder " + dir.string() + ": " + std::strerror(errno)));
    }
  }
  if (sync) {
    // Make the folders themselves durable: sha256/ and tmp/ in root, and, when
    // root is new, root in its parent (best effort: the parent is the
    // caller's, and may not be readable).
    RETURN_IF_ERROR(file_system->SyncDirectory(root));
    if (!root_existed) {
      fs::path path = fs::absolute(fs::path(root), ec).lexically_normal();
      if (!path.has_filename()) path = path.parent_path();  // "a/b/" names b
      if (!ec && path.has_parent_path()) {
        (void)file_system->SyncDirectory(path.parent_path().string());
      }
    }
  }

  // Temp files of writers that crashed; young ones may belong to a live writer.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  for (auto it = fs::directory_iterator(fs::path(root) / "tmp", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::stat(it->path().c_str(), &st) == 0 && now_ms - MtimeMs(st) > kStaleTempMs) {
      (void)file_system->Remove(it->path().string());  // another process may be removing it too
    }
  }
  return std::unique_ptr<FileBlobStore>(new FileBlobStore(root, sync, file_system));
}

std::string FileBlobStore::PathFor(std::string_view sha256) const {
  return BlobFilePath(root_, sha256);
}

std::string BlobFilePath(std::string_view root, std::string_view sha256) {
  std::string path(root);
  path += "/sha256/";
  path += sha256.substr(0, 2);
  path += '/';
  path += sha256;
  return path;
}

bool FileBlobStore::ShardEntriesSynced(std::span<const std::string_view> shards) {
  for (std::string_view shard : shards) {
    const size_t i =
        static_cast<size_t>(HexDigit(shard[0])) * 16 + static_cast<size_t>(HexDigit(shard[1]));
    if (!shard_entry_synced_[i].load(std::memory_order_acquire)) return false;
  }
  return true;
}

void FileBlobStore::MarkShardEntriesSynced(std::span<const std::string_view> shards) {
  for (std::string_view shard : shards) {
    const size_t i =
        static_cast<size_t>(HexDigit(shard[0])) * 16 + static_cast<size_t>(HexDigit(shard[1]));
    shard_entry_synced_[i].store(true, std::memory_order_release);
  }
}

Status BlobStore::PutAll(std::span<const BlobToPut> blobs) {
  for (const BlobToPut& b : blobs) RETURN_IF_ERROR(Put(b.sha256, b.bytes));
  return Status::Ok();
}

std::unique_ptr<StagedBlob> BlobStore::Stage(std::string_view, size_t) { return nullptr; }

Result<bool> FileBlobStore::TouchExisting(size_t size, const std::string& final_path) {
  // Same bytes, one copy: a blob of the right size is taken as this one (its
  // name is its hash). Touch it so garbage collection's grace period covers
  // this re-use. A blob of the wrong size is damaged and is replaced.
  struct stat st;
  if (::stat(final_path.c_str(), &st) == 0 && st.st_size == static_cast<off_t>(size)) {
    if (::utimensat(AT_FDCWD, final_path.c_str(), nullptr, 0) == 0) return true;
    // ENOENT: removed since the stat (garbage collection); write it again.
    if (errno != ENOENT) return Err(IoError("cannot touch", final_path));
  }
  return false;
}

Status FileBlobStore::Put(std::string_view sha256, std::string_view bytes) {
  const BlobToPut one{sha256, bytes};
  return PutAll(std::span<const BlobToPut>(&one, 1));
}

Status FileBlobStore::PutAll(std::span<const BlobToPut> blobs) {
  for (const BlobToPut& b : blobs) {
    if (!IsSha256Hex(b.sha256)) return NotADigest(b.sha256);
  }
  // A batch of messages may carry more blobs than a process may hold open.
  while (blobs.size() > kBlobsSyncedTogether) {
    RETURN_IF_ERROR(PutTogether(blobs.first(kBlobsSyncedTogether)));
    blobs = blobs.subspan(kBlobsSyncedTogether);
  }
  return PutTogether(blobs);
}

Status FileBlobStore::PutTogether(std::span<const BlobToPut> blobs) {
  // The blobs to write: not stored yet, each digest once.
  struct Pending {
    const BlobToPut* blob;
    std::string final_path;
    std::string temp_path;
    std::unique_ptr<WritableFile> file;
    bool renamed = false;
  };
  std::vector<Pending> pending;
  for (const BlobToPut& b : blobs) {
    bool again = false;
    for (const Pending& p : pending) again = again || p.blob->sha256 == b.sha256;
    if (again) continue;  // a staged copy of it is dropped with its StagedBlob
    std::string final_path = PathFor(b.sha256);
    if (b.staged != nullptr) {
      // Written (and synced) already, or a stored copy kept instead.
      RETURN_IF_ERROR(b.staged->Finish());
      if (b.staged->existing()) continue;
      pending.push_back(
          {.blob = &b, .final_path = std::move(final_path), .temp_path = b.staged->temp_path()});
      continue;
    }
    ASSIGN_OR_RETURN(bool stored, TouchExisting(b.bytes.size(), final_path));
    if (!stored) pending.push_back({.blob = &b, .final_path = std::move(final_path)});
  }
  if (pending.empty()) return Status::Ok();

  // Whatever fails, temp files not renamed into place go (a staged one with
  // its StagedBlob).
  auto fail = [&](Status s) {
    for (Pending& p : pending) {
      if (p.file) (void)p.file->Close();
      if (p.blob->staged == nullptr && !p.temp_path.empty() && !p.renamed) {
        (void)fs_->Remove(p.temp_path);
      }
    }
    return s;
  };
  // Write every file first, so the syncs below are issued together.
  for (Pending& p : pending) {
    const std::string shard = root_ + "/sha256/" + std::string(p.blob->sha256.substr(0, 2));
    if (Status s = fs_->CreateDirectory(shard, 0700); !s.ok()) return fail(s);
    if (p.blob->staged != nullptr) continue;
    const std::string temp_path = root_ + "/tmp/" + TempName();
    // Read-only, and its owner's alone: blobs are immutable, nothing in the
    // store opens them for writing, and they hold private conversations.
    Result<std::unique_ptr<WritableFile>> file = fs_->Create(temp_path, /*exclusive=*/true, 0400);
    if (!file) return fail(file.error());
    p.temp_path = temp_path;
    p.file = std::move(*file);
    if (Status s = p.file->Append(p.blob->bytes); !s.ok()) return fail(s);
  }
  // Each file's bytes durable before any of them gets its name: a crash
  // leaves whole blobs or none.
  std::vector<std::function<Status()>> syncs;
  for (Pending& p : pending) {
    if (!p.file) continue;
    if (sync_) syncs.push_back([&p] { return p.file->Sync(); });
  }
  Status synced = RunAtOnce(syncs);
  // Closed here, in order, so that only the syncs run side by side.
  for (Pending& p : pending) {
    if (!p.file) continue;
    Status closed = p.file->Close();
    p.file.reset();
    if (synced.ok()) synced = closed;
  }
  if (!synced.ok()) return fail(synced);
  // rename() replaces a concurrent writer's copy atomically; both hold the
  // same bytes, and readers that opened the old file keep reading it.
  for (Pending& p : pending) {
    if (Status s = fs_->Rename(p.temp_path, p.final_path); !s.ok()) return fail(s);
    p.renamed = true;
    if (p.blob->staged != nullptr) p.blob->staged->MarkRenamed();
  }
  if (!sync_) return Status::Ok();
  // The names durable: each shard directory that gained one, once, then
  // sha256/ for the entries of shards that may be new. One after another:
  // the first fsync commits the file system's journal with every rename in
  // it, so the others find little left to do (unlike the files' syncs, which
  // each wait for their own data).
  std::vector<std::string_view> shards;
  for (const Pending& p : pending) {
    const std::string_view shard = p.blob->sha256.substr(0, 2);
    if (std::find(shards.begin(), shards.end(), shard) == shards.end()) shards.push_back(shard);
  }
  for (std::string_view shard : shards) {
    RETURN_IF_ERROR(fs_->SyncDirectory(root_ + "/sha256/" + std::string(shard)));
  }
  if (!ShardEntriesSynced(shards)) {
    RETURN_IF_ERROR(fs_->SyncDirectory(root_ + "/sha256"));
    MarkShardEntriesSynced(shards);
  }
  return Status::Ok();
}

std::unique_ptr<StagedBlob> FileBlobStore::Stage(std::string_view bytes, size_t ready) {
  if (staged_in_flight_.fetch_add(1, std::memory_order_acq_rel) >= kMaxStagedInFlight) {
    staged_in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    return nullptr;
  }
  std::unique_ptr<StagedBlob> staged(new StagedBlob(fs_, std::min(ready, bytes.size())));
  staged->has_writer_ = true;
  if (!writer_threads_.Run([this, raw = staged.get(), bytes] { WriteStaged(raw, bytes); })) {
    staged->has_writer_ = false;
    staged_in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    return nullptr;  // no thread to be had: PutAll writes the bytes itself
  }
  return staged;
}

void FileBlobStore::WriteStaged(StagedBlob* staged, std::string_view bytes) {
  Status status;
  std::unique_ptr<WritableFile> file;
  const std::string temp_path = root_ + "/tmp/" + TempName();
  // Read-only and private, as PutAll's.
  Result<std::unique_ptr<WritableFile>> created = fs_->Create(temp_path, /*exclusive=*/true, 0400);
  if (created) {
    staged->temp_path_ = temp_path;  // published to the owner by SignalWritten
    file = std::move(*created);
  } else {
    status = created.error();
  }
  // Each piece goes to the disk as soon as it is written, while the owner
  // decodes and hashes the rest: the sync below then waits for little more
  // than the file system's journal.
  size_t written = 0;
  while (status.ok() && written < bytes.size()) {
    const size_t ready = staged->AwaitReady(written);
    if (ready == written) {
      status = Status::Internal("the staged blob was dropped before all its bytes were ready");
      break;
    }
    status = file->Append(bytes.substr(written, ready - written));
    written = ready;
    if (status.ok() && sync_) file->StartSync();
  }
  staged->SignalWritten(status);  // `bytes` is not read after this
  // Synced before the name is known, while the owner hashes: waiting for
  // the name first put the sync after the hash, in series (issue 40's W5).
  // An image stored already pays a sync it did not need.
  if (status.ok() && sync_) status = file->Sync();
  bool existing = false;
  std::string sha256;
  if (status.ok() && staged->AwaitDigest(&sha256)) {
    if (!IsSha256Hex(sha256)) {
      status = NotADigest(sha256);
    } else {
      Result<bool> stored = TouchExisting(bytes.size(), PathFor(sha256));
      if (!stored) {
        status = stored.error();
      } else if (*stored) {
        existing = true;  // same bytes, one copy: the owner drops the temp file
      }
    }
  }
  if (file) {
    Status closed = file->Close();
    if (status.ok()) status = closed;
  }
  // Before SignalDone, the last touch of `staged`: a Stage that follows the
  // owner's Finish then finds this writer's place free.
  staged_in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  staged->SignalDone(std::move(status), existing);
}

Result<std::string> FileBlobStore::Get(std::string_view sha256, bool verify) {
  if (!IsSha256Hex(sha256)) return Err(NotADigest(sha256));
  ASSIGN_OR_RETURN(std::string bytes, ReadAll(PathFor(sha256), sha256));
  if (verify && Sha256Hex(bytes) != sha256) {
    return Err(Status::Corruption("blob " + std::string(sha256) +
                                  " is corrupt: its bytes no longer hash to its name"));
  }
  return bytes;
}

Result<BlobInfo> FileBlobStore::Stat(std::string_view sha256) {
  if (!IsSha256Hex(sha256)) return Err(NotADigest(sha256));
  struct stat st;
  const std::string path = PathFor(sha256);
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Err(Missing(sha256));
    return Err(IoError("cannot stat", path));
  }
  return BlobInfo{std::string(sha256), static_cast<int64_t>(st.st_size), MtimeMs(st)};
}

namespace {

// Reads an open blob file from its start; owns the descriptor.
class FileBlobReader final : public BlobReader {
 public:
  FileBlobReader(int fd, int64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  ~FileBlobReader() override { ::close(fd_); }
  FileBlobReader(const FileBlobReader&) = delete;
  FileBlobReader& operator=(const FileBlobReader&) = delete;

  int64_t size() const override { return size_; }

  Result<std::string> Read(size_t max) override {
    const size_t want =
        static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(max), size_ - done_));
    std::string out(want, '\0');
    size_t got = 0;
    while (got < want) {
      ssize_t n = ::read(fd_, out.data() + got, want - got);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Err(IoError("cannot read blob", path_));
      }
      if (n == 0) return Err(Status::Io("blob " + path_ + " shrank while being read"));
      got += static_cast<size_t>(n);
    }
    done_ += static_cast<int64_t>(got);
    return out;
  }

  Status Skip(int64_t n) override {
    if (n < 0 || n > size_ - done_) {
      return Status::InvalidArgument("cannot skip past the end of blob " + path_);
    }
    if (::lseek(fd_, n, SEEK_CUR) < 0) return IoError("cannot seek in blob", path_);
    done_ += n;
    return Status::Ok();
  }

 private:
  const int fd_;
  const int64_t size_;
  const std::string path_;
  int64_t done_ = 0;
};

}  // namespace

Result<std::unique_ptr<BlobReader>> FileBlobStore::OpenReader(std::string_view sha256) {
  if (!IsSha256Hex(sha256)) return Err(NotADigest(sha256));
  const std::string path = PathFor(sha256);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Err(Missing(sha256));
    return Err(IoError("cannot open blob", path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status failed = IoError("cannot stat blob", path);
    ::close(fd);
    return Err(failed);
  }
  return std::unique_ptr<BlobReader>(new FileBlobReader(fd, st.st_size, path));
}

Status FileBlobStore::Remove(std::string_view sha256) {
  if (!IsSha256Hex(sha256)) return NotADigest(sha256);
  return fs_->Remove(PathFor(sha256));
}

Status FileBlobStore::ForEach(const std::function<Status(const BlobInfo&)>& visit) {
  const std::string base = root_ + "/sha256";
  DirPtr shards(::opendir(base.c_str()));
  if (!shards) return IoError("cannot list", base);
  auto is_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  while (true) {
    errno = 0;
    struct dirent* shard = ::readdir(shards.get());
    if (shard == nullptr) {
      if (errno != 0) return IoError("cannot list", base);
      break;
    }
    const std::string_view shard_name(shard->d_name);
    if (shard_name.size() != 2 || !is_hex(shard_name[0]) || !is_hex(shard_name[1])) continue;
    const std::string shard_path = base + "/" + shard->d_name;
    DirPtr files(::opendir(shard_path.c_str()));
    if (!files) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // removed, or a stray file
      return IoError("cannot list", shard_path);
    }
    while (true) {
      errno = 0;
      struct dirent* file = ::readdir(files.get());
      if (file == nullptr) {
        if (errno != 0) return IoError("cannot list", shard_path);
        break;
      }
      const std::string_view name(file->d_name);
      if (!IsSha256Hex(name) || name.substr(0, 2) != shard_name) continue;
      struct stat st;
      if (::fstatat(::dirfd(files.get()), file->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // raced a Remove
        return IoError("cannot stat", shard_path + "/" + file->d_name);
      }
      if (!S_ISREG(st.st_mode)) continue;
      RETURN_IF_ERROR(
          visit(BlobInfo{std::string(name), static_cast<int64_t>(st.st_size), MtimeMs(st)}));
    }
  }
  return Status::Ok();
}

}  // namespace sessiondb::blob
