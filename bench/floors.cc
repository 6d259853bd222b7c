#include "floors.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
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
