#include "blob/blob_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <thread>

#include "blob/sha256.h"

namespace sessiondb::blob {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kStaleTempMs = int64_t{60} * 60 * 1000;

Status IoError(const std::string& what, const std::string& path) {
  return Status::Io(what + " " + path + ": " + std::strerror(errno));
}

int64_t MtimeMs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

Status FsyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open directory", path);
  int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? Status::Ok() : IoError("cannot fsync directory", path);
}

Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Result<std::string> ReadAll(const std::string& path, std::string_view sha256) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return Err(Status::NotFound("blob " + std::string(sha256) + " is missing"));
    return Err(IoError("cannot open blob", path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = IoError("cannot stat blob", path);
    ::close(fd);
    return Err(s);
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = n < 0 ? IoError("cannot read blob", path)
                       : Status::Io("blob " + path + " shrank while being read");
      ::close(fd);
      return Err(s);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

// A name no other thread or process will pick for its temp file.
std::string TempName() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "-" +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "-" +
         std::to_string(counter++) + ".tmp";
}

}  // namespace

Result<std::unique_ptr<FileBlobStore>> FileBlobStore::Open(const std::string& root, bool sync) {
  std::error_code ec;
  fs::create_directories(fs::path(root) / "sha256", ec);
  if (!ec) fs::create_directories(fs::path(root) / "tmp", ec);
  if (ec) return Err(Status::Io("cannot create blob folder " + root + ": " + ec.message()));

  // Temp files of writers that crashed; young ones may belong to a live writer.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  for (auto it = fs::directory_iterator(fs::path(root) / "tmp", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::stat(it->path().c_str(), &st) == 0 && now_ms - MtimeMs(st) > kStaleTempMs) {
      fs::remove(it->path(), ec);
    }
  }
  return std::unique_ptr<FileBlobStore>(new FileBlobStore(root, sync));
}

std::string FileBlobStore::PathFor(std::string_view sha256) const {
  std::string path = root_;
  path += "/sha256/";
  path += sha256.substr(0, 2);
  path += '/';
  path += sha256;
  return path;
}

Status FileBlobStore::Put(std::string_view sha256, std::string_view bytes) {
  if (!IsSha256Hex(sha256)) {
    return Status::InvalidArgument("blob name '" + std::string(sha256) + "' is not a SHA-256");
  }
  const std::string final_path = PathFor(sha256);
  struct stat st;
  if (::stat(final_path.c_str(), &st) == 0 && st.st_size == static_cast<off_t>(bytes.size())) {
    // Same bytes, one copy. Touch it so gc's grace period covers this re-use.
    ::utimensat(AT_FDCWD, final_path.c_str(), nullptr, 0);
    return Status::Ok();
  }

  const std::string shard = root_ + "/sha256/" + std::string(sha256.substr(0, 2));
  bool new_shard = false;
  if (::mkdir(shard.c_str(), 0755) == 0) {
    new_shard = true;
  } else if (errno != EEXIST) {
    return IoError("cannot create", shard);
  }

  const std::string temp_path = root_ + "/tmp/" + TempName();
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
  if (fd < 0) return IoError("cannot create", temp_path);
  Status s = WriteAll(fd, bytes, temp_path);
  if (s.ok() && sync_ && ::fdatasync(fd) != 0) s = IoError("cannot fsync", temp_path);
  if (::close(fd) != 0 && s.ok()) s = IoError("cannot close", temp_path);
  if (s.ok() && ::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    s = IoError("cannot rename into place", final_path);
  }
  if (!s.ok()) {
    ::unlink(temp_path.c_str());
    return s;
  }
  if (sync_) {
    RETURN_IF_ERROR(FsyncPath(shard));
    if (new_shard) RETURN_IF_ERROR(FsyncPath(root_ + "/sha256"));
  }
  return Status::Ok();
}

Result<std::string> FileBlobStore::Get(std::string_view sha256, bool verify) {
  if (!IsSha256Hex(sha256)) {
    return Err(Status::InvalidArgument("blob name '" + std::string(sha256) + "' is not a SHA-256"));
  }
  ASSIGN_OR_RETURN(std::string bytes, ReadAll(PathFor(sha256), sha256));
  if (verify && Sha256Hex(bytes) != sha256) {
    return Err(Status::Corruption("blob " + std::string(sha256) +
                                  " is corrupt: its bytes no longer hash to its name"));
  }
  return bytes;
}

Result<BlobInfo> FileBlobStore::Stat(std::string_view sha256) {
  if (!IsSha256Hex(sha256)) {
    return Err(Status::InvalidArgument("blob name '" + std::string(sha256) + "' is not a SHA-256"));
  }
  struct stat st;
  const std::string path = PathFor(sha256);
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return Err(Status::NotFound("blob " + std::string(sha256) + " is missing"));
    return Err(IoError("cannot stat", path));
  }
  return BlobInfo{std::string(sha256), static_cast<int64_t>(st.st_size), MtimeMs(st)};
}

Result<std::string> FileBlobStore::Path(std::string_view sha256) {
  ASSIGN_OR_RETURN(BlobInfo info, Stat(sha256));
  return PathFor(info.sha256);
}

Status FileBlobStore::Remove(std::string_view sha256) {
  if (!IsSha256Hex(sha256)) {
    return Status::InvalidArgument("blob name '" + std::string(sha256) + "' is not a SHA-256");
  }
  const std::string path = PathFor(sha256);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return IoError("cannot remove", path);
  return Status::Ok();
}

Status FileBlobStore::ForEach(const std::function<Status(const BlobInfo&)>& visit) {
  const std::string base = root_ + "/sha256";
  DIR* shards = ::opendir(base.c_str());
  if (shards == nullptr) return IoError("cannot list", base);
  Status result;
  while (result.ok()) {
    struct dirent* shard = ::readdir(shards);
    if (shard == nullptr) break;
    if (std::strlen(shard->d_name) != 2 || shard->d_name[0] == '.') continue;
    const std::string shard_path = base + "/" + shard->d_name;
    DIR* files = ::opendir(shard_path.c_str());
    if (files == nullptr) continue;
    while (result.ok()) {
      struct dirent* file = ::readdir(files);
      if (file == nullptr) break;
      std::string_view name(file->d_name);
      if (!IsSha256Hex(name) || name.substr(0, 2) != shard->d_name) continue;
      struct stat st;
      if (::stat((shard_path + "/" + file->d_name).c_str(), &st) != 0) continue;  // raced a remove
      result = visit(BlobInfo{std::string(name), static_cast<int64_t>(st.st_size), MtimeMs(st)});
    }
    ::closedir(files);
  }
  ::closedir(shards);
  return result;
}

}  // namespace sessiondb::blob
