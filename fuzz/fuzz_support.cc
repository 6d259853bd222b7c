#include "fuzz_support.h"

#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <system_error>

namespace sessiondb::fuzz {

namespace fs = std::filesystem;

namespace {

// Removes the scratch root at exit (libFuzzer exits through exit() after
// -max_total_time; a crash leaves it for the post-mortem).
struct ScratchCleaner {
  fs::path root;
  ~ScratchCleaner() {
    std::error_code ec;
    if (!root.empty()) fs::remove_all(root, ec);
  }
};

ScratchCleaner& Cleaner() {
  static ScratchCleaner cleaner;
  return cleaner;
}

}  // namespace

void CheckFailed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", file, line, what);
  std::abort();
}

const fs::path& ScratchRoot() {
  ScratchCleaner& cleaner = Cleaner();
  if (cleaner.root.empty()) {
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "sessiondb-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("sessiondb fuzz: mkdtemp");
      std::abort();
    }
    cleaner.root = pattern;
  }
  return cleaner.root;
}

fs::path FreshRunFolder() {
  const fs::path run = ScratchRoot() / "run";
  std::error_code ec;
  fs::remove_all(run, ec);
  fs::create_directories(run, ec);
  if (ec) {
    std::fprintf(stderr, "sessiondb fuzz: cannot create %s: %s\n", run.c_str(),
                 ec.message().c_str());
    std::abort();
  }
  return run;
}

void WriteFileOrDie(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "sessiondb fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

}  // namespace sessiondb::fuzz
