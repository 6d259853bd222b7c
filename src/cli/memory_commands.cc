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

// The command Claude Code should run: this binary, by absolute path, with the
// store it was given.
std::string HookCommand(const CliContext& ctx) {
  std::error_code ec;
  std::string self = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) self = "sessiondb";
  std::string cmd = self;
  if (!ctx.options.store.empty()) {
    cmd += " --store '" + fs::absolute(ctx.options.store, ec).string() + "'";
  }
  return cmd;
}

void AddHook(CLI::App& app, CliContext& ctx) {
  auto* hook = app.add_subcommand("hook", "Agent hooks: code memory and churn for coding agents");
  hook->require_subcommand(1);

  auto mode = std::make_shared<std::string>("content");
  auto* claude = hook->add_subcommand(
      "claude-code", "Handle one Claude Code hook event (JSON on stdin); never blocks on errors");
  claude
      ->add_option("--seen", *mode,
                   "When to show context again: content (default: once per distinct change), "
                   "file (once per file), session-file (once per session and file)")
      ->option_text("MODE");
  claude->footer(
      "\nPostToolUse on Write/Edit/MultiEdit keeps the write. PreToolUse finds similar\n"
      "past code and churn warnings and, the first time it sees the write, denies it\n"
      "with them as the reason; the retry passes. Errors are logged to stderr and the\n"
      "call goes on. Install with `sessiondb hook install claude-code`.");
  claude->callback([&ctx, mode] {
    std::string too_big;
    const std::optional<std::string> event = ReadHookEvent(std::cin, &too_big);
    if (!event) {  // never buffered whole; the call goes on, as on any error
      std::cerr << "hook: " << too_big << "; allowed\n";
      ctx.set_exit_code(kExitOk);
      return;
    }
    std::string log;
    std::unique_ptr<Store> store;  // before memory: it must outlive it
    std::unique_ptr<CodeMemory> memory;
    auto seen = ParseSeenKeyMode(*mode);
    if (!seen) {
      log = "hook: " + seen.error().message() + "; using content";
    }
    // A hook must not fail the agent: a store that cannot be opened (or is
    // missing: it is created) only means no context this time.
    const std::string path = ctx.StorePath();
    auto opened = Store::Open(path, ctx.MakeStoreOptions(/*create_if_missing=*/true))
                      .and_then([&store](std::unique_ptr<Store> s) {
                        store = std::move(s);
                        return CodeMemory::Open(*store);
                      });
    if (opened) {
      memory = std::move(*opened);
    } else {
      log += "hook: cannot open the store at " + path + ": " + opened.error().message();
    }
    HookAnswer answer =
        HandleClaudeCodeHook(*event, memory.get(), seen ? *seen : SeenKeyMode::kContent);
    std::cout << answer.stdout_text << std::flush;
    if (!log.empty()) std::cerr << log << "\n";
    if (!answer.log.empty() && std::getenv("SESSIONDB_HOOK_QUIET") == nullptr) {
      std::cerr << answer.log << "\n";
    }
    ctx.set_exit_code(kExitOk);
  });

  auto* install =
      hook->add_subcommand("install", "Print or write the settings that install a hook");
  install->require_subcommand(1);
  struct InstallArgs {
    bool write = false;
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
  install_claude->callback([&ctx, iargs] {
    const std::string snippet = ClaudeCodeHookSettings(HookCommand(ctx));
    if (!iargs->write) {
      std::cout << snippet;
      return;
    }
    std::string file = iargs->settings;
    if (file.empty()) {
      const char* home = std::getenv("HOME");
      if (home == nullptr)
        return ctx.Fail(Status::InvalidArgument("HOME is unset; give --settings"));
      file = std::string(home) + "/.claude/settings.json";
    }
    nlohmann::json settings = nlohmann::json::object();
    std::ifstream in(file);
    if (in) {
      const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      Result<nlohmann::json> parsed = ParseJson(text);
      if (!parsed) {
        return ctx.Fail(Status::InvalidArgument(file + " is not valid JSON (" +
                                                parsed.error().message() +
                                                "); fix it or merge this by hand:\n" + snippet));
      }
      settings = std::move(*parsed);
      if (!settings.is_object()) {
        return ctx.Fail(Status::InvalidArgument(file + " is not a JSON object; not changed"));
      }
    }
    nlohmann::json ours = ParseJson(snippet).value_or(nlohmann::json::object());
    nlohmann::json& hooks = settings["hooks"];
    if (!hooks.is_object()) hooks = nlohmann::json::object();
    for (const char* event : {"PreToolUse", "PostToolUse"}) {
      nlohmann::json& list = hooks[event];
      if (!list.is_array()) list = nlohmann::json::array();
      // Replace an earlier sessiondb entry rather than adding a second one.
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& entry : list) {
        if (entry.dump().find(" hook claude-code") == std::string::npos) kept.push_back(entry);
      }
      kept.push_back(ours["hooks"][event][0]);
      list = std::move(kept);
    }
    std::error_code ec;
    fs::create_directories(fs::path(file).parent_path(), ec);
    const std::string tmp = file + ".sessiondb-tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << settings.dump(2) << "\n";
      if (!out) return ctx.Fail(Status::Io("cannot write " + tmp));
    }
    fs::rename(tmp, file, ec);
    if (ec) return ctx.Fail(Status::Io("cannot replace " + file + ": " + ec.message()));
    std::cout << "installed the sessiondb hook in " << file << "\n";
  });
}

}  // namespace

void AddMemoryCommands(CLI::App& app, CliContext& ctx) {
  AddRecall(app, ctx);
  AddChurn(app, ctx);
  AddHook(app, ctx);
}

}  // namespace sessiondb::cli
