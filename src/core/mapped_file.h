// A file mapped read-only into memory, for files read in place rather than
// read whole (the saved HNSW index: search/mapped_hnsw.h).
//
// Reads stay outside the FileSystem seam (include/sessiondb/file_system.h),
// which exists to inject faults into writes; a mapping has no write to fail.
// The bytes (and reads through fd()) stay valid while the MappedFile lives,
// even after the file is renamed over or removed. A file truncated in place
// under a mapping makes reads past its new end fault (SIGBUS): files meant
// to be mapped are only ever replaced by rename (ReplaceFileDurably), never
// rewritten in place.
//
// Thread-safety: bytes() may be read from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sessiondb/status.h"

namespace sessiondb {

class MappedFile {
 public:
  // Maps the whole of `path` (an empty file maps to no bytes). kNotFound if
  // it does not exist, kIo if it cannot be opened, sized or mapped. A reader
  // that knows how it will read gives the kernel advice (madvise) itself.
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);
  // `size` bytes of private memory, zeroed, that `fill` writes once (the
  // decrypted bytes of a sealed file, the checked copy of an index's upper
  // levels), then read-only like a mapped file and as page-aligned, so a
  // reader may advise the kernel about it the same way. From 2 MiB up it is
  // backed by huge pages where the kernel has them (first touch is then a
  // fault per 2 MiB, not per 4 KiB). kIo if the memory cannot be had; what
  // `fill` returns if it fails (the memory is released).
  static Result<std::unique_ptr<MappedFile>> Anonymous(size_t size,
                                                       const std::function<Status(char*)>& fill);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }
  // The file mapped, open read-only for as long as this lives, for a reader
  // that reads some of it by pread instead (on a VM where a page fault costs
  // far more than a system call); -1 for anonymous memory.
  int fd() const { return fd_; }

 private:
  MappedFile(const char* data, size_t size, int fd) : data_(data), size_(size), fd_(fd) {}
  const char* data_;
  size_t size_;
  int fd_;
};

}  // namespace sessiondb
