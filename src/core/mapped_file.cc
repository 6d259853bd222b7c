#include "core/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "core/file_io.h"

namespace sessiondb {

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Err(Status::NotFound(path + " does not exist"));
    return Err(IoError("cannot open", path));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status s = IoError("cannot stat", path);
    ::close(fd);
    return Err(std::move(s));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) {
      Status s = IoError("cannot map", path);
      ::close(fd);
      return Err(std::move(s));
    }
  }
  ::close(fd);  // the mapping keeps the file
  return std::unique_ptr<MappedFile>(new MappedFile(static_cast<const char*>(data), size));
}

Result<std::unique_ptr<MappedFile>> MappedFile::Anonymous(
    size_t size, const std::function<Status(char*)>& fill) {
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) {
      return Err(Status::Io("cannot map " + std::to_string(size) +
                            " bytes of memory: " + std::strerror(errno)));
    }
  }
  std::unique_ptr<MappedFile> mapped(new MappedFile(static_cast<const char*>(data), size));
  RETURN_IF_ERROR(fill(static_cast<char*>(data)));
  if (size > 0 && ::mprotect(data, size, PROT_READ) != 0) {
    return Err(Status::Io(std::string("cannot make memory read-only: ") + std::strerror(errno)));
  }
  return mapped;
}

MappedFile::~MappedFile() {
  if (size_ > 0) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace sessiondb
