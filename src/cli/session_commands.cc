// Verbs that manage sessions: init, new, ls, rename, archive, unarchive, rm,
// purge, active.
#include <iostream>
#include <memory>

#include "cli/commands.h"

namespace sessiondb::cli {
namespace {

using nlohmann::json;

// Turns repeated KEY=VALUE flags into a JSON object text; empty if none.
Result<std::string> MetadataFromPairs(const std::vector<std::string>& pairs) {
  if (pairs.empty()) return std::string();
  json meta = json::object();
  for (const std::string& pair : pairs) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Err(Status::InvalidArgument("--meta expects KEY=VALUE, got '" + pair + "'"));
    }
    meta[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return meta.dump();
}

void PrintSessionTable(const SessionPage& page) {
  if (page.sessions.empty()) {
    std::cout << "No sessions. Create one with: sessiondb new --title \"My first chat\"\n";
    return;
  }
  std::printf("%-36s  %-16s  %5s  %s\n", "ID", "UPDATED", "MSGS", "TITLE");
  for (const Session& s : page.sessions) {
    std::printf("%-36s  %-16s  %5lld  %s%s\n", s.id.c_str(), FormatTime(s.updated_ms).c_str(),
                static_cast<long long>(s.message_count), s.title.c_str(),
                s.archived ? "  [archived]" : "");
  }
  if (!page.next_cursor.empty()) {
    std::cout << "More: sessiondb ls --cursor " << page.next_cursor << "\n";
  }
}

void AddInit(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("init", "Create the store (a directory) if it does not exist");
  cmd->callback([&ctx] {
    Store* store = ctx.OpenStore();
    if (!store) return;
    if (ctx.options.json) {
      ctx.PrintJson({{"store", ctx.StorePath()}, {"schema_version", kSchemaVersion}});
    } else {
      std::cout << "store ready at " << ctx.StorePath() << "\n";
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
  cmd->add_option("--id", args->id, "Session id (letters, digits, . _ -); default a UUIDv7");
  cmd->add_option("--title", args->title, "Title; default: taken from the first message");
  cmd->add_option("--meta", args->meta, "Metadata KEY=VALUE, repeatable (e.g. project=/src/app)");
  cmd->callback([&ctx, args] {
    auto meta = MetadataFromPairs(args->meta);
    if (!meta) return ctx.Fail(meta.error());
    Store* store = ctx.OpenStore();
    if (!store) return;
    auto s = store->CreateSession({.id = args->id, .title = args->title, .metadata_json = *meta});
    if (!s) return ctx.Fail(s.error());
    if (ctx.options.json) {
      ctx.PrintJson(ToJson(*s));
    } else {
      std::cout << s->id << "\n";
    }
  });
}

void AddList(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool archived = false, all = false;
    int limit = 20;
    std::string cursor;
    std::string meta;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("ls", "List sessions, most recently updated first");
  auto* archived = cmd->add_flag("--archived", args->archived, "Only archived sessions");
  cmd->add_flag("--all", args->all, "Archived and active sessions")->excludes(archived);
  cmd->add_option("--limit", args->limit, "Sessions per page (1-1000)")->capture_default_str();
  cmd->add_option("--cursor", args->cursor, "Continue after a previous page");
  cmd->add_option("--meta", args->meta, "Only sessions whose metadata has KEY=VALUE");
  cmd->callback([&ctx, args] {
    ListOptions o{.limit = args->limit, .cursor = args->cursor};
    o.archived = args->all        ? ArchiveFilter::kAll
                 : args->archived ? ArchiveFilter::kArchived
                                  : ArchiveFilter::kActive;
    if (!args->meta.empty()) {
      size_t eq = args->meta.find('=');
      if (eq == std::string::npos || eq == 0) {
        return ctx.Fail(
            Status::InvalidArgument("--meta expects KEY=VALUE, got '" + args->meta + "'"));
      }
      o.metadata_key = args->meta.substr(0, eq);
      o.metadata_value = args->meta.substr(eq + 1);
    }
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    auto page = store->ListSessions(o);
    if (!page) return ctx.Fail(page.error());
    if (!ctx.options.json) return PrintSessionTable(*page);
    json sessions = json::array();
    for (const Session& s : page->sessions) sessions.push_back(ToJson(s));
    ctx.PrintJson({{"sessions", sessions},
                   {"next_cursor", page->next_cursor.empty() ? json() : json(page->next_cursor)}});
  });
}

// A verb taking one SESSION argument and applying `action` to it.
void AddSessionVerb(CLI::App& app, CliContext& ctx, const std::string& name,
                    const std::string& help, const std::string& done,
                    std::function<Status(Store*, const std::string&)> action) {
  auto session = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(name, help);
  cmd->add_option("SESSION", *session, "Session id")->required();
  cmd->callback([&ctx, session, done, action] {
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    Status s = action(store, *session);
    if (!s.ok()) return ctx.Fail(s);
    if (ctx.options.json) {
      ctx.PrintJson({{"session", *session}, {"result", done}});
    } else {
      std::cout << done << " " << *session << "\n";
    }
  });
}

void AddRename(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<std::pair<std::string, std::string>>();
  auto* cmd = app.add_subcommand("rename", "Set a session's title (later messages keep it)");
  cmd->add_option("SESSION", args->first, "Session id")->required();
  cmd->add_option("TITLE", args->second, "New title")->required();
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    if (Status s = store->RenameSession(args->first, args->second); !s.ok()) return ctx.Fail(s);
    auto session = store->GetSession(args->first);
    if (!session) return ctx.Fail(session.error());
    if (ctx.options.json) {
      ctx.PrintJson(ToJson(*session));
    } else {
      std::cout << "renamed " << session->id << " to \"" << session->title << "\"\n";
    }
  });
}

void AddRemove(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    bool yes = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "rm", "Delete a session and its messages for good (images go with the next gc)");
  cmd->add_option("SESSION", args->session, "Session id")->required();
  cmd->add_flag("--yes,-y", args->yes, "Confirm: deletion cannot be undone");
  cmd->callback([&ctx, args] {
    if (!args->yes) {
      return ctx.Fail(Status::InvalidArgument("rm deletes '" + args->session +
                                              "' for good; run again with --yes to confirm"));
    }
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    if (Status s = store->DeleteSession(args->session); !s.ok()) return ctx.Fail(s);
    if (ctx.options.json) {
      ctx.PrintJson({{"session", args->session}, {"result", "deleted"}});
    } else {
      std::cout << "deleted " << args->session << "\n";
    }
  });
}

void AddPurge(CLI::App& app, CliContext& ctx) {
  auto days = std::make_shared<double>(-1);
  auto* cmd = app.add_subcommand("purge", "Delete archived sessions not updated for DAYS days");
  cmd->add_option("--older-than", *days, "Age in days (fractions allowed)")->required();
  cmd->callback([&ctx, days] {
    if (*days < 0) return ctx.Fail(Status::InvalidArgument("--older-than must be 0 or more days"));
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    auto purged = store->PurgeArchived(now_ms - static_cast<int64_t>(*days * 86'400'000.0));
    if (!purged) return ctx.Fail(purged.error());
    if (ctx.options.json) {
      ctx.PrintJson({{"purged", *purged}});
    } else {
      std::cout << "purged " << *purged << " archived session" << (*purged == 1 ? "" : "s") << "\n";
    }
  });
}

void AddActive(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string session;
    bool clear = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("active", "Show, set or clear the active session");
  auto* session = cmd->add_option("SESSION", args->session, "Session to make active");
  cmd->add_flag("--clear", args->clear, "Clear the active session")->excludes(session);
  cmd->callback([&ctx, args] {
    Store* store = ctx.OpenStore(false);
    if (!store) return;
    if (!args->session.empty() || args->clear) {
      if (Status s = store->SetActiveSession(args->clear ? "" : args->session); !s.ok()) {
        return ctx.Fail(s);
      }
    }
    auto active = store->GetActiveSession();
    if (!active) return ctx.Fail(active.error());
    if (ctx.options.json) {
      ctx.PrintJson({{"active_session", active->has_value() ? json(**active) : json()}});
    } else if (active->has_value()) {
      std::cout << **active << "\n";
    } else {
      std::cout << "no active session\n";
    }
  });
}

}  // namespace

void AddSessionCommands(CLI::App& app, CliContext& ctx) {
  AddInit(app, ctx);
  AddNew(app, ctx);
  AddList(app, ctx);
  AddRename(app, ctx);
  AddSessionVerb(app, ctx, "archive", "Archive a session (hidden from ls, kept)", "archived",
                 [](Store* s, const std::string& id) { return s->SetArchived(id, true); });
  AddSessionVerb(app, ctx, "unarchive", "Bring an archived session back", "unarchived",
                 [](Store* s, const std::string& id) { return s->SetArchived(id, false); });
  AddRemove(app, ctx);
  AddPurge(app, ctx);
  AddActive(app, ctx);
}

}  // namespace sessiondb::cli
