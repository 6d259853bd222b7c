// A blob written before its name is known: FileBlobStore::Stage starts
// writing an attachment's bytes to a temp file on a thread of its own (one
// the store keeps, see writer_threads.h) while the caller sniffs and hashes
// the same bytes. The writer fdatasyncs the temp file as soon as every byte
// is in it, then waits for the name (SetDigest) and keeps an existing blob
// of that name instead if there is one. FileBlobStore::PutAll then only
// renames it into place and syncs the directory. So hashing overlaps the
// write and its sync.
//
// The temp file never gets its final name here: only PutAll renames it, and
// only after the sync succeeded. Dropping a StagedBlob that PutAll did not
// rename (a refused message, a failed append) waits for its writer and
// removes the temp file; a crash leaves it in tmp/, which Open clears.
//
// The bytes may also be staged while they are being made: the writer writes
// each piece the owner announces with Ready, so the disk starts on an image
// while the rest of it is still being decoded.
//
// Example (what PrepareMessage and the SQLite backend do):
//   std::string bytes(size, '\0');
//   std::unique_ptr<StagedBlob> staged = store.Stage(bytes, 0);  // may be null
//   ... fill bytes, calling staged->Ready(n) as the first n are final ...
//   std::string sha = Sha256Hex(bytes);                          // meanwhile
//   staged->SetDigest(sha);
//   staged->WaitWritten();                                       // bytes may move now
//   store.PutAll({{sha, bytes, staged.get()}});
//
// Thread-safety: one owner thread calls the methods; the writer thread is
// internal.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

#include "core/mutex.h"
#include "sessiondb/file_system.h"
#include "sessiondb/status.h"

namespace sessiondb::blob {

class FileBlobStore;

class StagedBlob {
 public:
  ~StagedBlob();
  StagedBlob(const StagedBlob&) = delete;
  StagedBlob& operator=(const StagedBlob&) = delete;

  // The first `n` bytes given to Stage are final (more than it was told so
  // far, at most all): the writer may write them. Needed before WaitWritten
  // until all are. The writer writes each announced piece with a write of
  // its own, however far behind it is, so the file sees the same writes in
  // every run (the fault tests count them).
  void Ready(size_t n) EXCLUDES(mu_);
  // Blocks until the writer no longer reads the bytes given to Stage (they
  // are in the temp file, or the write failed): the caller may then move or
  // free them. Every byte must have been announced ready.
  void WaitWritten() EXCLUDES(mu_);
  // Names the bytes (their SHA-256, which the caller computed); the writer
  // then checks for a stored copy, which is kept instead of its temp file.
  void SetDigest(std::string sha256) EXCLUDES(mu_);

 private:
  friend class FileBlobStore;
  StagedBlob(FileSystem* fs, size_t ready) : fs_(fs), announced_(ready) {
    if (ready > 0) piece_ends_.push_back(ready);
  }
  // Blocks until the writer is done: its error, or OK with `existing()`
  // telling whether a stored blob of the name was kept (and touched) instead.
  Status Finish() EXCLUDES(mu_);
  // After Finish: the blob was stored already, the temp file is not needed.
  bool existing() const { return existing_; }
  const std::string& temp_path() const { return temp_path_; }
  // PutAll renamed the temp file into place: nothing to remove.
  void MarkRenamed() { renamed_ = true; }

  // The writer's side of the hand-over (called on its thread).
  // Waits until more than `written` bytes are ready and returns the end of
  // the next piece announced past `written`; returns `written` when the
  // owner gave up.
  size_t AwaitReady(size_t written) EXCLUDES(mu_);
  void SignalWritten(Status status) EXCLUDES(mu_);
  // Waits for SetDigest or the owner giving up; false when given up.
  bool AwaitDigest(std::string* sha256) EXCLUDES(mu_);
  // The last the writer does with this object: the owner may destroy it
  // as soon as it sees `done_`.
  void SignalDone(Status status, bool existing) EXCLUDES(mu_);
  // Blocks until the writer signalled done (at once when none was started).
  void AwaitDone() EXCLUDES(mu_);

  FileSystem* const fs_;
  std::string temp_path_;  // set by the writer before SignalWritten
  Mutex mu_;
  CondVar cv_;
  std::deque<size_t> piece_ends_ GUARDED_BY(mu_);  // announced, not yet taken
  size_t announced_ GUARDED_BY(mu_);               // the last announced end
  bool written_ GUARDED_BY(mu_) = false;
  bool named_ GUARDED_BY(mu_) = false;
  bool abandoned_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;
  std::string sha256_ GUARDED_BY(mu_);
  Status status_ GUARDED_BY(mu_);
  // Written under mu_ by the writer, read by the owner only after Finish
  // (which waited for done_ under mu_): no annotation names that hand-over.
  bool existing_ = false;
  bool renamed_ = false;     // owner's thread only
  bool has_writer_ = false;  // owner's thread only: a writer was started
};

}  // namespace sessiondb::blob
