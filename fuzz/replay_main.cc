// The replay test of a fuzz target: runs LLVMFuzzerTestOneInput over every
// file under the folders (or files) named on the command line, in name
// order, as libFuzzer would run a corpus without mutating it. Built in the
// ordinary (g++) build and registered with ctest, so the seed corpus and
// every crash once found and kept (fuzz/regressions/<target>/) are checked
// on each test run, with or without sanitizers. A missing folder is skipped:
// a target may have no regressions yet.
//
// Exit status: 0 when every input ran; a crashing input aborts the process
// (the last "replay:" line on stderr names it).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    const fs::path arg(argv[i]);
    if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
      continue;
    }
    if (!fs::is_directory(arg, ec)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(arg, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name[0] != '.' && name != "README.md") {
        inputs.push_back(entry.path());
      }
    }
  }
  std::sort(inputs.begin(), inputs.end());
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "replay: %zu inputs ran\n", inputs.size());
  return inputs.empty() ? 1 : 0;  // no seeds at all means the paths are wrong
}
