// What every fuzz target shares: the bytes as a string_view, a check that
// aborts (so libFuzzer and the replay test both report it as a crash), and a
// scratch folder and store that live as long as the process.
//
// A target is one function, LLVMFuzzerTestOneInput, in its own file. It is
// built twice: with clang's libFuzzer (SESSIONDB_BUILD_FUZZ=ON,
// scripts/fuzz.sh), and in the ordinary build linked with replay_main.cc,
// which runs it over the target's seed corpus and its kept regressions
// (fuzz/corpus/<target>, fuzz/regressions/<target>) as a ctest test.
// docs/fuzzing.md says how to run, triage and keep a crash.
//
// Thread-safety: single-threaded, like libFuzzer's runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "sessiondb/store.h"

// A property every input must keep. Not assert(): it stays on in release
// builds, and the message says which property broke.
#define FUZZ_CHECK(cond)                                                    \
  do {                                                                      \
    if (!(cond)) ::sessiondb::fuzz::CheckFailed(#cond, __FILE__, __LINE__); \
  } while (0)

namespace sessiondb::fuzz {

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Prints the broken property and aborts.
[[noreturn]] void CheckFailed(const char* what, const char* file, int line);

// A fresh folder under $TMPDIR, removed when the process exits normally.
const std::filesystem::path& ScratchRoot();

// A new empty folder under ScratchRoot(), for one run's input files; the
// previous one handed out is removed first (one run at a time).
std::filesystem::path FreshRunFolder();

// A store under ScratchRoot() (crash-safe durability: no fsync), shared by
// the runs. Every `runs_per_store` calls it is thrown away and made anew, so
// a long fuzzing session does not slow down as the store grows.
Store& RecycledStore(int runs_per_store = 2000);

// The folder of the store RecycledStore() last returned.
const std::filesystem::path& RecycledStorePath();

// Writes `bytes` to `path`, creating its folders; aborts if it cannot.
void WriteFileOrDie(const std::filesystem::path& path, std::string_view bytes);

}  // namespace sessiondb::fuzz
