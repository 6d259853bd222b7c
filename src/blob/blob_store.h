// Content-addressed storage of immutable bytes named by their SHA-256.
// BlobStore is the interface (the embedded store keeps blobs as files, a
// database backend may keep them in tables); FileBlobStore is the directory
// implementation:
//
//   <root>/sha256/ab/abcdef...  (full 64-hex name, sharded by its first two digits)
//   <root>/tmp/                 (temporary files, renamed into place)
//
// Writes are atomic: temp file, optional fsync, rename, optional fsync of the
// directory. A crash leaves either no blob or the whole blob, never a torn one.
// PutAll stores several blobs with their syncs together: every temp file is
// written, then each is synced, then all are renamed, then each directory
// that gained a name is synced once, so a message of n images waits for its
// disk about as long as a message of one. The files' syncs are issued at
// once, each on a thread of its own, so the disk writes them side by side.
// Stage writes a large blob before its name is known (staged_blob.h), so that
// hashing overlaps the write and the sync.
// Thread-safety: all methods may be called concurrently, also from several
// processes sharing the directory.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "blob/staged_blob.h"
#include "blob/writer_threads.h"
#include "sessiondb/blob_reader.h"
#include "sessiondb/file_system.h"
#include "sessiondb/status.h"

namespace sessiondb::blob {

struct BlobInfo {
  std::string sha256;
  int64_t size = 0;
  int64_t mtime_ms = 0;  // last modification, milliseconds since the epoch
};

// Where a FileBlobStore rooted at `root` keeps the blob `sha256`: for tools
// and tests that must reach the file itself (to damage it, say).
std::string BlobFilePath(std::string_view root, std::string_view sha256);

// One blob for PutAll: its bytes and their SHA-256 (computed by the caller),
// and, when Stage wrote them already, the staged temp file (named with
// SetDigest), which PutAll renames into place instead of writing `bytes`.
struct BlobToPut {
  std::string_view sha256;
  std::string_view bytes;
  StagedBlob* staged = nullptr;
};

class BlobStore {
 public:
  virtual ~BlobStore() = default;

  // Stores `bytes` under `sha256` (which the caller computed) unless a blob of
  // that name already exists: same bytes, one copy. Refreshes the existing
  // blob's mtime so garbage collection's grace period covers a re-use.
  virtual Status Put(std::string_view sha256, std::string_view bytes) = 0;
  // Put for each of `blobs` (the same digest twice is stored once). On
  // success every one is stored as Put leaves it (with sync: durable); on
  // failure some may be stored, whole, and the others are not. This default
  // puts them one by one.
  virtual Status PutAll(std::span<const BlobToPut> blobs);
  // Starts writing `bytes` (which must stay put until StagedBlob::WaitWritten
  // returns) to a temp file in the background, for a PutAll that names them
  // later; null when this store does not stage (then PutAll writes the
  // bytes). The first `ready` bytes are final; StagedBlob::Ready announces
  // the rest as the caller fills them in (an image being decoded), and the
  // writer writes each piece as it comes. The default does not stage.
  virtual std::unique_ptr<StagedBlob> Stage(std::string_view bytes, size_t ready);
  // kNotFound if absent; with verify, kCorruption if the bytes no longer hash
  // to the name.
  virtual Result<std::string> Get(std::string_view sha256, bool verify) = 0;
  // kNotFound if absent, else its size and mtime.
  virtual Result<BlobInfo> Stat(std::string_view sha256) = 0;
  // A reader of the bytes, opened now (a later Remove does not cut it
  // short). kNotFound if absent.
  virtual Result<std::unique_ptr<BlobReader>> OpenReader(std::string_view sha256) = 0;
  // Removes the blob; OK if it was already absent.
  virtual Status Remove(std::string_view sha256) = 0;
  // Calls `visit` for every stored blob (files with valid names only); stops
  // at and returns the first non-OK status `visit` returns.
  virtual Status ForEach(const std::function<Status(const BlobInfo&)>& visit) = 0;
};

class FileBlobStore : public BlobStore {
 public:
  // Creates `root` (and its sha256/ and tmp/ folders) if missing. With
  // `sync`, every Put fsyncs the file and its directory before returning.
  // Removes temp files left behind by a crash that are older than an hour.
  // Every file write goes through `file_system` (null: the real one), which
  // must outlive the store.
  static Result<std::unique_ptr<FileBlobStore>> Open(const std::string& root, bool sync,
                                                     FileSystem* file_system = nullptr);

  Status Put(std::string_view sha256, std::string_view bytes) override;
  // Writes every temp file, then syncs them all at once, renames all, then
  // syncs each shard directory that gained a name once: a message's images
  // wait for the disk together, with none of the renames and directory
  // syncs between their syncs. A failure removes the temp files not yet renamed; nothing is
  // renamed before every file is synced.
  Status PutAll(std::span<const BlobToPut> blobs) override;
  // Null while kMaxStagedInFlight staged writers of this store are running
  // (a batch of many large attachments must not start a thread for each).
  std::unique_ptr<StagedBlob> Stage(std::string_view bytes, size_t ready) override;
  static constexpr int kMaxStagedInFlight = 16;
  Result<std::string> Get(std::string_view sha256, bool verify) override;
  Result<BlobInfo> Stat(std::string_view sha256) override;
  Result<std::unique_ptr<BlobReader>> OpenReader(std::string_view sha256) override;
  Status Remove(std::string_view sha256) override;
  Status ForEach(const std::function<Status(const BlobInfo&)>& visit) override;

 private:
  FileBlobStore(std::string root, bool sync, FileSystem* fs)
      : root_(std::move(root)), sync_(sync), fs_(fs) {}
  std::string PathFor(std::string_view sha256) const;
  // True when a blob of this name and size is stored; touches it, so garbage
  // collection's grace period covers the re-use.
  Result<bool> TouchExisting(size_t size, const std::string& final_path);
  // PutAll for at most kBlobsSyncedTogether blobs of valid names.
  Status PutTogether(std::span<const BlobToPut> blobs);
  // With sync_, the entries of the shard directories `shards` (two hex
  // digits each) in sha256/ must be durable too: true when this store has
  // fsynced sha256/ since each existed, else one fsync of sha256/ is due
  // (whoever created a shard, another thread or process, may not have synced
  // it yet). Mark records that fsync.
  bool ShardEntriesSynced(std::span<const std::string_view> shards);
  void MarkShardEntriesSynced(std::span<const std::string_view> shards);
  // The staged writer's thread: writes `bytes` to a temp file as they are
  // ready, syncs it, waits for the name, then keeps an existing blob of it
  // instead if there is one.
  void WriteStaged(StagedBlob* staged, std::string_view bytes);

  const std::string root_;
  const bool sync_;
  FileSystem* const fs_;
  // Indexed by the shard's two hex digits; true once sha256/ was fsynced
  // after the shard existed.
  std::array<std::atomic<bool>, 256> shard_entry_synced_{};
  // Staged writers running: each is a thread holding a temp file open.
  std::atomic<int> staged_in_flight_{0};
  // Their threads, kept between blobs. Declared last: it waits for every
  // writer before the members they use go.
  WriterThreads writer_threads_;
};

}  // namespace sessiondb::blob
