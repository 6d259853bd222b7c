// Verbs that forget on purpose (docs/retention.md): rm (to the trash, or
// erased at once), trash (list, restore, empty), erase, ledger, retain, and
// `verify --erased`'s check of a receipt.
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/numeric_options.h"
#include "cli/session_ref.h"
#include "core/file_io.h"
#include "core/iso_time.h"
#include "core/json_parse.h"
#include "core/uuid.h"

namespace sessiondb::cli {
namespace {

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;
// A receipt is counts and ids; ParseErasureReceipt refuses more than this.
constexpr int64_t kMaxReceiptBytes = int64_t{64} * 1024 * 1024;
// What `erase --search` may select at most.
constexpr int kMaxSearchMessages = 1000;
constexpr size_t kTitleChars = 40;

// The receipt's JSON as a value, for --json and the file.
Json ReceiptJson(const ErasureReceipt& receipt) {
  return ParseOrderedJson(ErasureReceiptToJson(receipt)).value_or(Json::object());
}

int64_t CountOf(const ErasureReceipt& receipt, std::string_view kind) {
  for (const auto& [k, n] : receipt.counts) {
    if (k == kind) return n;
  }
  return 0;
}

// "erased 2 sessions, 14 messages, 3 blobs (1.2 MiB)" and the receipt's id.
void PrintReceiptSummary(const ErasureReceipt& receipt) {
  std::cout << "erased";
  bool first = true;
  for (const auto& [kind, n] : receipt.counts) {
    if (n == 0 || kind == "blob_bytes") continue;
    std::cout << (first ? " " : ", ") << n << " " << kind;
    if (kind == "blobs") std::cout << " (" << FormatBytes(CountOf(receipt, "blob_bytes")) << ")";
    first = false;
  }
  if (first) std::cout << " nothing";
  std::cout << "\n";
  if (!receipt.kept_for_forks.empty()) {
    std::cout << receipt.kept_for_forks.size()
              << " trashed session(s) kept hidden for the forks that still read them\n";
  }
  if (!receipt.destroyed_key_id.empty()) {
    std::cout << "destroyed data key " << receipt.destroyed_key_id
              << ": what the namespace wrote before opens with no key it has (WAL and backups "
                 "too, once their master key is gone; docs/encryption.md)\n";
  }
  std::cout << "receipt " << receipt.id << " (digest " << receipt.digest << ")\n";
}

// Writes the receipt to `path` (0600), or prints it with --json, or its summary.
void ReportReceipt(CliContext& ctx, const ErasureReceipt& receipt, const std::string& path) {
  if (!path.empty()) {
    Status s = ReplaceFileDurably(path, ErasureReceiptToJson(receipt) + "\n", nullptr, 0600);
    if (!s.ok()) return ctx.Fail(s);
  }
  if (ctx.options.json) return ctx.PrintJson(ReceiptJson(receipt));
  PrintReceiptSummary(receipt);
  if (!path.empty()) std::cout << "receipt written to " << path << "\n";
}

// The id of a session in the trash: the id itself, or a unique prefix of one
// (at least 4 characters) of the sessions there.
Result<std::string> TrashedSessionId(Store& store, const std::string& typed) {
  ListOptions o{.limit = 1000, .trash = true};
  std::vector<std::string> matches;
  while (true) {
    ASSIGN_OR_RETURN(SessionPage page, store.ListSessions(o));
    for (const Session& s : page.sessions) {
      if (s.id == typed) return s.id;
      if (typed.size() >= kMinPrefixChars && s.id.compare(0, typed.size(), typed) == 0) {
        matches.push_back(s.id);
      }
    }
    if (page.next_cursor.empty()) break;
    o.cursor = page.next_cursor;
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty()) {
    return Err(Status::NotFound("no session '" + typed +
                                "' in the trash (sessiondb trash lists what is there)"));
  }
  return Err(Status::InvalidArgument("'" + typed + "' names " + std::to_string(matches.size()) +
                                     " sessions in the trash; type more of the id"));
}

int64_t NowMs() { return SystemNowMs(); }

// ---- rm ----------------------------------------------------------------------

void AddRm(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    bool erase = false;
    bool yes = false;
    std::string receipt;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "rm", "Move a session to the trash (restorable), or erase it at once with --erase");
  cmd->add_option("SESSION", args->session, kSessionArgHelp)->required();
  auto* erase = cmd->add_flag("--erase", args->erase,
                              "Erase the session (and the forks that read it) for good, now");
  cmd->add_flag("--yes,-y", args->yes, "Confirm --erase: it cannot be undone");
  cmd->add_option("--receipt", args->receipt, "With --erase: write the receipt's JSON here (0600)")
      ->option_text("FILE")
      ->needs(erase);
  cmd->footer(
      "\nWithout --erase the session goes to the trash: hidden everywhere, kept until the\n"
      "trash is emptied (the retention policy's grace, 30 days by default), and brought\n"
      "back whole by `sessiondb trash restore SESSION`.\n"
      "\nExamples:\n  sessiondb rm SID\n  sessiondb rm --erase SID --yes --receipt erased.json");
  cmd->callback([&ctx, args] {
    if (args->erase && !args->yes) {
      return ctx.Fail(Status::InvalidArgument("rm --erase erases session '" + args->session +
                                              "' for good; run it again with --yes to confirm"));
    }
    const std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (args->erase) {
      auto receipt = store->Erase({.session_ids = {*id}, .reason = "rm --erase"});
      if (!receipt) return ctx.Fail(receipt.error());
      return ReportReceipt(ctx, *receipt, args->receipt);
    }
    if (Status s = store->TrashSession(*id); !s.ok()) return ctx.Fail(s);
    if (ctx.options.json) return ctx.PrintJson({{"id", *id}, {"trashed", true}});
    std::cout << "moved " << *id << " to the trash; `sessiondb trash restore " << *id
              << "` brings it back\n";
  });
}

// ---- trash -------------------------------------------------------------------

// Prints the sessions in the trash (`trash`, `trash list`).
void ListTrash(CliContext& ctx) {
  Store* store = ctx.OpenStore(/*create_if_missing=*/false);
  if (!store) return;
  std::vector<Session> sessions;
  ListOptions o{.limit = 1000, .trash = true};
  while (true) {
    auto page = store->ListSessions(o);
    if (!page) return ctx.Fail(page.error());
    for (Session& s : page->sessions) sessions.push_back(std::move(s));
    if (page->next_cursor.empty()) break;
    o.cursor = page->next_cursor;
  }
  ctx.StartPager();
  if (ctx.options.json) {
    Json list = Json::array();
    for (const Session& s : sessions) list.push_back(TrashedSessionToJson(s));
    return ctx.PrintJson({{"sessions", std::move(list)}});
  }
  if (sessions.empty()) {
    std::cout << "The trash is empty.\n";
    return;
  }
  Table table({"ID", "TITLE", "MESSAGES", "TRASHED"});
  table.AlignRight(2);
  for (const Session& s : sessions) {
    table.AddRow({s.id, Shorten(ctx.ForTerminal(s.title), kTitleChars),
                  std::to_string(s.message_count), FormatTime(s.trashed_ms)});
  }
  table.Print(std::cout);
}

void AddTrash(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string restore_id;
    double older_than_days = -1;
    bool all = false;
    std::string receipt;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("trash", "List the trash; restore a session; empty the trash");
  cmd->require_subcommand(0, 1);
  cmd->footer(
      "\nA session in the trash is hidden from every listing, read, search and MCP, and\n"
      "kept until `trash empty` (or the retention policy) erases it.\n"
      "\nExamples:\n  sessiondb trash\n  sessiondb trash restore SID\n"
      "  sessiondb trash empty --older-than 7");

  auto* restore = cmd->add_subcommand("restore", "Take a session out of the trash, as it was");
  restore->add_option("SESSION", args->restore_id, "The session's id (or a unique prefix)")
      ->required();
  restore->footer("\nExample:\n  sessiondb trash restore SID");
  restore->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    auto id = TrashedSessionId(*store, args->restore_id);
    if (!id) return ctx.Fail(id.error());
    auto session = store->RestoreFromTrash(*id);
    if (!session) return ctx.Fail(session.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*session));
    std::cout << "restored " << session->id << "\n";
  });

  auto* empty = cmd->add_subcommand(
      "empty", "Erase for good the sessions in the trash longer than the policy's grace");
  auto* older = empty
                    ->add_option("--older-than", args->older_than_days,
                                 "Only sessions in the trash longer than DAYS (default: the "
                                 "retention policy's trash_grace_days)")
                    ->check(FractionIn(0, 1e6))
                    ->option_text("DAYS");
  empty->add_flag("--all", args->all, "Everything in the trash, whenever it went there")
      ->excludes(older);
  empty->add_option("--receipt", args->receipt, "Write the receipt's JSON here (0600)")
      ->option_text("FILE");
  empty->footer(
      "\nExamples:\n  sessiondb trash empty\n  sessiondb trash empty --all --receipt r.json");
  empty->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    int64_t before_ms = 0;
    const int64_t now = NowMs();
    if (args->all) {
      before_ms = now + 1;  // strictly before: what was trashed this millisecond too
    } else {
      double days = args->older_than_days;
      if (days < 0) {
        auto policy = store->GetRetentionPolicy();
        if (!policy) return ctx.Fail(policy.error());
        days = static_cast<double>(policy->trash_grace_days);
      }
      before_ms = now - static_cast<int64_t>(days * static_cast<double>(kDayMs));
    }
    auto receipt = store->EmptyTrash(before_ms);
    if (!receipt) return ctx.Fail(receipt.error());
    ReportReceipt(ctx, *receipt, args->receipt);
  });

  auto* list = cmd->add_subcommand("list", "List the trash (as `trash` alone)");
  list->footer("\nExample:\n  sessiondb trash list --json");
  list->callback([&ctx] { ListTrash(ctx); });
  cmd->callback([&ctx, cmd] {
    if (cmd->get_subcommands().empty()) ListTrash(ctx);
  });
}

// ---- erase -------------------------------------------------------------------

void AddErase(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::vector<std::string> sessions;
    std::string project;
    std::string before;
    bool everything = false;
    std::string search;
    int limit = 20;
    bool yes = false;
    std::string receipt;
    std::string reason;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "erase", "Erase sessions or messages for good and print (or write) the receipt");
  cmd->add_option("--session", args->sessions,
                  "A session to erase, with the forks that read it (repeatable)")
      ->option_text("SESSION");
  cmd->add_option("--project", args->project,
                  "Every session of this project folder (and its subfolders), and its code writes")
      ->option_text("DIR");
  cmd->add_option("--before", args->before,
                  "Every session last updated before this ISO date or time")
      ->option_text("DATE");
  cmd->add_flag("--everything", args->everything,
                "The whole store (the ledger stays); needs --yes");
  auto* search = cmd->add_option("--search", args->search,
                                 "The messages a keyword search selects (shown first; needs --yes)")
                     ->option_text("QUERY");
  cmd->add_option("--limit", args->limit, "With --search: at most N messages, 1-1000 (default 20)")
      ->check(NumberIn(1, kMaxSearchMessages))
      ->option_text("N")
      ->needs(search);
  cmd->add_option("--reason", args->reason, "Words for the receipt and the ledger (never content)")
      ->option_text("TEXT");
  cmd->add_flag("--yes,-y", args->yes, "Confirm --everything or --search");
  cmd->add_option("--receipt", args->receipt, "Write the receipt's JSON here (0600)")
      ->option_text("FILE");
  cmd->footer(
      "\nThe parts add up: what any of them selects is erased, in one transaction, with\n"
      "its blobs, index entries and vectors. The receipt counts what went, by kind,\n"
      "and never holds content; `sessiondb verify --erased FILE` checks it later.\n"
      "\nExamples:\n  sessiondb erase --session SID --receipt erased.json\n"
      "  sessiondb erase --project /src/app --before 2025-01-01\n"
      "  sessiondb erase --search 'api key' --limit 5 --yes");
  cmd->callback([&ctx, args] {
    EraseRequest request;
    request.project = args->project;
    request.everything = args->everything;
    request.reason = args->reason;
    if (!args->before.empty()) {
      std::optional<int64_t> ms = ParseIsoTime(args->before);
      if (!ms) {
        return ctx.Fail(Status::InvalidArgument("--before '" + args->before +
                                                "' is not an ISO-8601 date or time "
                                                "(2025-01-31, 2025-01-31T12:00:00Z)"));
      }
      request.before_ms = *ms;
    }
    if (args->sessions.empty() && args->project.empty() && args->before.empty() &&
        !args->everything && args->search.empty()) {
      return ctx.Fail(Status::InvalidArgument(
          "erase needs what to erase: --session, --project, --before, --everything or --search"));
    }
    if (args->everything && !args->yes) {
      return ctx.Fail(Status::InvalidArgument(
          "erase --everything erases every session of the store for good; run it again with "
          "--yes to confirm"));
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    for (const std::string& typed : args->sessions) {
      auto id = ResolveSessionRef(*store, typed);
      if (!id) return ctx.Fail(id.error());
      request.session_ids.push_back(*id);
    }
    if (!args->search.empty()) {
      SearchIndex* index = ctx.OpenSearchIndex();
      if (!index) return;
      auto results = index->Search(
          {.query = args->search, .mode = SearchMode::kKeyword, .limit = args->limit});
      if (!results) return ctx.Fail(results.error());
      std::vector<const SearchHit*> hits;
      for (const SearchHit& hit : results->hits) {
        if (hit.kind == HitKind::kMessage) hits.push_back(&hit);
      }
      if (!args->yes) {
        if (!ctx.options.json) {
          std::cout << hits.size() << " message(s) match:\n";
          for (const SearchHit* h : hits) {
            std::cout << "  " << h->session_id << " #" << h->seq << "  "
                      << Shorten(ctx.ForTerminal(h->snippet), 80) << "\n";
          }
        }
        return ctx.Fail(
            Status::InvalidArgument("erase --search would erase " + std::to_string(hits.size()) +
                                    " message(s) for good; run it again with --yes to confirm"));
      }
      if (hits.empty() && request.session_ids.empty() && request.project.empty() &&
          request.before_ms == 0 && !request.everything) {
        return ctx.Fail(Status::NotFound("no message matches '" + args->search + "'"));
      }
      for (const SearchHit* h : hits) request.messages.push_back({h->session_id, h->seq});
    }
    auto receipt = store->Erase(request);
    if (!receipt) return ctx.Fail(receipt.error());
    ReportReceipt(ctx, *receipt, args->receipt);
  });
}

// ---- ledger ------------------------------------------------------------------

void AddLedger(CLI::App& app, CliContext& ctx) {
  struct Args {
    int64_t limit = 20;
    int64_t before_id = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("ledger", "What was forgotten, when and by whom, newest first");
  cmd->add_option("--limit", args->limit, "Entries, 1-1000 (default 20)")
      ->check(NumberIn(1, 1000))
      ->option_text("N");
  cmd->add_option("--before-id", args->before_id, "Only entries older than this id")
      ->check(NumberIn(0, kMaxCount))
      ->option_text("ID");
  cmd->footer(
      "\nThe ledger counts what each trash, restore, erasure and retention run did; it\n"
      "never holds content and survives every erasure.\n"
      "\nExample:\n  sessiondb ledger --limit 5 --json");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    auto entries = store->ReadLedger({.limit = args->limit, .before_id = args->before_id});
    if (!entries) return ctx.Fail(entries.error());
    ctx.StartPager();
    if (ctx.options.json) {
      Json list = Json::array();
      for (const LedgerEntry& e : *entries) list.push_back(ToJson(e));
      return ctx.PrintJson({{"entries", std::move(list)}});
    }
    if (entries->empty()) {
      std::cout << "The ledger is empty: nothing was forgotten yet.\n";
      return;
    }
    Table table({"ID", "WHEN", "ACTOR", "ACTION", "COUNTS", "SCOPE"});
    table.AlignRight(0);
    for (const LedgerEntry& e : *entries) {
      std::string counts;
      for (const auto& [kind, n] : e.counts) {
        if (n == 0) continue;
        counts += (counts.empty() ? "" : " ") + kind + "=" + std::to_string(n);
      }
      table.AddRow({std::to_string(e.id), FormatTime(e.ts_ms), ctx.ForTerminal(e.actor), e.action,
                    counts, Shorten(ctx.ForTerminal(e.scope), 60)});
    }
    table.Print(std::cout);
  });
}

// ---- retain ------------------------------------------------------------------

// "project=/src/app,trash-after-idle-days=30,keep-newest=100" as a rule.
Result<RetentionRule> ParseRule(const std::string& text) {
  RetentionRule rule;
  std::stringstream in(text);
  std::string item;
  std::vector<std::string> seen;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return Err(Status::InvalidArgument("--rule '" + text + "': '" + item + "' is not KEY=VALUE"));
    }
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return Err(Status::InvalidArgument("--rule '" + text + "' names " + key + " twice"));
    }
    seen.push_back(key);
    if (key == "project") {
      rule.project = value;
      continue;
    }
    int64_t* field = key == "trash-after-idle-days"     ? &rule.trash_after_idle_days
                     : key == "keep-newest"             ? &rule.keep_newest
                     : key == "archive-after-idle-days" ? &rule.archive_after_idle_days
                     : key == "erase-archived-after-idle-days"
                         ? &rule.erase_archived_after_idle_days
                         : nullptr;
    if (field == nullptr) {
      return Err(Status::InvalidArgument(
          "--rule '" + text + "': unknown key '" + key +
          "' (project, trash-after-idle-days, keep-newest, archive-after-idle-days, "
          "erase-archived-after-idle-days)"));
    }
    if (value.empty() || value.size() > 15 ||
        !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Err(Status::InvalidArgument("--rule '" + text + "': " + key +
                                         " must be a whole number of decimal digits (got '" +
                                         value + "')"));
    }
    *field = std::stoll(value);
  }
  return rule;
}

void PrintPolicy(const RetentionPolicy& policy) {
  std::cout << "trash grace  " << policy.trash_grace_days << " days\n";
  if (policy.rules.empty()) {
    std::cout << "no rules: nothing is archived, trashed or erased but the trash past its grace\n";
    return;
  }
  Table table({"PROJECT", "TRASH AFTER IDLE", "KEEP NEWEST", "ARCHIVE AFTER IDLE",
               "ERASE ARCHIVED AFTER IDLE"});
  auto days = [](int64_t n) { return n == 0 ? std::string("-") : std::to_string(n) + " days"; };
  for (const RetentionRule& r : policy.rules) {
    table.AddRow({r.project.empty() ? "(every other)" : r.project, days(r.trash_after_idle_days),
                  r.keep_newest == 0 ? "-" : std::to_string(r.keep_newest),
                  days(r.archive_after_idle_days), days(r.erase_archived_after_idle_days)});
  }
  table.Print(std::cout);
}

void PrintRun(const RetentionRun& run) {
  const char* verb = run.dry_run ? "would " : "";
  auto list = [&](const char* what, const std::vector<std::string>& ids) {
    std::cout << verb << what << " " << ids.size() << " session" << (ids.size() == 1 ? "" : "s")
              << (ids.empty() ? "\n" : ":\n");
    for (const std::string& id : ids) std::cout << "  " << id << "\n";
  };
  list("archive", run.archived);
  list("trash", run.trashed);
  list("erase", run.erased);
  if (!run.kept_for_forks.empty()) {
    std::cout << run.kept_for_forks.size() << " kept for the forks that still read them:\n";
    for (const std::string& id : run.kept_for_forks) std::cout << "  " << id << "\n";
  }
  if (run.dry_run) {
    std::cout << "dry run: nothing changed; `sessiondb retain --apply` does it\n";
  } else {
    std::cout << "recorded in the ledger as entry " << run.ledger_id;
    if (!run.receipt_id.empty()) std::cout << " (receipt " << run.receipt_id << ")";
    std::cout << "\n";
  }
}

void AddRetain(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool apply = false;
    bool show = false;
    bool set = false;
    int64_t trash_grace_days = -1;
    std::vector<std::string> rules;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "retain", "Show what the retention policy would do (dry run), apply it, show or set it");
  auto* apply = cmd->add_flag("--apply", args->apply, "Do it (recorded in the ledger)");
  auto* show = cmd->add_flag("--show", args->show, "Print the policy")->excludes(apply);
  auto* set = cmd->add_flag("--set", args->set, "Set the policy from --trash-grace-days and --rule")
                  ->excludes(apply)
                  ->excludes(show);
  cmd->add_option("--trash-grace-days", args->trash_grace_days,
                  "With --set: days a session stays in the trash before it is erased "
                  "(default: kept as it was)")
      ->check(NumberIn(0, 365000))
      ->option_text("N")
      ->needs(set);
  cmd->add_option("--rule", args->rules,
                  "With --set: a rule (repeatable; the rules given replace all the rules): "
                  "project=DIR,trash-after-idle-days=N,keep-newest=N,"
                  "archive-after-idle-days=N,erase-archived-after-idle-days=N")
      ->option_text("RULE")
      ->needs(set);
  cmd->footer(
      "\nA session is handled by the rule of the longest project folder holding it, else\n"
      "by the rule without a project; metadata \"pinned\": true exempts it. Erasing an\n"
      "archived session waits while a fork the policy keeps still reads it.\n"
      "`sessiondb serve` applies the policy every --retain-every minutes.\n"
      "\nExamples:\n  sessiondb retain\n  sessiondb retain --apply\n"
      "  sessiondb retain --set --trash-grace-days 14 \\\n"
      "      --rule 'project=/src/app,archive-after-idle-days=7,erase-archived-after-idle-days=90'"
      " \\\n      --rule 'trash-after-idle-days=180'");
  cmd->callback([&ctx, args] {
    if (args->set && args->rules.empty() && args->trash_grace_days < 0) {
      return ctx.Fail(Status::InvalidArgument("retain --set needs --trash-grace-days or --rule"));
    }
    std::vector<RetentionRule> rules;
    for (const std::string& text : args->rules) {
      auto rule = ParseRule(text);
      if (!rule) return ctx.Fail(rule.error());
      rules.push_back(std::move(*rule));
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    if (args->show || args->set) {
      auto policy = store->GetRetentionPolicy();
      if (!policy) return ctx.Fail(policy.error());
      if (args->set) {
        if (args->trash_grace_days >= 0) policy->trash_grace_days = args->trash_grace_days;
        if (!args->rules.empty()) policy->rules = std::move(rules);
        if (Status s = store->SetRetentionPolicy(*policy); !s.ok()) return ctx.Fail(s);
        policy = store->GetRetentionPolicy();
        if (!policy) return ctx.Fail(policy.error());
      }
      if (ctx.options.json) return ctx.PrintJson(ToJson(*policy));
      return PrintPolicy(*policy);
    }
    auto run = store->ApplyRetention(/*dry_run=*/!args->apply);
    if (!run) return ctx.Fail(run.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*run));
    PrintRun(*run);
  });
}

}  // namespace

// ---- verify --erased ---------------------------------------------------------

void VerifyErasureReceipt(CliContext& ctx, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return ctx.Fail(Status::NotFound("cannot read the receipt " + path));
  }
  if (!S_ISREG(st.st_mode)) {
    return ctx.Fail(Status::InvalidArgument("the receipt " + path + " is not a file"));
  }
  if (st.st_size > kMaxReceiptBytes) {
    return ctx.Fail(Status::InvalidArgument("the receipt " + path + " is " +
                                            FormatBytes(st.st_size) + "; a receipt is at most " +
                                            FormatBytes(kMaxReceiptBytes)));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  if (!in.good() && !in.eof()) return ctx.Fail(Status::Io("cannot read the receipt " + path));
  if (static_cast<int64_t>(text.size()) > kMaxReceiptBytes) {
    return ctx.Fail(Status::InvalidArgument("the receipt " + path + " is larger than " +
                                            FormatBytes(kMaxReceiptBytes)));
  }
  auto receipt = ParseErasureReceipt(text);
  if (!receipt) {
    return ctx.Fail(Status::InvalidArgument(path + ": " + receipt.error().message()));
  }
  Store* store = ctx.OpenStore(/*create_if_missing=*/false);
  if (!store) return;
  auto check = store->VerifyErased(*receipt);
  if (!check) return ctx.Fail(check.error());
  if (!check->erased()) ctx.set_exit_code(1);
  if (ctx.options.json) return ctx.PrintJson(ToJson(*check));
  if (check->erased()) {
    std::cout << "erased: receipt " << receipt->id << " checks, and nothing it names is left ("
              << check->checks << " checks)\n";
    return;
  }
  std::cout << "NOT ERASED: receipt " << receipt->id << "\n";
  for (const std::string& p : check->problems) std::cout << "  problem  " << p << "\n";
}

void AddForgetCommands(CLI::App& app, CliContext& ctx) {
  AddRm(app, ctx);
  AddTrash(app, ctx);
  AddErase(app, ctx);
  AddLedger(app, ctx);
  AddRetain(app, ctx);
}

}  // namespace sessiondb::cli
