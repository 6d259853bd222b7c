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
// compared on every draw instead, as before.
class ThreadGenerator {
 public:
  ThreadGenerator() {
    void* page = mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
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

  uint64_t Next() {
    if (!wiped_on_fork_) {
      if (const pid_t now = getpid(); now != owner_) {
        state_->seeded = 0;
        owner_ = now;
      }
    }
    if (state_->seeded == 0) {
      // mt19937_64 is trivially destructible: the zeroed bytes need no destructor.
      new (&state_->gen) std::mt19937_64(SeededGenerator());
      state_->seeded = 1;
    }
    return state_->gen();
  }

 private:
  struct State {
    uint64_t seeded = 0;  // 0 in a fresh page and in a forked child's copy
    std::mt19937_64 gen;
  };
  static constexpr size_t kPageBytes = 4096;
  static_assert(sizeof(State) <= kPageBytes);

  State* state_ = nullptr;
  bool wiped_on_fork_ = false;
  pid_t owner_ = 0;  // the fallback's process; no process has pid 0
};

uint64_t NextRandom() {
  thread_local ThreadGenerator generator;
  return generator.Next();
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
