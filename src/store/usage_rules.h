// Usage and cost (docs/usage.md): the UTC day a turn is counted under, the
// dated price table (shipped, and a file that overrides it), and the
// summary of a Store::GetUsageSummary built from the backend's usage_days
// rows, once for both backends.
//
// Example:
//   ASSIGN_OR_RETURN(PriceTable prices, PriceTable::Load(query.prices_path));
//   std::optional<double> usd = prices.Cost("anthropic", "claude-sonnet-4-5", "2025-10-01", u);
//
// Thread-safety: pure functions; a PriceTable is immutable once made.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/types.h"
#include "store/backend.h"

namespace sessiondb::store {

// The most bytes a price file may hold, and the most entries.
inline constexpr int64_t kMaxPriceFileBytes = 1 << 20;
inline constexpr size_t kMaxPriceEntries = 10'000;
// The most session ids a usage query may name.
inline constexpr size_t kMaxUsageSessions = 500;

// "YYYY-MM-DD", the UTC day of ts_ms (milliseconds since the Unix epoch).
std::string UtcDay(int64_t ts_ms);

// True if `day` is a calendar day written "YYYY-MM-DD" (years 1970-9999).
bool IsUtcDay(std::string_view day);

// One dated price, in USD per million tokens.
struct Price {
  std::string provider;  // empty: any provider
  std::string model;     // exact, or a prefix ending in '*'
  std::string from;      // "YYYY-MM-DD": the first day it applies
  double input = 0;      // uncached input
  double output = 0;     // output, reasoning included
  double cached_read = 0;
  double cache_write = 0;
};

// The shipped prices with, optionally, a file's entries that win over them.
class PriceTable {
 public:
  // The shipped table alone.
  PriceTable();

  // The shipped table and the entries of the file at `path` (empty:
  // $SESSIONDB_PRICES if set, else none). kInvalidArgument naming the file
  // and the entry for a malformed file, one past kMaxPriceFileBytes or
  // kMaxPriceEntries; kNotFound if it cannot be read.
  static Result<PriceTable> Load(const std::string& path);

  // The entries of a price file's text (docs/usage.md), `name` naming it in
  // errors. kInvalidArgument as Load.
  static Result<std::vector<Price>> ParseFile(std::string_view text, std::string_view name);

  // The price of a turn of `provider` and `model` on `day`: among the entries
  // whose provider matches (an empty one on either side matches any) and whose
  // model matches, with `from` on or before `day`, an override's first, then
  // the most specific model (exact, then the longest prefix), then the latest
  // `from`. nullptr: no price.
  const Price* Find(std::string_view provider, std::string_view model, std::string_view day) const;

  // The cost in USD of `usage` at `price` (docs/usage.md's formula).
  static double Cost(const Price& price, const Usage& usage);

  // The day the shipped table was last checked against the providers' lists.
  static std::string_view ShippedAsOf();

 private:
  std::vector<Price> overrides_;
};

// The summary `query` asks for, from the rows of LoadUsageDays (already
// filtered by day and session) and the metadata of their sessions.
UsageSummary SummarizeUsage(const UsageDays& days, const UsageQuery& query,
                            const PriceTable& prices);

// kInvalidArgument naming what is wrong with `query` (a day not
// "YYYY-MM-DD", since after until, more than kMaxUsageSessions ids, a group
// named twice).
Status CheckUsageQuery(const UsageQuery& query);

}  // namespace sessiondb::store
