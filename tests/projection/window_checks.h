// The property "every window replays", for any store: every window a
// harness may ask for of every session projects, in all three shapes, to a
// request the provider validators (request_validators.h) accept, and no
// projection holds reasoning text outside the blocks that carry it back to
// its own provider. The windows of a session: all of it, what
// ReadForProjection gives (from the last compaction on), the last N events
// for every N, random ranges of the log, forks at random points (with a new
// message), and random compactions and prunes of a copy of it.
//
// The checks add sessions (forks, copies) to the store they are given, so
// call them last. Random choices come from a fixed seed: a failure repeats.
// Used by every_window_replays_test.cc and by the importer suites of
// tests/interop on their own samples.
//
// Example:
//   ExpectEveryWindowReplays(*store, "claude-code sample");
#pragma once

#include <map>
#include <random>
#include <span>
#include <string>

#include "sessiondb/store.h"

namespace sessiondb::testing {

// In a reasoning text of a history, and in no other text of it.
inline constexpr char kReasoningMarker[] = "PRIVATE-REASONING-7f3a";

class WindowChecker {
 public:
  // Every session the store holds, each labelled `label` and its id.
  void CheckStore(Store& store, const std::string& label);
  // One window: projected in every shape, each request validated.
  void CheckWindow(Store& store, std::span<const Event> events, const std::string& label);

  int sessions() const { return sessions_; }
  int projections() const { return projections_; }
  int empty() const { return empty_; }      // windows that projected to nothing
  int invalid() const { return invalid_; }  // requests a validator refused
  // Anthropic thinking blocks ("thinking") and Responses reasoning items
  // ("reasoning") the projections sent back.
  int replayed(const std::string& type) const {
    auto it = replayed_.find(type);
    return it == replayed_.end() ? 0 : it->second;
  }

 private:
  void CheckSession(Store& store, const std::string& id, const std::string& label);
  void CheckForks(Store& store, const std::string& id, const std::vector<Event>& events,
                  const std::string& label);
  void CheckCompactions(Store& store, const std::string& id, const std::vector<Event>& events,
                        const std::string& label);
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::mt19937_64 rng_{0x5e551011};
  int sessions_ = 0;
  int projections_ = 0;
  int empty_ = 0;
  int invalid_ = 0;
  std::map<std::string, int> replayed_;
};

// WindowChecker::CheckStore, and no request refused.
void ExpectEveryWindowReplays(Store& store, const std::string& label);

}  // namespace sessiondb::testing
