// Latency statistics as WORKLOADS.md section 3 defines them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace sessiondb::bench {

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// This thread's CPU time: what a call costs without the waits for a core
// that a loaded machine adds to its wall time.
inline int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Every thread's CPU time in this process: for work that threads share.
inline int64_t ProcessCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The system's 1-minute load average, or -1 when it cannot be read: every
// figure says how busy the machine was when it was measured.
inline double LoadAverage1m() {
  double load[1] = {-1};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

// Nearest-rank percentile: the ceil(p*n/100)-th smallest, in microseconds.
inline double PercentileUs(std::vector<int64_t> ns, double p) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(ns.size()) / 100.0));
  rank = std::clamp<size_t>(rank, 1, ns.size());
  return static_cast<double>(ns[rank - 1]) / 1000.0;
}

// Median per-call latency in milliseconds (mean of the middle two for even n).
inline double MedianMs(std::vector<int64_t> ns) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  size_t n = ns.size();
  double mid = n % 2 ? static_cast<double>(ns[n / 2])
                     : (static_cast<double>(ns[n / 2 - 1]) + static_cast<double>(ns[n / 2])) / 2;
  return mid / 1e6;
}

}  // namespace sessiondb::bench
