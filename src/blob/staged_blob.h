// A blob written before its name is known: FileBlobStore::Stage starts
// writing an attachment's bytes to a temp file on a thread of its own while
// the caller sniffs and hashes the same bytes; once named (SetDigest) the
// writer keeps an existing blob of that name instead, or fdatasyncs its temp
// file, still in the background. FileBlobStore::PutAll then only renames it
// into place and syncs the directory. So hashing overlaps the write, and the
// sync of one image overlaps the decoding and hashing of the next.
//
// The temp file gets its final name only after its sync succeeded: from
// PutAll, or from the writer itself when the owner asks (PlaceWhenSynced:
// the SQLite backend does so for a message's one image, and writes the
// message's rows meanwhile). Dropping a StagedBlob that was not renamed (a
// refused message, a failed append) waits for its writer and removes the
// temp file; a crash leaves it in tmp/, which Open clears.
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
// Thread-safety: one thread at a time calls the methods (the owner, or the
// thread it hands the blob to, as a group commit's leader calls WaitPlaced);
// the writer thread is internal.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

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
  void Ready(size_t n);
  // Blocks until the writer no longer reads the bytes given to Stage (they
  // are in the temp file, or the write failed): the caller may then move or
  // free them. Every byte must have been announced ready.
  void WaitWritten();
  // Names the bytes (their SHA-256, which the caller computed); the writer
  // then checks for a stored copy and syncs its temp file if there is none.
  void SetDigest(std::string sha256);
  // After SetDigest, instead of handing the blob to PutAll: the writer names
  // it itself once its temp file is synced (renames it into place and syncs
  // its folder), while the caller goes on, say to write the rows that name
  // it. WaitPlaced tells when it is stored; the caller must not commit those
  // rows before. Only for a blob that need not wait for others (PutAll names
  // a message's images together, none before all are synced).
  void PlaceWhenSynced();
  // After PlaceWhenSynced: blocks until the blob is stored, durable with
  // its name (or a stored copy of it was kept instead), or the writer failed.
  Status WaitPlaced();

 private:
  friend class FileBlobStore;
  StagedBlob(FileSystem* fs, size_t ready) : fs_(fs), announced_(ready) {
    if (ready > 0) piece_ends_.push_back(ready);
  }
  // PutAll names the blob: once synced, the writer is done. PutAll tells
  // every staged blob of a call at once, so that none waits for the others'
  // Finish to end.
  void LeaveNamingToPutAll();
  // Blocks until the writer is done: its error, or OK with `existing()`
  // telling whether a stored blob of the name was kept (and touched) instead.
  Status Finish();
  // After Finish: the blob was stored already, the temp file is not needed.
  bool existing() const { return existing_; }
  const std::string& temp_path() const { return temp_path_; }
  // PutAll renamed the temp file into place: nothing to remove.
  void MarkRenamed() { renamed_ = true; }

  // The writer's side of the hand-over (called on its thread).
  // Waits until more than `written` bytes are ready and returns the end of
  // the next piece announced past `written`; returns `written` when the
  // owner gave up.
  size_t AwaitReady(size_t written);
  void SignalWritten(Status status);
  // Waits for SetDigest or the owner giving up; false when given up.
  bool AwaitDigest(std::string* sha256);
  // Once synced: waits for the owner to choose who names the blob; true
  // when the writer is to (PlaceWhenSynced), false when PutAll will
  // (Finish) or the owner gave up.
  bool AwaitPlacement();
  void SignalDone(Status status, bool existing);

  FileSystem* const fs_;
  std::string temp_path_;  // set by the writer before SignalWritten
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> piece_ends_;  // announced, not yet taken; guarded by mu_
  size_t announced_;               // the last announced end; guarded by mu_
  bool written_ = false;           // guarded by mu_
  bool named_ = false;             // guarded by mu_
  bool abandoned_ = false;         // guarded by mu_
  bool place_ = false;             // guarded by mu_: PlaceWhenSynced was called
  bool put_ = false;               // guarded by mu_: PutAll names it
  bool done_ = false;              // guarded by mu_
  std::string sha256_;             // guarded by mu_
  Status status_;                  // guarded by mu_
  bool existing_ = false;          // guarded by mu_ until done_
  // Set by the writer before it ends (PlaceWhenSynced) or by PutAll after
  // Finish; read by the owner after the writer ended.
  bool renamed_ = false;
  std::thread writer_;
};

}  // namespace sessiondb::blob
