// The crash tests' child process: forked, acknowledging what it made
// durable through a pipe, and killed with SIGKILL at a chosen moment.
//
// Example:
//   KilledChild child = RunChildAndKill(
//       [&](int ack_fd) { AppendUntilKilled(store_dir, ack_fd); }, 30ms);
//   ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;
//   ... every line of child.acks must be in the store ...
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace sessiondb {

struct KilledChild {
  std::string acks;     // everything the child wrote to its pipe
  bool killed = false;  // false: it ended before the kill, with exit_status
  int exit_status = 0;
  int64_t killed_at_ms = 0;  // the wall clock just before the kill (SystemNowMs)
};

// When the time before the kill starts.
enum class KillClock {
  kFromFork,
  // From the child's first byte on its pipe (its first acknowledgment), so
  // that a loaded machine, where a process takes long to start, still kills
  // it mid-write rather than before its first write. A child silent for
  // kFirstAckWait is killed then.
  kFromFirstAck,
};
inline constexpr std::chrono::seconds kFirstAckWait{60};

// Forks a child that runs `body(ack_fd)`, which should not return (it works
// until killed; a return is an _exit(99)). The parent reads the pipe while
// the child runs (so a child that acknowledges much never blocks on a full
// pipe), kills it with SIGKILL `after` the fork or its first acknowledgment
// (`clock`), waits for it, and reads what is left. A failure to fork or wait
// fails the calling test.
KilledChild RunChildAndKill(const std::function<void(int ack_fd)>& body,
                            std::chrono::steady_clock::duration after,
                            KillClock clock = KillClock::kFromFork);

}  // namespace sessiondb
