#include "floors.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "blob/base64.h"
#include "stats.h"

namespace sessiondb::bench {

LatencyFloor MeasureFdatasync4k(const std::string& dir, int n, bool preallocated) {
  const std::string path = dir + "/fdatasync-floor.bin";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  std::string page(4096, 'f');
  if (preallocated) {
    for (int i = 0; i < n; ++i) {
      if (::pwrite(fd, page.data(), page.size(), static_cast<off_t>(i) * 4096) != 4096) {
        ::close(fd);
        throw std::runtime_error("preallocating " + path + " failed");
      }
    }
    if (::fsync(fd) != 0) {
      ::close(fd);
      throw std::runtime_error("fsync failed on " + path);
    }
  }
  std::vector<int64_t> ns;
  ns.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    int64_t start = NowNs();
    if (::pwrite(fd, page.data(), page.size(), static_cast<off_t>(i) * 4096) != 4096 ||
        ::fdatasync(fd) != 0) {
      ::close(fd);
      throw std::runtime_error("write/fdatasync failed on " + path);
    }
    ns.push_back(NowNs() - start);
  }
  ::close(fd);
  ::unlink(path.c_str());
  return {n, PercentileUs(ns, 50), PercentileUs(ns, 99), MedianMs(ns)};
}

namespace {

// Writes all of `bytes` to `fd` or throws, naming `path`.
void WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) throw std::runtime_error("floor: cannot write " + path);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void SyncOrThrow(int fd, bool data_only, const std::string& path) {
  if ((data_only ? ::fdatasync(fd) : ::fsync(fd)) != 0) {
    throw std::runtime_error("floor: cannot sync " + path);
  }
}

const std::string kLogPage(4096, 'l');

}  // namespace

void SyncDirectory(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("floor: cannot open " + path);
  try {
    SyncOrThrow(fd, /*data_only=*/false, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

FloorScene::FloorScene(std::filesystem::path root, size_t commits)
    : root_(std::move(root)), log_path_((root_ / "log").string()) {
  namespace fs = std::filesystem;
  fs::remove_all(root_);
  fs::create_directories(root_ / "tmp");
  fs::create_directories(root_ / "final");
  SyncDirectory(root_.string());
  log_ = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_ < 0) throw std::runtime_error("floor: cannot create " + log_path_);
  for (size_t i = 0; i < commits; ++i) WriteAll(log_, kLogPage, log_path_);
  SyncOrThrow(log_, /*data_only=*/false, log_path_);
  SyncDirectory(root_.string());
}

FloorScene::~FloorScene() {
  if (log_ >= 0) ::close(log_);
  std::error_code ignored;
  std::filesystem::remove_all(root_, ignored);
}

void FloorScene::Commit(size_t i) {
  if (::pwrite(log_, kLogPage.data(), kLogPage.size(), static_cast<off_t>(i) * 4096) != 4096) {
    throw std::runtime_error("floor: cannot write " + log_path_);
  }
  SyncOrThrow(log_, /*data_only=*/true, log_path_);
}

DurableWriteFloor MeasureDurableBlobWrites(const std::string& dir,
                                           const std::vector<std::string>& payloads, bool rename) {
  FloorScene scene(std::filesystem::path(dir) / (rename ? "durable-floor-rename" : "durable-floor"),
                   payloads.size());
  std::vector<int64_t> ns;
  ns.reserve(payloads.size());
  int64_t bytes = 0;
  const int64_t start = NowNs();
  for (size_t i = 0; i < payloads.size(); ++i) {
    const int64_t t = NowNs();
    const std::string name = std::to_string(i);
    const std::string final_path = scene.final_folder() + "/" + name;
    const std::string path = rename ? scene.tmp(name) : final_path;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (fd < 0) throw std::runtime_error("floor: cannot create " + path);
    WriteAll(fd, payloads[i], path);
    SyncOrThrow(fd, /*data_only=*/true, path);
    ::close(fd);
    if (rename) {
      if (::rename(path.c_str(), final_path.c_str()) != 0) {
        throw std::runtime_error("floor: cannot rename " + path);
      }
      SyncDirectory(scene.final_folder());
    }
    scene.Commit(i);
    ns.push_back(NowNs() - t);
    bytes += static_cast<int64_t>(payloads[i].size());
  }
  const double seconds = static_cast<double>(NowNs() - start) / 1e9;
  DurableWriteFloor out;
  out.latency = {static_cast<int>(ns.size()), PercentileUs(ns, 50), PercentileUs(ns, 99),
                 MedianMs(ns)};
  out.mib_per_s = static_cast<double>(bytes) / (1024.0 * 1024.0) / seconds;
  return out;
}

namespace {

// Decodes with OpenSSL's EVP_DecodeBlock, independent of our own decoder.
std::string OpensslDecode(std::string_view b64) {
  std::string out(b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n < 0) throw std::runtime_error("floor: bad base64 in a workload data URI");
  size_t padding =
      b64.size() >= 2 ? (b64[b64.size() - 1] == '=') + (b64[b64.size() - 2] == '=') : 0;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

template <typename Decode>
double HashDecodeMiBps(const std::vector<std::string>& data_uris, Decode decode) {
  int64_t bytes = 0;
  int64_t start = NowNs();
  for (const std::string& uri : data_uris) {
    std::string decoded = decode(std::string_view(uri).substr(uri.find(',') + 1));
    unsigned char digest[32];
    unsigned int len = 0;
    EVP_Digest(decoded.data(), decoded.size(), digest, &len, EVP_sha256(), nullptr);
    bytes += static_cast<int64_t>(decoded.size());
  }
  double seconds = static_cast<double>(NowNs() - start) / 1e9;
  return static_cast<double>(bytes) / (1024.0 * 1024.0) / seconds;
}

}  // namespace

double MeasureHashDecodeMiBps(const std::vector<std::string>& data_uris) {
  // The floor is the faster of OpenSSL's decoder and ours, so a slow decoder
  // of ours cannot make the ratio look better than it is.
  double openssl = HashDecodeMiBps(data_uris, OpensslDecode);
  double ours = HashDecodeMiBps(data_uris, [](std::string_view b64) {
    auto decoded = blob::Base64Decode(b64);
    if (!decoded) throw std::runtime_error("floor: bad base64 in a workload data URI");
    return std::move(*decoded);
  });
  return std::max(openssl, ours);
}

}  // namespace sessiondb::bench
