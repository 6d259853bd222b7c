// Strict numbers on the command line: every numeric option of `sessiondb`
// takes decimal digits only ("12", never "0x2", "1e3", "+3", " 4" or "-1")
// within a range it names, and a value that is not one is an invalid
// argument (exit 2) whose message names the option and the range. CLI11 by
// itself reads "0x2" as 2 and says a negative seq is out of "0 to 1.8e308".
//
// Example:
//   cmd->add_option("--to", args->to, "Last seq")->check(NumberIn(0, kMaxSeq));
//   cmd->add_option("--max-body", o.max_body_bytes)->transform(CLI::AsSizeValue(true));
//   ...
//   RequireStrictNumbers(app);  // once every verb is added
//
// Thread-safety: builds CLI11 validators; used while the command is set up.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <limits>

namespace sessiondb::cli {

// The largest seq or count an option takes: what an int64 holds.
inline constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();

// Accepts decimal digits whose value is from `min` to `max`; otherwise says
// "must be a whole number from MIN to MAX, in decimal digits (got 'TEXT')".
// Named "DECIMAL" (RequireStrictNumbers looks for it).
CLI::Validator NumberIn(int64_t min, int64_t max);

// Accepts decimal digits with at most one '.' ("1.5", "30", never "1e3",
// "inf" or "-0") whose value is from `min` to `max`. Also named "DECIMAL".
CLI::Validator FractionIn(double min, double max);

// Walks every option of `app` and of its verbs: an integer option (CLI11's
// type INT or UINT) without NumberIn gets NumberIn(0, INT32_MAX), the range
// every type holds; a size option (CLI::AsSizeValue: "256MiB") gets a check,
// before the unit is read, that its number is decimal digits, and NumberIn(1,
// INT64_MAX) after; a floating-point one gets FractionIn(0, 1e9). Call once, after every verb is
// added.
void RequireStrictNumbers(CLI::App& app);

}  // namespace sessiondb::cli
