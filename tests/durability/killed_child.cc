#include "durability/killed_child.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "core/uuid.h"
#include "gtest/gtest.h"

namespace sessiondb {
namespace {

// Appends what `fd` holds to `out` until `deadline` (or, with none, until
// the writer's end closes). With `first_only`, returns as soon as something
// was read (or the deadline passed, or the writer's end closed).
void Drain(int fd, const std::chrono::steady_clock::time_point* deadline, std::string* out,
           bool first_only = false) {
  char buf[16384];
  while (true) {
    int timeout_ms = -1;
    if (deadline != nullptr) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      timeout_ms = static_cast<int>(left.count());
    }
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, timeout_ms) <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) {
      if (deadline == nullptr || first_only) return;
      // The child closed its end early: wait out the time without spinning.
      std::this_thread::sleep_until(*deadline);
      return;
    }
    out->append(buf, static_cast<size_t>(n));
    if (first_only) return;
  }
}

}  // namespace

KilledChild RunChildAndKill(const std::function<void(int ack_fd)>& body,
                            std::chrono::steady_clock::duration after, KillClock clock) {
  KilledChild child;
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return child;
  }
  auto deadline = std::chrono::steady_clock::now() + after;
  const pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork failed";
    close(fds[0]);
    close(fds[1]);
    return child;
  }
  if (pid == 0) {
    close(fds[0]);
    body(fds[1]);
    _exit(99);
  }
  close(fds[1]);
  if (clock == KillClock::kFromFirstAck) {
    const auto first_ack_by = std::chrono::steady_clock::now() + kFirstAckWait;
    Drain(fds[0], &first_ack_by, &child.acks, /*first_only=*/true);
    deadline = std::chrono::steady_clock::now() + after;
  }
  Drain(fds[0], &deadline, &child.acks);
  child.killed_at_ms = SystemNowMs();
  kill(pid, SIGKILL);  // it may have ended already: `killed` says
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) ADD_FAILURE() << "waitpid failed";
  child.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  child.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  Drain(fds[0], nullptr, &child.acks);
  close(fds[0]);
  return child;
}

}  // namespace sessiondb
