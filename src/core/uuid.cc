#include "core/uuid.h"

#include <openssl/rand.h>
#include <unistd.h>

#include <chrono>
#include <random>

namespace sessiondb {
namespace {

std::mt19937_64 SeededGenerator() {
  uint64_t seed[2] = {0, 0};
  if (RAND_bytes(reinterpret_cast<unsigned char*>(seed), sizeof(seed)) != 1) {
    seed[0] = std::random_device{}();
    seed[1] = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  std::seed_seq seq{seed[0], seed[0] >> 32, seed[1], seed[1] >> 32};
  return std::mt19937_64(seq);
}

// A per-thread generator seeded from OpenSSL's CSPRNG: ids need uniqueness,
// not secrecy, and a syscall per id would cost more than the append. A
// process forked from this thread inherits the generator's state, so it is
// seeded again in the child (else parent and children make the same ids).
uint64_t NextRandom() {
  thread_local std::mt19937_64 gen = SeededGenerator();
  thread_local pid_t owner = getpid();
  if (const pid_t now = getpid(); now != owner) {
    gen = SeededGenerator();
    owner = now;
  }
  return gen();
}

}  // namespace

std::string NewUuidV7(int64_t unix_ms) {
  unsigned char b[16];
  uint64_t ms = static_cast<uint64_t>(unix_ms) & 0xFFFFFFFFFFFFull;
  for (int i = 0; i < 6; ++i) b[i] = static_cast<unsigned char>(ms >> (8 * (5 - i)));
  uint64_t r1 = NextRandom();
  uint64_t r2 = NextRandom();
  for (int i = 6; i < 16; ++i) {
    uint64_t src = i < 14 ? r1 : r2;
    b[i] = static_cast<unsigned char>(src >> (8 * (i % 8)));
  }
  b[6] = static_cast<unsigned char>(0x70 | (b[6] & 0x0F));  // version 7
  b[8] = static_cast<unsigned char>(0x80 | (b[8] & 0x3F));  // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0x0F];
  }
  return out;
}

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace sessiondb
