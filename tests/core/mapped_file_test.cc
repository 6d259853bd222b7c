// MappedFile::Anonymous: private memory written once, then read-only. From
// 2 MiB up it starts on a huge-page boundary and asks for huge pages, since
// a fault per 4 KiB page is what made an index's open slow (mapped_hnsw.cc).
#include "core/mapped_file.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace sessiondb {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// The sizes the test takes: empty, under a page, under a huge page, and
// huge pages plus an odd tail.
constexpr size_t kSizes[] = {0, 100, kHugePage - 1, 3 * kHugePage + 12345};

// The "THPeligible" flag of the mapping that holds `address`, from
// /proc/self/smaps: 1 where the kernel would back it with huge pages (in its
// "madvise" mode, only a range that asked for them); -1 if none holds it.
int HugePagesEligible(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= at && at < end;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(line.find(':') + 1));
    }
  }
  return -1;
}

// The kernel's setting: "never" turns huge pages off whatever a range asks.
bool HugePagesOff() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes((std::istreambuf_iterator<char>(in)), {});
  return modes.empty() || modes.find("[never]") != std::string::npos;
}

TEST(MappedFileAnonymous, FillSeesZeroedMemoryAndItsBytesAreWhatFillWrote) {
  for (size_t size : kSizes) {
    SCOPED_TRACE(size);
    bool all_zero = true;
    auto mapped = MappedFile::Anonymous(size, [&](char* memory) {
      for (size_t i = 0; i < size; ++i) all_zero &= memory[i] == 0;
      for (size_t i = 0; i < size; ++i) memory[i] = static_cast<char>(i * 7 + 3);
      return Status::Ok();
    });
    ASSERT_TRUE(mapped) << mapped.error().ToString();
    EXPECT_TRUE(all_zero);
    const std::string_view bytes = (*mapped)->bytes();
    ASSERT_EQ(bytes.size(), size);
    for (size_t i = 0; i < size; ++i) {
      ASSERT_EQ(bytes[i], static_cast<char>(i * 7 + 3)) << "at " << i;
    }
    if (size > 0) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes.data()) % ::sysconf(_SC_PAGESIZE), 0u);
    }
  }
}

TEST(MappedFileAnonymous, ALargeBlockStartsOnAHugePageAndAsksForThem) {
  const size_t size = 3 * kHugePage + 12345;
  auto mapped = MappedFile::Anonymous(size, [&](char* memory) {
    for (size_t i = 0; i < size; i += 4096) memory[i] = 1;  // touch every page
    return Status::Ok();
  });
  ASSERT_TRUE(mapped) << mapped.error().ToString();
  const char* data = (*mapped)->bytes().data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % kHugePage, 0u);
  // Whether the kernel then gives huge pages depends on free memory; that
  // the range asked for them shows in its flag, unless they are off.
  EXPECT_EQ(HugePagesEligible(data), HugePagesOff() ? 0 : 1);
}

TEST(MappedFileAnonymous, AFillThatFailsReturnsItsStatus) {
  for (size_t size : kSizes) {
    SCOPED_TRACE(size);
    auto mapped = MappedFile::Anonymous(size, [](char*) { return Status::Corruption("no"); });
    ASSERT_FALSE(mapped);
    EXPECT_EQ(mapped.error().code(), StatusCode::kCorruption);
  }
}

TEST(MappedFileAnonymousDeathTest, TheBlockIsReadOnlyOnceFilled) {
  const size_t size = 3 * kHugePage + 12345;
  auto mapped = MappedFile::Anonymous(size, [](char*) { return Status::Ok(); });
  ASSERT_TRUE(mapped) << mapped.error().ToString();
  volatile char* data = const_cast<char*>((*mapped)->bytes().data());
  EXPECT_DEATH(data[size - 1] = 1, "");
  EXPECT_DEATH(data[0] = 1, "");
}

}  // namespace
}  // namespace sessiondb
