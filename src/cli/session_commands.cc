// Verbs that manage sessions: init, new, ls, rename, archive, unarchive,
// purge, active (rm is forget_commands').
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/numeric_options.h"
#include "cli/served_reads.h"
#include "cli/session_ref.h"
#include "sessiondb/postgres_schema.h"

namespace sessiondb::cli {
namespace {

// The widest a title is shown in `ls`; a narrower terminal cuts it further,
// down to kMinTitleColumns.
constexpr size_t kTitleColumnChars = 40;
constexpr size_t kMinTitleColumns = 10;

// Splits "KEY=VALUE"; kInvalidArgument naming the flag when there is no '=' or no key.
Result<std::pair<std::string, std::string>> SplitPair(const std::string& pair) {
  const size_t eq = pair.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Err(Status::InvalidArgument("--meta expects KEY=VALUE, got '" + pair + "'"));
  }
  return std::pair{pair.substr(0, eq), pair.substr(eq + 1)};
}

// Repeated --meta KEY=VALUE flags as a JSON object text; empty if none.
Result<std::string> MetadataFromPairs(const std::vector<std::string>& pairs) {
  if (pairs.empty()) return std::string();
  Json meta = Json::object();
  for (const std::string& pair : pairs) {
    ASSIGN_OR_RETURN(auto kv, SplitPair(pair));
    meta[kv.first] = kv.second;
  }
  return meta.dump();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Quotes an argument for a shell command line we print as a hint.
std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789._-/=:+,@") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `uri` with the password of its user-info part (user:password@) as "***".
std::string HidePassword(const std::string& uri) {
  const size_t scheme = uri.find("://");
  const size_t at = uri.find('@', scheme == std::string::npos ? 0 : scheme);
  if (scheme == std::string::npos || at == std::string::npos) return uri;
  const size_t colon = uri.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon + 1) + "***" + uri.substr(at);
}

void AddInit(CLI::App& app, CliContext& ctx) {
  auto* cmd =
      app.add_subcommand("init", "Create the store (a directory) if needed; print its path");
  cmd->footer("\nExample:\n  sessiondb --store ~/chats init");
  cmd->callback([&ctx] {
    if (!ctx.OpenStore(/*create_if_missing=*/true)) return;
    const std::string where = ctx.StorePath();
    if (StoreKindOf(where) == StoreKind::kPostgres) {
      // A URI is not a path; never echo its password.
      const std::string shown = HidePassword(where);
      if (ctx.options.json) {
        return ctx.PrintJson({{"store", shown}, {"schema_version", kPostgresSchemaVersion}});
      }
      std::cout << shown << "\n";
      return;
    }
    std::error_code ec;
    std::filesystem::path path = std::filesystem::absolute(where, ec);
    const std::string shown = ec ? where : path.lexically_normal().string();
    if (ctx.options.json) {
      ctx.PrintJson({{"store", shown}, {"schema_version", kSchemaVersion}});
    } else {
      std::cout << shown << "\n";
    }
  });
}

void AddNew(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string id, title;
    std::vector<std::string> meta;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("new", "Create a session and print its id");
  cmd->add_option("--id", args->id, "Session id: 1-128 of A-Z a-z 0-9 . _ - (default: a UUIDv7)");
  cmd->add_option("--title", args->title, "Title (default: taken from the first message)");
  cmd->add_option("--meta", args->meta, "Metadata KEY=VALUE; repeatable")->option_text("KEY=VALUE");
  cmd->footer(
      "\nExamples:\n  sessiondb new --title \"Bug triage\" --meta project=/src/app\n"
      "  SID=$(sessiondb new)");
  cmd->callback([&ctx, args] {
    auto meta = MetadataFromPairs(args->meta);
    if (!meta) return ctx.Fail(meta.error());
    Store* store = ctx.OpenStore(/*create_if_missing=*/true);
    if (!store) return;
    auto s = store->CreateSession({.id = args->id, .title = args->title, .metadata_json = *meta});
    if (!s) return ctx.Fail(s.error());
    if (ctx.options.json) return ctx.PrintJson(ToJson(*s));
    std::cout << s->id << "\n";
  });
}

void AddList(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool archived = false, all = false, full = false;
    int limit = 20;
    std::string cursor, meta;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("ls", "List sessions, most recently updated first");
  auto* archived = cmd->add_flag("--archived", args->archived, "Only archived sessions");
  cmd->add_flag("--all", args->all, "Active and archived sessions")->excludes(archived);
  cmd->add_option("--limit", args->limit, "Sessions per page, 1-1000 (default 20)")
      ->check(NumberIn(1, 1000))
      ->option_text("N");
  cmd->add_option("--cursor", args->cursor, "Continue after a previous page (printed by ls)");
  cmd->add_option("--meta", args->meta, "Only sessions whose metadata has KEY equal to VALUE")
      ->option_text("KEY=VALUE");
  cmd->add_flag("--full", args->full, "Whole ids (default: the shortest unique prefix, 8+)");
  cmd->footer(
      "\nIds are shortened to the fewest characters (at least 8) that tell the listed\n"
      "sessions apart; any unique prefix works wherever a SESSION is asked for.\n"
      "\nExamples:\n  sessiondb ls --all --limit 50\n  sessiondb ls --json --meta "
      "project=/src/app");
  cmd->callback([&ctx, args] {
    if (AnsweredByResidentServer(ctx)) return;
    ListOptions o{.limit = args->limit, .cursor = args->cursor};
    o.archived = args->all        ? ArchiveFilter::kAll
                 : args->archived ? ArchiveFilter::kArchived
                                  : ArchiveFilter::kActive;
    if (!args->meta.empty()) {
      auto kv = SplitPair(args->meta);
      if (!kv) return ctx.Fail(kv.error());
      o.metadata_key = kv->first;
      o.metadata_value = kv->second;
    }
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    auto page = store->ListSessions(o);
    if (!page) return ctx.Fail(page.error());
    const size_t columns = ctx.OutputColumns();  // before the pager takes stdout
    ctx.StartPager();
    if (ctx.options.json) return ctx.PrintJson(ToJson(*page));

    if (page->sessions.empty()) {
      if (!args->cursor.empty()) {
        std::cout << "No more sessions.\n";
      } else if (o.archived == ArchiveFilter::kArchived || !o.metadata_key.empty()) {
        std::cout << "No sessions match.\n";
      } else {
        std::cout << "No sessions. Create one with: sessiondb new --title \"My first chat\"\n";
      }
      return;
    }
    std::vector<std::string> ids;
    for (const Session& s : page->sessions) ids.push_back(s.id);
    const size_t id_chars = args->full ? std::string::npos : AbbreviationLength(ids);
    // ARCHIVED and FORKED FROM only when a listed session has one: the
    // table fits the width (80 columns unless the terminal says otherwise)
    // by cutting titles, and an empty column would cut them for nothing.
    const bool any_archived = std::any_of(page->sessions.begin(), page->sessions.end(),
                                          [](const Session& s) { return s.archived; });
    const bool any_fork = std::any_of(page->sessions.begin(), page->sessions.end(),
                                      [](const Session& s) { return !s.parent_id.empty(); });
    std::vector<std::string> headers = {"ID", "TITLE", "MESSAGES", "UPDATED"};
    if (any_archived) headers.push_back("ARCHIVED");
    if (any_fork) headers.push_back("FORKED FROM");
    Table table(headers);
    table.AlignRight(2);
    table.FitToWidth(1, columns, kMinTitleColumns);
    for (const Session& s : page->sessions) {
      std::vector<std::string> row = {s.id.substr(0, id_chars),
                                      Shorten(ctx.ForTerminal(s.title), kTitleColumnChars),
                                      std::to_string(s.message_count), FormatTime(s.updated_ms)};
      if (any_archived) row.push_back(s.archived ? "yes" : "");
      if (any_fork) {
        row.push_back(s.parent_id.empty()
                          ? ""
                          : s.parent_id.substr(0, id_chars) + "@" + std::to_string(s.fork_seq));
      }
      table.AddRow(std::move(row));
    }
    table.Print(std::cout);
    if (!page->next_cursor.empty()) {
      std::string next = "sessiondb ls";
      if (!ctx.options.store.empty()) next += " --store " + ShellQuote(ctx.options.store);
      if (args->all) next += " --all";
      if (args->archived) next += " --archived";
      if (args->full) next += " --full";
      if (args->limit != 20) next += " --limit " + std::to_string(args->limit);
      if (!args->meta.empty()) next += " --meta " + ShellQuote(args->meta);
      std::cout << "More: " << next << " --cursor " << ShellQuote(page->next_cursor) << "\n";
    }
  });
}

// Prints the session after a change: its JSON object, or `what` and its id.
void ReportSession(CliContext& ctx, Store* store, const std::string& id, const std::string& what) {
  auto session = store->GetSession(id);
  if (!session) return ctx.Fail(session.error());
  if (ctx.options.json) return ctx.PrintJson(ToJson(*session));
  std::cout << what << " " << session->id << "\n";
}

void AddRename(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<std::pair<std::string, std::string>>();
  auto* cmd = app.add_subcommand("rename", "Set a session's title (later messages keep it)");
  cmd->add_option("SESSION", args->first, kSessionArgHelp)->required();
  cmd->add_option("TITLE", args->second, "New title")->required();
  cmd->footer("\nExample:\n  sessiondb rename SID \"Release checklist\"");
  cmd->callback([&ctx, args] {
    const std::optional<std::string> id = ctx.SessionId(args->first);
    if (!id) return;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (Status s = store->RenameSession(*id, args->second); !s.ok()) return ctx.Fail(s);
    ReportSession(ctx, store, *id, "renamed");
  });
}

void AddArchiveVerb(CLI::App& app, CliContext& ctx, const std::string& name, bool archive) {
  auto session = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand(name, archive ? "Archive a session: hidden from ls, kept until purge or rm"
                                       : "Bring an archived session back into ls");
  cmd->add_option("SESSION", *session, kSessionArgHelp)->required();
  cmd->footer("\nExample:\n  sessiondb " + name + " SID");
  cmd->callback([&ctx, session, archive] {
    const std::optional<std::string> id = ctx.SessionId(*session);
    if (!id) return;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (Status s = store->SetArchived(*id, archive); !s.ok()) return ctx.Fail(s);
    ReportSession(ctx, store, *id, archive ? "archived" : "unarchived");
  });
}

void AddPurge(CLI::App& app, CliContext& ctx) {
  auto days = std::make_shared<double>(0);
  auto* cmd = app.add_subcommand("purge", "Delete archived sessions not updated for DAYS days");
  cmd->add_option("--older-than", *days, "Age in days (fractions allowed; 0: every archived one)")
      ->required()
      ->check(FractionIn(0, 1e9))
      ->option_text("DAYS");
  cmd->footer("\nExample:\n  sessiondb purge --older-than 30");
  cmd->callback([&ctx, days] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    // Ages beyond the epoch select nothing, rather than overflowing.
    const int64_t now = NowMs();
    const double age_ms = *days * 86'400'000.0;
    const int64_t before_ms =
        age_ms >= static_cast<double>(now) ? 0 : now - static_cast<int64_t>(age_ms);
    auto purged = store->PurgeArchived(before_ms);
    if (!purged) return ctx.Fail(purged.error());
    if (ctx.options.json) return ctx.PrintJson({{"purged", *purged}});
    std::cout << "purged " << *purged << " archived session" << (*purged == 1 ? "" : "s") << "\n";
  });
}

void AddActive(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    bool clear = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("active", "Print, set or clear the active session");
  auto* session = cmd->add_option("SESSION", args->session, "Session to make active");
  cmd->add_flag("--clear", args->clear, "Clear the active session")->excludes(session);
  cmd->footer("\nExamples:\n  sessiondb active SID\n  sessiondb show \"$(sessiondb active)\"");
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    if (!args->session.empty() || args->clear) {
      std::string id;
      if (!args->clear) {
        const std::optional<std::string> resolved = ctx.SessionId(args->session);
        if (!resolved) return;
        id = *resolved;
      }
      if (Status s = store->SetActiveSession(id); !s.ok()) return ctx.Fail(s);
    }
    auto active = store->GetActiveSession();
    if (!active) return ctx.Fail(active.error());
    if (ctx.options.json) {
      return ctx.PrintJson({{"active_session", active->has_value() ? Json(**active) : Json()}});
    }
    if (active->has_value()) {
      std::cout << **active << "\n";
    } else if (args->clear) {
      std::cout << "active session cleared\n";
    } else {
      // On stderr, so that `$(sessiondb active)` is empty when there is none.
      std::cerr << "no active session\n";
    }
  });
}

}  // namespace

void AddSessionCommands(CLI::App& app, CliContext& ctx) {
  AddInit(app, ctx);
  AddNew(app, ctx);
  AddList(app, ctx);
  AddRename(app, ctx);
  AddArchiveVerb(app, ctx, "archive", /*archive=*/true);
  AddArchiveVerb(app, ctx, "unarchive", /*archive=*/false);
  AddPurge(app, ctx);
  AddActive(app, ctx);
}

}  // namespace sessiondb::cli
