// Rounds of the same workloads, each engine figure beside the floor measured
// in the same round, summarised as medians and ranges; and the bounds that
// the CI's regression stage holds those medians to.
//
// A round's summary is a JSON object whose keys are figures: either a number
// or {"value", "target", "met"} (see Runner::Summary in bench_main.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace sessiondb::bench {

// {"rounds": N, "<figure>": {"median", "min", "max", "values"[, "target",
// "met_rounds", "met_every_round"]}} over every numeric figure of `summaries`.
nlohmann::json SummariseRounds(const std::vector<nlohmann::json>& summaries);

// A ratio a change must not push past `bound` (a floor when `at_least`).
struct RegressionBound {
  const char* figure;
  double bound;
  bool at_least;
  const char* why;  // what a miss would mean
};

// The bounds of the CI stage: generous, about twice the distance from
// today's figures, so that only a change in the engine crosses them.
const std::vector<RegressionBound>& RegressionBounds();

// Checks the medians of `rounds` (SummariseRounds' result) against
// RegressionBounds(); returns one line per figure that is missing or past its
// bound, empty when all hold.
std::vector<std::string> CheckRegressionBounds(const nlohmann::json& rounds);

}  // namespace sessiondb::bench
