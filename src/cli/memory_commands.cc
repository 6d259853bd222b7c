// Verbs of the agents' code memory: recall, churn, hook.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/hook_command.h"
#include "cli/hook_server.h"
#include "cli/hook_settings.h"
#include "cli/numeric_options.h"
#include "cli/shell_words.h"
#include "core/json_parse.h"
#include "sessiondb/memory.h"

namespace sessiondb::cli {
namespace {

namespace fs = std::filesystem;

void AddRecall(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string path, code_file;
    int limit = 3;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("recall", "Past code writes most like a file (one per file)");
  cmd->add_option("PATH", args->path, "The file about to be written")->required();
  cmd->add_option("--code-file", args->code_file,
                  "Read the code from here (default: PATH itself, else stdin)")
      ->option_text("FILE");
  cmd->add_option("--limit", args->limit, "At most this many files (default 3)");
  cmd->callback([&ctx, args] {
    std::string source = args->code_file.empty() ? args->path : args->code_file;
    std::string code;
    std::ifstream in(source, std::ios::binary);
    if (in) {
      code.assign(std::istreambuf_iterator<char>(in), {});
    } else if (!args->code_file.empty()) {
      return ctx.Fail(Status::NotFound("cannot read " + args->code_file));
    } else {
      code.assign(std::istreambuf_iterator<char>(std::cin), {});
    }
    CodeMemory* memory = ctx.OpenCodeMemory();
    if (!memory) return;
    auto recalled = memory->Recall(args->path, code, args->limit);
    if (!recalled) return ctx.Fail(recalled.error());
    if (ctx.options.json) {
      Json out = Json::array();
      for (const RecalledCode& r : *recalled) {
        out.push_back(ToJson(r));
      }
      return ctx.PrintJson(out);
    }
    if (recalled->empty()) std::cout << "nothing similar in the code memory\n";
    for (const RecalledCode& r : *recalled) {
      std::cout << r.file_path << "  " << FormatTime(r.time_ms)
                << (r.project.empty() ? "" : "  " + r.project) << "\n"
                << r.preview << "\n\n";
    }
  });
}

void AddChurn(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool functions = false;
    std::string path;
    int limit = 20;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("churn", "Files (or functions) edited most, with their tier");
  cmd->add_flag("--functions", args->functions, "Per function instead of per file");
  cmd->add_option("--path", args->path, "Only files under this path")->option_text("PREFIX");
  cmd->add_option("--limit", args->limit, "At most this many (default 20)");
  cmd->footer(
      "\nTiers by edits in 30 days: gold 0-2, silver 3-10, bronze 11-20, red over 20\n"
      "or 5 and more in 24 hours. Edits are the code writes in the memory.");
  cmd->callback([&ctx, args] {
    CodeMemory* memory = ctx.OpenCodeMemory();
    if (!memory) return;
    auto hot = memory->Hotspots(
        {.path_prefix = args->path, .functions = args->functions, .limit = args->limit});
    if (!hot) return ctx.Fail(hot.error());
    if (ctx.options.json) {
      Json out = Json::array();
      for (const ChurnEntry& e : *hot) {
        out.push_back(ToJson(e));
      }
      return ctx.PrintJson(out);
    }
    if (hot->empty()) {
      std::cout << "no edits in the last 30 days\n";
      return;
    }
    Table t({"TIER", "30D", "24H", args->functions ? "FUNCTION" : "FILE"});
    for (const ChurnEntry& e : *hot) {
      t.AddRow({std::string(ChurnTierName(e.tier)), std::to_string(e.edits_30d),
                std::to_string(e.edits_24h),
                args->functions ? e.file_path + ": " + e.function : e.file_path});
    }
    t.Print(std::cout);
  });
}

// The command Claude Code should run: this binary by its absolute path, with
// the store (and namespace) in use now, made absolute, so the hook finds the
// same store whatever directory and environment Claude Code runs it in.
Result<std::string> HookCommand(const CliContext& ctx) {
  const std::string self = SelfExecutable();
  if (self.empty()) {
    return Err(Status::Internal("cannot read this program's path from /proc/self/exe"));
  }
  const std::string store = AbsoluteStoreLocation(ctx.StorePath());
  std::string command = ShellQuote(self) + " --store " + ShellQuote(store);
  // A namespace means something only to a PostgreSQL store (an embedded one refuses it).
  const std::string name_space = ctx.MakeStoreOptions(false).namespace_name;
  if (!name_space.empty() && IsDatabaseUri(store)) {
    command += " --namespace " + ShellQuote(name_space);
  }
  return command;
}

// The settings file a verb edits: --settings, else ~/.claude/settings.json.
Result<std::string> SettingsFile(const std::string& given) {
  if (!given.empty()) return given;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    return Err(Status::InvalidArgument("HOME is unset; give --settings"));
  }
  return std::string(home) + "/.claude/settings.json";
}

// The text of the settings file; nullopt if there is none. Refuses (and so
// leaves alone) anything but a regular file of at most kMaxSettingsBytes.
Result<std::optional<std::string>> ReadSettings(const std::string& file) {
  std::error_code ec;
  const fs::file_status status = fs::status(file, ec);
  if (status.type() == fs::file_type::not_found) return std::optional<std::string>();
  if (ec) return Err(Status::Io("cannot read " + file + ": " + ec.message()));
  if (status.type() != fs::file_type::regular) {
    return Err(Status::InvalidArgument(file + " is not a regular file; not changed"));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in.is_open()) return Err(Status::Io("cannot open " + file + "; not changed"));
  std::string text(kMaxSettingsBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Err(Status::Io("cannot read " + file));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxSettingsBytes) {
    return Err(Status::InvalidArgument(file + " is larger than " +
                                       std::to_string(kMaxSettingsBytes >> 20) +
                                       " MiB, the most read; not changed"));
  }
  return std::optional<std::string>(std::move(text));
}

// Replaces the settings file (the file a symbolic link names, if it is one)
// with `text`, through a temporary file renamed into place that keeps the
// old file's permissions (settings may hold keys: a 0600 file stays 0600).
Status WriteSettings(const std::string& file, const std::string& text) {
  std::error_code ec;
  fs::path target = file;
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    target = fs::canonical(target, ec);
    if (ec) return Status::Io("cannot resolve " + file + ": " + ec.message());
  }
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = target.string() + ".sessiondb-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status::Io("cannot write " + tmp);
  }
  const fs::file_status old = fs::status(target, ec);
  if (!ec && fs::exists(old)) fs::permissions(tmp, old.permissions(), ec);
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::Io("cannot replace " + target.string() + ": " + ec.message());
  }
  return Status::Ok();
}

void AddHook(CLI::App& app, CliContext& ctx) {
  auto* hook = app.add_subcommand("hook", "Agent hooks: code memory and churn for coding agents");
  hook->require_subcommand(1);

  auto mode = std::make_shared<std::string>("content");
  auto* claude = hook->add_subcommand(
      "claude-code", "Handle one Claude Code hook event (JSON on stdin); never blocks on errors");
  OfferValues(claude->add_option("--seen", *mode,
                                 "When to show context again: content (default: once per distinct "
                                 "change), file (once per file), session-file (once per session "
                                 "and file)"),
              {"content", "file", "session-file"})
      ->option_text("MODE");
  claude->footer(
      "\nPreToolUse and PostToolUse of Write/Edit/MultiEdit/NotebookEdit keep the file\n"
      "as it was before and after (code checkpoints); PostToolUse of Bash keeps the\n"
      "files the command changed. PostToolUse of Write/Edit/MultiEdit keeps the write\n"
      "in the code memory. PreToolUse finds similar\n"
      "past code and churn warnings and, the first time it sees the write, denies it\n"
      "with them as the reason; the retry passes. Errors are logged to stderr and the\n"
      "call goes on. Install with `sessiondb hook install claude-code`.");
  auto no_checkpoints = std::make_shared<bool>(false);
  claude->add_flag("--no-checkpoints", *no_checkpoints,
                   "Keep no code checkpoints (each file before and after a write)");
  auto resident = std::make_shared<bool>(false);
  claude->add_flag("--resident", *resident,
                   "When no `hook serve` answers for this store, start one for the next calls "
                   "(it ends after 10 minutes without a call)");
  claude->callback([&ctx, mode, no_checkpoints, resident] {
    RunClaudeCodeHook(ctx, *mode, /*leave_store_open=*/false, /*checkpoints=*/!*no_checkpoints,
                      *resident);
  });

  auto serve_options = std::make_shared<HookServeOptions>();
  auto* serve = hook->add_subcommand(
      "serve",
      "Keep the store open and answer `hook claude-code`, `ls` and `show` over a private socket");
  serve
      ->add_option("--idle-exit", serve_options->idle_exit_seconds,
                   "End after this many seconds without a call (0: never; default 600)")
      ->check(NumberIn(0, int64_t{86400} * 365))
      ->option_text("SECONDS");
  serve
      ->add_option("--request-timeout-ms", serve_options->client_timeout_ms,
                   "How long a connected hook may take to send its call (default 5000)")
      ->check(NumberIn(1, 600000))
      ->option_text("MS");
  serve->add_flag("--quiet", serve_options->quiet, "Print no line per call");
  serve->footer(
      "\nEvery `hook claude-code` of this store (same --store, --namespace and key file)\n"
      "asks the server first and answers alone when none runs, so the answers are the\n"
      "same; a call then skips opening the store. The socket is in\n"
      "$XDG_RUNTIME_DIR/sessiondb-UID (else /tmp/sessiondb-UID), a folder only you can\n"
      "enter, and the server answers only your own processes. Ends on SIGTERM, SIGINT,\n"
      "after --idle-exit, or when the store's database file is replaced. One server per\n"
      "store: a second exits with code 5; the lock file beside the socket holds the\n"
      "running one's pid. `hook claude-code --resident` starts one.\n"
      "\n`ls` and `show` of this store, when their stdout is not a terminal, are answered\n"
      "by the server too: the same command line run on its open store, the same output.");
  serve->callback([&ctx, serve_options] {
    const Status served = ServeHookCalls(ctx, *serve_options);
    if (!served.ok()) ctx.Fail(served);
  });

  auto* install =
      hook->add_subcommand("install", "Print or write the settings that install a hook");
  install->require_subcommand(1);
  struct InstallArgs {
    bool write = false;
    bool resident = false;
    std::string settings;
  };
  auto iargs = std::make_shared<InstallArgs>();
  auto* install_claude = install->add_subcommand("claude-code", "Claude Code's hooks settings");
  install_claude->add_flag("--write", iargs->write,
                           "Merge into the settings file instead of printing");
  install_claude
      ->add_option("--settings", iargs->settings,
                   "The settings file (default ~/.claude/settings.json)")
      ->option_text("FILE");
  install_claude->add_flag("--resident", iargs->resident,
                           "The hook starts a resident server of the store for its next calls "
                           "(`hook claude-code --resident`)");
  install_claude->footer(
      "\nThe hook runs this binary by its absolute path with the store in use now (--store,\n"
      "else $SESSIONDB_STORE, else the default), made absolute. `hook uninstall claude-code`\n"
      "removes exactly these entries again.\n"
      "\nExample:\n  sessiondb --store ~/chats hook install claude-code --write");
  install_claude->callback([&ctx, iargs] {
    Result<std::string> command = HookCommand(ctx);
    if (!command) return ctx.Fail(command.error());
    const std::string snippet = ClaudeCodeHookSettings(*command, iargs->resident);
    if (!iargs->write) {
      std::cout << snippet;
      return;
    }
    Result<std::string> file = SettingsFile(iargs->settings);
    if (!file) return ctx.Fail(file.error());
    Result<std::optional<std::string>> old = ReadSettings(*file);
    if (!old) return ctx.Fail(old.error());
    Result<nlohmann::json> ours = ParseJson(snippet);
    if (!ours) return ctx.Fail(ours.error());
    Result<SettingsEdit> edit = old->has_value()
                                    ? InstallHookEntries(**old, (*ours)["hooks"])
                                    : Result<SettingsEdit>(SettingsEdit{.text = snippet});
    if (!edit) {
      return ctx.Fail(Status::InvalidArgument(*file + ": " + edit.error().message() +
                                              "; not changed. Fix it, or merge this by hand:\n" +
                                              snippet));
    }
    if (Status s = WriteSettings(*file, edit->text); !s.ok()) return ctx.Fail(s);
    const std::string store = AbsoluteStoreLocation(ctx.StorePath());
    if (ctx.options.json) {
      return ctx.PrintJson({{"settings", *file},
                            {"events", {"PreToolUse", "PostToolUse"}},
                            {"command", *command + " hook claude-code"},
                            {"store", store},
                            {"replaced", edit->removed}});
    }
    std::cout << "installed the sessiondb hook in " << *file << "\n"
              << "  on:      PreToolUse of Write|Edit|MultiEdit|NotebookEdit, PostToolUse of\n"
              << "           those and Bash\n"
              << "  command: " << *command << " hook claude-code\n"
              << "  store:   " << store << "\n";
    if (edit->removed > 0) {
      std::cout << "  (replacing " << edit->removed << " earlier sessiondb entr"
                << (edit->removed == 1 ? "y" : "ies") << ")\n";
    }
  });

  auto* uninstall = hook->add_subcommand(
      "uninstall", "Remove the hook entries `hook install --write` wrote, and nothing else");
  uninstall->require_subcommand(1);
  auto settings_file = std::make_shared<std::string>();
  auto* uninstall_claude = uninstall->add_subcommand("claude-code", "Claude Code's hooks settings");
  uninstall_claude
      ->add_option("--settings", *settings_file,
                   "The settings file (default ~/.claude/settings.json)")
      ->option_text("FILE");
  uninstall_claude->footer(
      "\nRemoves the sessiondb entries under hooks.PreToolUse and hooks.PostToolUse (and an\n"
      "array, or \"hooks\", left empty by that); every other byte of the file stays.\n"
      "\nExample:\n  sessiondb hook uninstall claude-code");
  uninstall_claude->callback([&ctx, settings_file] {
    Result<std::string> file = SettingsFile(*settings_file);
    if (!file) return ctx.Fail(file.error());
    Result<std::optional<std::string>> old = ReadSettings(*file);
    if (!old) return ctx.Fail(old.error());
    int removed = 0;
    if (old->has_value()) {
      Result<SettingsEdit> edit = RemoveHookEntries(**old);
      if (!edit) {
        return ctx.Fail(
            Status::InvalidArgument(*file + ": " + edit.error().message() + "; not changed"));
      }
      removed = edit->removed;
      if (removed > 0) {
        if (Status s = WriteSettings(*file, edit->text); !s.ok()) return ctx.Fail(s);
      }
    }
    if (ctx.options.json) return ctx.PrintJson({{"settings", *file}, {"removed", removed}});
    if (removed == 0) {
      std::cout << "no sessiondb hook in " << *file << "; nothing changed\n";
    } else {
      std::cout << "removed " << removed << " sessiondb hook entr" << (removed == 1 ? "y" : "ies")
                << " from " << *file << "\n";
    }
  });
}

}  // namespace

void AddMemoryCommands(CLI::App& app, CliContext& ctx) {
  AddRecall(app, ctx);
  AddChurn(app, ctx);
  AddHook(app, ctx);
}

}  // namespace sessiondb::cli
