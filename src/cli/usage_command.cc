// `sessiondb usage`: token totals and cost (docs/usage.md). With a SESSION,
// that session's turns per model (and with --turns each turn, priced);
// without, a summary across sessions grouped by day, month, project, model,
// provider or session, with a total line.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/session_ref.h"
#include "core/iso_time.h"

namespace sessiondb::cli {
namespace {

struct UsageArgs {
  std::string session_arg;
  std::string by;
  std::string since, until, project, session, prices;
  bool turns = false;
};

// "$1.23", "$0.0012" (small sums keep 4 digits), "-" for none.
std::string Dollars(std::optional<double> usd) {
  if (!usd) return "-";
  char out[32];
  std::snprintf(out, sizeof out, *usd < 1 ? "$%.4f" : "$%.2f", *usd);
  return out;
}

// 1234567 -> "1.2M", 12345 -> "12.3k": the table fits 80 columns.
std::string Count(int64_t n) {
  char out[32];
  if (n >= 10'000'000'000) {
    std::snprintf(out, sizeof out, "%.0fG", static_cast<double>(n) / 1e9);
  } else if (n >= 1'000'000) {
    std::snprintf(out, sizeof out, "%.1fM", static_cast<double>(n) / 1e6);
  } else if (n >= 10'000) {
    std::snprintf(out, sizeof out, "%.1fk", static_cast<double>(n) / 1e3);
  } else {
    std::snprintf(out, sizeof out, "%lld", static_cast<long long>(n));
  }
  return out;
}

std::string KeyOf(const UsageRow& r, const std::vector<UsageGroup>& group) {
  std::string key;
  for (UsageGroup g : group) {
    if (!key.empty()) key += " ";
    switch (g) {
      case UsageGroup::kDay:
        key += r.day;
        break;
      case UsageGroup::kMonth:
        key += r.month;
        break;
      case UsageGroup::kProject:
        key += r.project.empty() ? "(none)" : r.project;
        break;
      case UsageGroup::kModel:
        key += r.model.empty() ? "(none)" : r.model;
        break;
      case UsageGroup::kProvider:
        key += r.provider.empty() ? "(none)" : r.provider;
        break;
      case UsageGroup::kSession:
        key += r.session_id;
        break;
    }
  }
  return key;
}

std::vector<std::string> MetricCells(const UsageMetrics& m) {
  std::optional<double> cost;
  if (m.turns > m.unpriced_turns) cost = m.cost_usd;
  return {Count(m.turns),
          Count(m.usage.input_tokens),
          Count(m.usage.output_tokens),
          Count(m.usage.cached_tokens),
          Count(m.usage.cache_write_tokens),
          Dollars(cost),
          m.unpriced_turns ? std::to_string(m.unpriced_turns) : ""};
}

void PrintSummary(const UsageSummary& s, const std::vector<UsageGroup>& group) {
  std::string head;
  for (UsageGroup g : group) head += (head.empty() ? "" : " ") + std::string(UsageGroupName(g));
  if (head.empty()) head = "ALL";
  for (char& c : head) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // UNPRICED only when some turn had no price: the key column gets its room.
  const bool unpriced = s.total.unpriced_turns > 0;
  std::vector<std::string> headers = {head,     "TURNS",   "INPUT", "OUTPUT",
                                      "CACHED", "C.WRITE", "COST"};
  if (unpriced) headers.push_back("UNPRICED");
  Table table(headers);
  for (size_t col = 1; col < headers.size(); ++col) table.AlignRight(col);
  auto add = [&table, unpriced](std::string key, const UsageMetrics& m) {
    std::vector<std::string> cells = MetricCells(m);
    if (!unpriced) cells.pop_back();
    cells.insert(cells.begin(), std::move(key));
    table.AddRow(std::move(cells));
  };
  for (const UsageRow& r : s.rows) add(KeyOf(r, group), r.metrics);
  add("total", s.total);
  // The key column gives way first: the numbers must stay whole.
  table.FitToWidth(0, 80, 12);
  table.Print(std::cout);
}

void PrintSession(const UsageReport& r, const std::vector<TurnUsage>& turns, bool list) {
  if (list) {
    Table table({"SEQ", "TIME", "MODEL", "INPUT", "OUTPUT", "CACHED", "C.WRITE", "COST"});
    for (size_t col : {0, 3, 4, 5, 6, 7}) table.AlignRight(col);
    for (const TurnUsage& t : turns) {
      table.AddRow(
          {std::to_string(t.seq), FormatUtcTime(t.ts_ms, UtcTimeForm::kReadable).substr(0, 16),
           t.model, Count(t.usage.input_tokens), Count(t.usage.output_tokens),
           Count(t.usage.cached_tokens), Count(t.usage.cache_write_tokens), Dollars(t.cost_usd)});
    }
    table.FitToWidth(2, 80, 10);
    table.Print(std::cout);
    return;
  }
  std::map<std::pair<std::string, std::string>, UsageMetrics> cost;
  UsageMetrics total;
  for (const TurnUsage& t : turns) {
    for (UsageMetrics* m : {&cost[{t.provider, t.model}], &total}) {
      ++m->turns;
      if (t.cost_usd) {
        m->cost_usd += *t.cost_usd;
      } else {
        ++m->unpriced_turns;
      }
    }
  }
  Table table({"PROVIDER", "MODEL", "TURNS", "INPUT", "OUTPUT", "CACHED", "C.WRITE", "COST"});
  for (size_t col = 2; col <= 7; ++col) table.AlignRight(col);
  auto row = [&table](const std::string& provider, const std::string& model, int64_t n,
                      const Usage& u, const UsageMetrics& m) {
    std::optional<double> usd;
    if (m.turns > m.unpriced_turns) usd = m.cost_usd;
    table.AddRow({provider, model, std::to_string(n), Count(u.input_tokens), Count(u.output_tokens),
                  Count(u.cached_tokens), Count(u.cache_write_tokens), Dollars(usd)});
  };
  for (const ModelUsage& m : r.by_model) {
    row(m.provider, m.model, m.turns, m.usage, cost[{m.provider, m.model}]);
  }
  row("total", "", r.turns, r.total, total);
  table.FitToWidth(1, 80, 10);
  table.Print(std::cout);
}

}  // namespace

void AddUsageCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<UsageArgs>();
  auto* cmd = app.add_subcommand("usage", "Tokens and cost: of a session, or grouped across them");
  cmd->add_option("SESSION", args->session_arg,
                  std::string(kSessionArgHelp) + " (its turns per model; omit for a summary)");
  OfferValues(cmd->add_option("--by", args->by,
                              "Group by day, month, project, model, provider or session "
                              "(a comma list: day,model)"),
              {"day", "month", "project", "model", "provider", "session"});
  cmd->add_option("--since", args->since, "First UTC day counted (YYYY-MM-DD)");
  cmd->add_option("--until", args->until, "Last UTC day counted (YYYY-MM-DD, inclusive)");
  cmd->add_option("--project", args->project, "Only sessions of this project folder");
  cmd->add_option("--session", args->session, "Only these sessions (a comma list of ids)");
  cmd->add_flag("--turns", args->turns, "With SESSION: each turn, priced");
  cmd->add_option("--prices", args->prices,
                  "A price file whose entries win over the shipped prices "
                  "(default $SESSIONDB_PRICES; docs/usage.md)");
  cmd->footer(
      "\nEach turn is priced by the dated price of its provider and model on its UTC day;\n"
      "a turn with no price is counted in UNPRICED, never priced at 0. A fork counts its\n"
      "own turns only: its parent's tokens were spent once. Trashed sessions are left out.\n"
      "\nExamples:\n  sessiondb usage --by day --since 2025-10-01\n"
      "  sessiondb usage --by project,model --json\n  sessiondb usage SID --turns");
  cmd->callback([&ctx, args] {
    if (!args->session_arg.empty()) {
      const std::optional<std::string> id = ctx.SessionId(args->session_arg);
      if (!id) return;
      auto store = ctx.OpenStore(/*create_if_missing=*/false);
      auto r = store->GetUsage(*id);
      if (!r) return ctx.Fail(r.error());
      auto turns = store->GetTurnUsage(*id, args->prices);
      if (!turns) return ctx.Fail(turns.error());
      if (ctx.options.json) return ctx.PrintJson(ToJson(*r, *turns, args->turns));
      return PrintSession(*r, *turns, args->turns);
    }
    if (args->turns) {
      return ctx.Fail(Status::InvalidArgument("--turns lists the turns of one session: give it"));
    }
    UsageQuery query;
    auto group = ParseUsageGroups(args->by);
    if (!group) return ctx.Fail(group.error());
    query.group = *group;
    query.since = args->since;
    query.until = args->until;
    query.project = args->project;
    query.prices_path = args->prices;
    std::string_view rest = args->session;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      if (comma != 0) query.session_ids.emplace_back(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    auto summary = ctx.OpenStore(/*create_if_missing=*/false)->GetUsageSummary(query);
    if (!summary) return ctx.Fail(summary.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*summary, query.group));
    PrintSummary(*summary, query.group);
  });
}

}  // namespace sessiondb::cli
