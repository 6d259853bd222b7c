#include "store/usage_rules.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/project_path.h"
#include "store/store_common.h"

namespace sessiondb::store {
namespace {

using nlohmann::json;

// The shipped prices, USD per million tokens, from the providers' price
// lists (anthropic.com/pricing, openai.com/api/pricing). Anthropic's cache
// write is the 5-minute write; OpenAI bills no cache write (its price is the
// input's). A new price is a new entry with a later `from`, never an edit:
// turns keep the price of their day.
constexpr std::string_view kShippedAsOf = "2025-11-24";
struct ShippedPrice {
  const char* provider;
  const char* model;
  const char* from;
  double input, output, cached_read, cache_write;
};
constexpr ShippedPrice kShipped[] = {
    {"anthropic", "claude-opus-4-5*", "2025-11-24", 5, 25, 0.50, 6.25},
    {"anthropic", "claude-opus-4-1*", "2025-08-05", 15, 75, 1.50, 18.75},
    {"anthropic", "claude-opus-4*", "2025-05-22", 15, 75, 1.50, 18.75},
    {"anthropic", "claude-sonnet-4-5*", "2025-09-29", 3, 15, 0.30, 3.75},
    {"anthropic", "claude-sonnet-4*", "2025-05-22", 3, 15, 0.30, 3.75},
    {"anthropic", "claude-3-7-sonnet*", "2025-02-24", 3, 15, 0.30, 3.75},
    {"anthropic", "claude-haiku-4-5*", "2025-10-15", 1, 5, 0.10, 1.25},
    {"anthropic", "claude-3-5-haiku*", "2024-11-04", 0.80, 4, 0.08, 1},
    {"openai", "gpt-4o*", "2024-05-13", 5, 15, 5, 5},
    {"openai", "gpt-4o*", "2024-10-02", 2.50, 10, 1.25, 2.50},
    {"openai", "gpt-4o-2024-05-13", "2024-05-13", 5, 15, 5, 5},
    {"openai", "gpt-4o-mini*", "2024-07-18", 0.15, 0.60, 0.075, 0.15},
    {"openai", "gpt-4.1*", "2025-04-14", 2, 8, 0.50, 2},
    {"openai", "gpt-4.1-mini*", "2025-04-14", 0.40, 1.60, 0.10, 0.40},
    {"openai", "gpt-4.1-nano*", "2025-04-14", 0.10, 0.40, 0.025, 0.10},
    {"openai", "o3*", "2025-04-16", 10, 40, 2.50, 10},
    {"openai", "o3*", "2025-06-10", 2, 8, 0.50, 2},
    {"openai", "o3-mini*", "2025-01-31", 1.10, 4.40, 0.55, 1.10},
    {"openai", "o4-mini*", "2025-04-16", 1.10, 4.40, 0.275, 1.10},
    {"openai", "gpt-5*", "2025-08-07", 1.25, 10, 0.125, 1.25},
    {"openai", "gpt-5-mini*", "2025-08-07", 0.25, 2, 0.025, 0.25},
    {"openai", "gpt-5-nano*", "2025-08-07", 0.05, 0.40, 0.005, 0.05},
    {"openai", "gpt-5-codex*", "2025-09-15", 1.25, 10, 0.125, 1.25},
    {"openai", "codex-mini-latest", "2025-05-16", 1.50, 6, 0.375, 1.50},
};

const std::vector<Price>& Shipped() {
  static const std::vector<Price> prices = [] {
    std::vector<Price> out;
    for (const ShippedPrice& p : kShipped) {
      out.push_back({p.provider, p.model, p.from, p.input, p.output, p.cached_read, p.cache_write});
    }
    return out;
  }();
  return prices;
}

// How well `pattern` matches `model`: -1 not at all, else the length of what
// it names (an exact name beats every prefix).
int MatchLength(std::string_view pattern, std::string_view model) {
  if (!pattern.empty() && pattern.back() == '*') {
    pattern.remove_suffix(1);
    return model.starts_with(pattern) ? static_cast<int>(pattern.size()) : -1;
  }
  return pattern == model ? 1 << 20 : -1;
}

// The best of `prices` for the turn (see PriceTable::Find), or nullptr.
const Price* Best(const std::vector<Price>& prices, std::string_view provider,
                  std::string_view model, std::string_view day) {
  const Price* best = nullptr;
  int best_length = -1;
  for (const Price& p : prices) {
    if (!p.provider.empty() && !provider.empty() && p.provider != provider) continue;
    if (p.from > day) continue;
    const int length = MatchLength(p.model, model);
    if (length < 0) continue;
    if (length > best_length || (length == best_length && p.from > best->from)) {
      best = &p;
      best_length = length;
    }
  }
  return best;
}

Status FileError(std::string_view name, const std::string& what) {
  return Status::InvalidArgument("price file " + std::string(name) + ": " + what +
                                 " (docs/usage.md)");
}

// The month "YYYY-MM" of a day.
std::string MonthOf(const std::string& day) { return day.substr(0, 7); }

void AddMetrics(UsageMetrics* to, int64_t turns, const Usage& usage, std::optional<double> cost) {
  to->turns = SaturatingAdd(to->turns, turns);
  to->usage = SaturatingAdd(to->usage, usage);
  if (cost) {
    to->cost_usd += *cost;
  } else {
    to->unpriced_turns = SaturatingAdd(to->unpriced_turns, turns);
  }
}

}  // namespace

std::string UtcDay(int64_t ts_ms) {
  std::time_t seconds = static_cast<std::time_t>(ts_ms / 1000 - (ts_ms % 1000 < 0 ? 1 : 0));
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char out[48];  // room for any int: the compiler cannot know the ranges
  std::snprintf(out, sizeof out, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  return out;
}

bool IsUtcDay(std::string_view day) {
  if (day.size() != 10 || day[4] != '-' || day[7] != '-') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (day[i] < '0' || day[i] > '9') return false;
  }
  const int year = std::atoi(std::string(day.substr(0, 4)).c_str());
  const int month = (day[5] - '0') * 10 + (day[6] - '0');
  const int d = (day[8] - '0') * 10 + (day[9] - '0');
  if (year < 1970 || month < 1 || month > 12 || d < 1) return false;
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return d <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

PriceTable::PriceTable() = default;

std::string_view PriceTable::ShippedAsOf() { return kShippedAsOf; }

Result<std::vector<Price>> PriceTable::ParseFile(std::string_view text, std::string_view name) {
  if (static_cast<int64_t>(text.size()) > kMaxPriceFileBytes) {
    return Err(FileError(name, "holds more than " + std::to_string(kMaxPriceFileBytes) +
                                   " bytes; the limit is " + std::to_string(kMaxPriceFileBytes)));
  }
  Result<json> doc = ParseJson(text, 8);
  if (!doc) return Err(FileError(name, "is not JSON: " + doc.error().message()));
  const json& list = doc->is_object() ? MemberOf(*doc, "prices") : *doc;
  if (!list.is_array()) {
    return Err(FileError(name, "must be {\"prices\": [...]} or an array of prices"));
  }
  if (list.size() > kMaxPriceEntries) {
    return Err(FileError(name, "has " + std::to_string(list.size()) + " prices; the limit is " +
                                   std::to_string(kMaxPriceEntries)));
  }
  std::vector<Price> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    const std::string where = "price " + std::to_string(i + 1);
    if (!e.is_object()) return Err(FileError(name, where + " is not an object"));
    for (const auto& [key, value] : e.items()) {
      static const std::set<std::string> kKnown = {"provider", "model",       "from",       "input",
                                                   "output",   "cached_read", "cache_write"};
      if (!kKnown.contains(key))
        return Err(FileError(name, where + " has unknown field \"" + key + "\""));
    }
    Price p;
    auto text_field = [&](const char* key, bool required, std::string* to) -> Status {
      const json& v = MemberOf(e, key);
      if (v.is_null() && !required) return Status::Ok();
      if (!v.is_string() || (required && v.get_ref<const std::string&>().empty())) {
        return FileError(name, where + ": \"" + key + "\" must be a non-empty string");
      }
      *to = v.get<std::string>();
      if (to->size() > 200) return FileError(name, where + ": \"" + key + "\" is too long");
      return Status::Ok();
    };
    auto price_field = [&](const char* key, bool required, double* to) -> Status {
      const json& v = MemberOf(e, key);
      if (v.is_null() && !required) return Status::Ok();
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
          v.get<double>() > 1e6) {
        return FileError(name, where + ": \"" + key +
                                   "\" must be a number of USD per million tokens, 0 to 1000000");
      }
      *to = v.get<double>();
      return Status::Ok();
    };
    RETURN_IF_ERROR(text_field("provider", false, &p.provider));
    RETURN_IF_ERROR(text_field("model", true, &p.model));
    RETURN_IF_ERROR(text_field("from", true, &p.from));
    if (!IsUtcDay(p.from)) {
      return Err(FileError(name, where + ": \"from\" is '" + p.from + "'; expected YYYY-MM-DD"));
    }
    RETURN_IF_ERROR(price_field("input", true, &p.input));
    RETURN_IF_ERROR(price_field("output", true, &p.output));
    // Unset: cache reads and writes cost what input does.
    p.cached_read = p.cache_write = p.input;
    RETURN_IF_ERROR(price_field("cached_read", false, &p.cached_read));
    RETURN_IF_ERROR(price_field("cache_write", false, &p.cache_write));
    out.push_back(std::move(p));
  }
  return out;
}

Result<PriceTable> PriceTable::Load(const std::string& path) {
  std::string file = path;
  if (file.empty()) {
    const char* env = std::getenv("SESSIONDB_PRICES");
    if (env == nullptr || *env == '\0') return PriceTable();
    file = env;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return Err(Status::NotFound("price file " + file + " cannot be read"));
  // Read at most one byte past the cap: a huge file is refused, not loaded.
  std::string text(static_cast<size_t>(kMaxPriceFileBytes) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return Err(Status::Io("price file " + file + " cannot be read"));
  PriceTable table;
  ASSIGN_OR_RETURN(table.overrides_, ParseFile(text, file));
  return table;
}

const Price* PriceTable::Find(std::string_view provider, std::string_view model,
                              std::string_view day) const {
  if (const Price* p = Best(overrides_, provider, model, day)) return p;
  return Best(Shipped(), provider, model, day);
}

double PriceTable::Cost(const Price& price, const Usage& u) {
  // input_tokens is the whole input: cached reads and cache writes inside it.
  const double uncached = std::max<double>(0, static_cast<double>(u.input_tokens) -
                                                  static_cast<double>(u.cached_tokens) -
                                                  static_cast<double>(u.cache_write_tokens));
  return (uncached * price.input + static_cast<double>(u.output_tokens) * price.output +
          static_cast<double>(u.cached_tokens) * price.cached_read +
          static_cast<double>(u.cache_write_tokens) * price.cache_write) /
         1e6;
}

Status CheckUsageQuery(const UsageQuery& query) {
  for (const auto& [name, day] : {std::pair<const char*, const std::string*>{"since", &query.since},
                                  {"until", &query.until}}) {
    if (!day->empty() && !IsUtcDay(*day)) {
      return Status::InvalidArgument(std::string(name) + " is '" + day->substr(0, 40) +
                                     "'; expected a day YYYY-MM-DD");
    }
  }
  if (!query.since.empty() && !query.until.empty() && query.since > query.until) {
    return Status::InvalidArgument("since " + query.since + " is after until " + query.until);
  }
  if (query.session_ids.size() > kMaxUsageSessions) {
    return Status::InvalidArgument("the query names " + std::to_string(query.session_ids.size()) +
                                   " sessions; the limit is " + std::to_string(kMaxUsageSessions));
  }
  std::set<UsageGroup> seen;
  for (UsageGroup g : query.group) {
    if (!seen.insert(g).second) {
      return Status::InvalidArgument("usage group '" + std::string(UsageGroupName(g)) +
                                     "' is named twice");
    }
  }
  return Status::Ok();
}

UsageSummary SummarizeUsage(const UsageDays& days, const UsageQuery& query,
                            const PriceTable& prices) {
  const std::string project =
      query.project.empty() ? std::string() : NormalProjectPath(query.project);
  std::map<std::string, std::string> project_of;
  for (const auto& [id, metadata] : days.metadata_of) {
    Result<json> m = ParseJson(metadata);
    project_of[id] = m && m->is_object() ? MemberOr(*m, "project", "") : "";
  }
  // Keyed by the group keys in the query's order: the rows come out sorted.
  std::map<std::vector<std::string>, UsageRow> rows;
  UsageSummary summary;
  for (const UsageDayRow& d : days.rows) {
    const std::string& session_project = project_of[d.session_id];
    if (!project.empty() && session_project != project) continue;
    std::optional<double> cost;
    if (const Price* p = prices.Find(d.provider, d.model, d.day)) {
      cost = PriceTable::Cost(*p, d.usage);
    }
    std::vector<std::string> key;
    UsageRow row;
    for (UsageGroup g : query.group) {
      switch (g) {
        case UsageGroup::kDay:
          key.push_back(row.day = d.day);
          break;
        case UsageGroup::kMonth:
          key.push_back(row.month = MonthOf(d.day));
          break;
        case UsageGroup::kProject:
          key.push_back(row.project = session_project);
          break;
        case UsageGroup::kModel:
          key.push_back(row.model = d.model);
          break;
        case UsageGroup::kProvider:
          key.push_back(row.provider = d.provider);
          break;
        case UsageGroup::kSession:
          key.push_back(row.session_id = d.session_id);
          break;
      }
    }
    auto it = rows.try_emplace(key, std::move(row)).first;
    AddMetrics(&it->second.metrics, d.turns, d.usage, cost);
    AddMetrics(&summary.total, d.turns, d.usage, cost);
  }
  if (!query.group.empty()) {
    for (auto& [key, row] : rows) summary.rows.push_back(std::move(row));
  }
  return summary;
}

}  // namespace sessiondb::store
