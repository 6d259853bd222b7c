#include "rounds.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace sessiondb::bench {

using nlohmann::json;

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

json SummariseRounds(const std::vector<json>& summaries) {
  struct Figure {
    std::vector<double> values;
    json target;  // null when the figure has none
    int met = 0;
  };
  std::map<std::string, Figure> figures;
  for (const json& s : summaries) {
    for (const auto& [key, v] : s.items()) {
      Figure& f = figures[key];
      if (v.is_number()) {
        f.values.push_back(v.get<double>());
      } else if (v.is_object() && v.contains("value") && v["value"].is_number()) {
        f.values.push_back(v["value"].get<double>());
        f.target = v["target"];
        if (v.value("met", false)) ++f.met;
      }
    }
  }
  json out = {{"workload", "rounds"}, {"rounds", summaries.size()}};
  for (auto& [key, f] : figures) {
    if (f.values.empty()) continue;
    json j = {{"median", Median(f.values)},
              {"min", *std::min_element(f.values.begin(), f.values.end())},
              {"max", *std::max_element(f.values.begin(), f.values.end())},
              {"values", f.values}};
    if (!f.target.is_null()) {
      j["target"] = f.target;
      j["met_rounds"] = f.met;
      j["met_every_round"] = f.met == static_cast<int>(f.values.size());
    }
    out[key] = j;
  }
  return out;
}

const std::vector<RegressionBound>& RegressionBounds() {
  // Today's medians on the 2-core VM (docs/benchmarks.md, issue 40): W1 1.2–1.3,
  // W3 1.2–1.3 (its visit 0.95); W5 and the batched append, each interleaved
  // with its floor, 0.75–0.90 and 0.91–0.95.
  static const std::vector<RegressionBound> kBounds = {
      {"w1_p50_over_fdatasync_p50", 2.5, false,
       "a durable append costs far more than the disk's flush"},
      {"w3_over_build_messages_floor", 2.0, false,
       "loading a session costs twice building its messages"},
      {"w3_visit_over_build_messages_floor", 2.0, false,
       "visiting a session's messages costs twice building them"},
      {"w5_interleaved_over_pipelined_floor", 0.45, true,
       "image ingest fell to under half of the pipelined floor"},
      {"batch_interleaved_over_sqlite_same_layout", 0.6, true,
       "a batched append costs far more than SQLite writing the same rows"},
  };
  return kBounds;
}

std::vector<std::string> CheckRegressionBounds(const json& rounds) {
  std::vector<std::string> misses;
  for (const RegressionBound& b : RegressionBounds()) {
    if (!rounds.contains(b.figure)) {
      misses.push_back(std::string(b.figure) + ": not measured (run its workload and floors)");
      continue;
    }
    const double median = rounds[b.figure]["median"].get<double>();
    const bool held = b.at_least ? median >= b.bound : median <= b.bound;
    if (held) continue;
    std::ostringstream line;
    line << b.figure << ": median " << median << (b.at_least ? " < " : " > ") << b.bound << " ("
         << b.why << ")";
    misses.push_back(line.str());
  }
  return misses;
}

}  // namespace sessiondb::bench
