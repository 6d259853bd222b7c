// Helpers shared by the test suites: throw-away directories and small but
// valid images built byte by byte, so tests need no fixture files.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace sessiondb::testing {

// A fresh directory under the test temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::path(::testing::TempDir()) /
            ("sessiondb-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string Sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline uint32_t Crc32(const std::string& data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

inline std::string U32Be(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

inline std::string PngChunk(const std::string& type, const std::string& data) {
  return U32Be(static_cast<uint32_t>(data.size())) + type + data + U32Be(Crc32(type + data));
}

// A valid grayscale PNG of the given header size. `salt` goes into a private
// ancillary chunk, so different salts give different bytes (and blobs), and
// `padding` bytes make it as large as a test needs.
inline std::string MakePng(uint32_t width, uint32_t height, const std::string& salt = "",
                           size_t padding = 0) {
  std::string ihdr = U32Be(width) + U32Be(height) + std::string("\x08\x00\x00\x00\x00", 5);
  std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + PngChunk("IHDR", ihdr);
  png += PngChunk("teSt", salt + std::string(padding, 'p'));
  png += PngChunk("IDAT", std::string("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10));
  png += PngChunk("IEND", "");
  return png;
}

// A baseline JPEG header (SOI, APP0, SOF0 with the given size) and a few
// bytes of payload: enough for a sniffer, not for a decoder.
inline std::string MakeJpeg(uint16_t width, uint16_t height, const std::string& salt = "") {
  std::string j("\xFF\xD8", 2);
  j += std::string("\xFF\xE0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00", 18);
  j += std::string("\xFF\xC0\x00\x0B\x08", 5);
  j += static_cast<char>(height >> 8);
  j += static_cast<char>(height & 0xFF);
  j += static_cast<char>(width >> 8);
  j += static_cast<char>(width & 0xFF);
  j += std::string("\x01\x01\x11\x00", 4);
  j += salt;
  j += std::string("\xFF\xD9", 2);
  return j;
}

}  // namespace sessiondb::testing
