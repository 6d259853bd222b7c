// The `encryption` workload of sessiondb_bench (docs/encryption.md): each
// measure run on a plaintext store and on an encrypted twin in the same run,
// interleaved over six rounds (plain first, then encrypted first, in turn) so
// that drift of the machine falls on both, and printed as a pair of medians
// with the slowdown and the machine's load: W1 (10,000
// durable appends), the batched append (100,000 messages, 1,000 per
// AppendBatch), W3 (load 10,000 messages), W5 (200 appends of a 1 MiB image,
// then reload), keyword search over the 100,000 messages, and the Claude
// Code hook process (PreToolUse recall over 2,000 code writes). On the
// embedded store (sessiondb_bench) or PostgreSQL (sessiondb_pg_bench).
// Thread-safety: single-threaded, like the bench.
#pragma once

#include <filesystem>
#include <string>

namespace sessiondb::bench {

// Runs every pair under `root` (or, with `pg_uri`, in fresh namespaces of
// that PostgreSQL store: a plaintext namespace against an encrypted one) and
// prints one JSON line per pair with both sides' runs and medians, the
// slowdown and the load. `cli` is the sessiondb binary (for the hook). Dies
// on any error.
void RunEncryptionWorkload(const std::filesystem::path& root, const std::string& cli,
                           const std::string& pg_uri = "");

}  // namespace sessiondb::bench
