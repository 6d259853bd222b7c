// The deterministic data of the standard workloads (shared/bench/WORKLOADS.md
// section 1): SplitMix64, the 256-word list, message texts, the W1/W2/W5
// streams and the W5 PNG images, byte-identical to the reference gen.py.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sessiondb::bench {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();

 private:
  uint64_t state_;
};

struct WorkloadMessage {
  std::string session_id;
  std::string role;  // "user" or "assistant"
  std::string text;
};

// One ~500-byte message; the order of draws follows WORKLOADS.md 1.3.
std::string MessageText(SplitMix64& rng);

std::vector<WorkloadMessage> W1Messages();  // 10,000 in w1-s0
std::vector<WorkloadMessage> W2Messages();  // 1,000 sessions x 20, session-major
std::vector<WorkloadMessage> W5Messages();  // 200 in w5-s0, all user
std::string W5Image(uint32_t index);        // valid PNG, exactly 1 MiB

// SHA-256 over "session_id\trole\ttext\n" per message (WORKLOADS.md 1.6).
std::string TextDigest(const std::vector<WorkloadMessage>& messages);

inline constexpr size_t kW5ImageBytes = 1 << 20;
inline constexpr int kW5Images = 200;

}  // namespace sessiondb::bench
