// What the hook's code checkpoints cost (docs/memory.md, "What the hook
// keeps"; issue 39): the `sessiondb hook claude-code` process with
// checkpoints on and with --no-checkpoints, run in turn in one loop (with
// /bin/true and the empty process of the same linkage between them) so a
// machine that gets busier weighs on both alike; and the bytes 1,000 edits
// to 50 files store against the bytes of their distinct contents.
//
// The calls measured, on a folder of 50 source files of 8 KiB:
//   PreToolUse of an Edit: the file read, hashed and kept as a "before"
//     version (the file changes between runs, as it would between edits,
//     so each run keeps a new blob);
//   PostToolUse of a Bash call: the shell check, which reads and hashes the
//     50 files the session has versions of (none changed).
//
// Thread-safety: single-threaded, like the bench.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sessiondb::bench {

struct ProcessCost {
  int64_t wall_ns = 0;
  int64_t cpu_ns = 0;  // user and system
};

// Runs args (args[0] the program) with stdin from `stdin_path`; dies when
// it fails (a hook must always exit 0).
using ProcessRunner =
    std::function<ProcessCost(std::vector<std::string> args, const std::string& stdin_path)>;

struct CheckpointHookBench {
  std::string cli;            // the sessiondb binary
  std::string store;          // its --store (a folder or a postgresql:// URI)
  std::string empty_process;  // the floor of the same linkage
  std::filesystem::path dir;  // scratch: the project folder and the events
  int runs = 50;              // of each kind
};

// Runs the pairs and returns one JSON object per call kind:
// {"measure": "hook_checkpoints_<kind>", "on_p50_ms", "off_p50_ms",
//  "on_cpu_p50_ms", "off_cpu_p50_ms", "added_p50_ms", "added_cpu_p50_ms",
//  "floor_bin_true_p50_ms", "floor_same_linkage_p50_ms", ...}.
std::vector<nlohmann::json> MeasureCheckpointHook(const CheckpointHookBench& bench,
                                                  const ProcessRunner& run);

// 1,000 edits (a line changed each) to 50 files of 8 KiB, each kept "before"
// and "after" through Store::RecordFileVersion in a fresh store under
// `dir`: {"measure": "checkpoint_storage", "blob_bytes", "distinct_bytes",
// "blob_over_distinct", "target": 1.1, "met", ...}.
nlohmann::json MeasureCheckpointStorage(const std::filesystem::path& dir);

}  // namespace sessiondb::bench
