#include "core/uuid.h"

#include <openssl/rand.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <new>
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

// A thread's generator, seeded from OpenSSL's CSPRNG: ids need uniqueness,
// not secrecy, and a syscall per id would cost more than the append. A
// process forked from this thread inherits the generator's state, so the
// child must seed it again (else parent and children make the same ids).
// The state lives in a page the kernel zeroes in a forked child
// (MADV_WIPEONFORK, any fork, however made): a zero `seeded` means seed
// again, with no syscall per id. Where the kernel lacks it, getpid() is
// compared on every id instead, as before.
//
// The ids one thread makes within a millisecond ascend (RFC 9562's
// monotonic random, method 2): the 74 random bits of the first are drawn,
// each next one adds a random step of 1 to 65,536 to them. The log's id
// index then takes a batch's ids at its right edge, packing its pages,
// instead of at random places among the millisecond's earlier ones.
class ThreadGenerator {
 public:
  ThreadGenerator() {
    void* page =
        mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED && madvise(page, kPageBytes, MADV_WIPEONFORK) == 0) {
      state_ = static_cast<State*>(page);  // zeroed: seeded on first use
      wiped_on_fork_ = true;
    } else {
      if (page != MAP_FAILED) munmap(page, kPageBytes);
      state_ = new State{};
    }
  }
  ~ThreadGenerator() {
    if (wiped_on_fork_) {
      munmap(state_, kPageBytes);
    } else {
      delete state_;
    }
  }
  ThreadGenerator(const ThreadGenerator&) = delete;
  ThreadGenerator& operator=(const ThreadGenerator&) = delete;

  // The 74 random bits of the next id for `ms`: 12 in `*rand_a`, 62 in `*rand_b`.
  void Next(uint64_t ms, uint64_t* rand_a, uint64_t* rand_b) {
    if (!wiped_on_fork_) {
      if (const pid_t now = getpid(); now != owner_) {
        state_->seeded = 0;
        owner_ = now;
      }
    }
    State& s = *state_;
    if (s.seeded == 0) {
      // mt19937_64 is trivially destructible: the zeroed bytes need no destructor.
      new (&s.gen) std::mt19937_64(SeededGenerator());
      s.seeded = 1;
      s.has_last = 0;
    }
    constexpr uint64_t kRandB = (uint64_t{1} << 62) - 1;
    if (s.has_last != 0 && ms == s.last_ms) {
      s.rand_b += 1 + (s.gen() >> 48);
      if (s.rand_b > kRandB) {
        s.rand_b &= kRandB;
        ++s.rand_a;
      }
    }
    // A new millisecond, or a step past the 74 bits (drawn below 2^73, the
    // counter would need 2^57 ids in one millisecond to get there).
    if (s.has_last == 0 || ms != s.last_ms || s.rand_a > 0xFFF) {
      s.rand_a = s.gen() & 0x7FF;  // the top bit clear: room to count up
      s.rand_b = s.gen() & kRandB;
    }
    s.last_ms = ms;
    s.has_last = 1;
    *rand_a = s.rand_a;
    *rand_b = s.rand_b;
  }

 private:
  struct State {
    uint64_t seeded = 0;  // 0 in a fresh page and in a forked child's copy
    uint64_t has_last = 0;
    uint64_t last_ms = 0;
    uint64_t rand_a = 0;
    uint64_t rand_b = 0;
    std::mt19937_64 gen;
  };
  static constexpr size_t kPageBytes = 4096;
  static_assert(sizeof(State) <= kPageBytes);

  State* state_ = nullptr;
  bool wiped_on_fork_ = false;
  pid_t owner_ = 0;  // the fallback's process; no process has pid 0
};

}  // namespace

std::string NewUuidV7(int64_t unix_ms) {
  thread_local ThreadGenerator generator;
  const uint64_t ms = static_cast<uint64_t>(unix_ms) & 0xFFFFFFFFFFFFull;
  uint64_t rand_a = 0, rand_b = 0;
  generator.Next(ms, &rand_a, &rand_b);
  unsigned char b[16];
  for (int i = 0; i < 6; ++i) b[i] = static_cast<unsigned char>(ms >> (8 * (5 - i)));
  b[6] = static_cast<unsigned char>(0x70 | (rand_a >> 8));  // version 7
  b[7] = static_cast<unsigned char>(rand_a);
  b[8] = static_cast<unsigned char>(0x80 | (rand_b >> 56));  // variant 10
  for (int i = 9; i < 16; ++i) b[i] = static_cast<unsigned char>(rand_b >> (8 * (15 - i)));
  static constexpr char kHex[] = "0123456789abcdef";
  char out[36];
  size_t n = 0;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[n++] = '-';
    out[n++] = kHex[b[i] >> 4];
    out[n++] = kHex[b[i] & 0x0F];
  }
  return std::string(out, sizeof(out));
}

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace sessiondb
