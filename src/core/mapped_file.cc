#include "core/mapped_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

MappedFile::~MappedFile() {
  if (size_ > 0) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace sessiondb
