// `sessiondb hook install claude-code` and `hook uninstall claude-code`
// through the real binary: the settings name this binary and the store in use
// by their absolute paths, whatever directory or variable they came from;
// uninstall takes out exactly what install put in, byte for byte; a settings
// file that is malformed, too large or of the wrong shape is refused and left
// as it was.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

class HookInstall : public Cli {
 protected:
  void SetUp() override {
    fs::create_directories(work_);
    fs::create_directories(home_);
  }

  // `sessiondb ARGS` run in `cwd`, with HOME the test's and the store
  // variables unset unless `env` sets them (no --store is added).
  CliRun RunIn(const std::string& cwd, const std::vector<std::string>& args,
               std::map<std::string, std::optional<std::string>> env = {}) {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const std::string out = dir_.Sub("run.out"), err = dir_.Sub("run.err");
    std::map<std::string, std::optional<std::string>> all = {{"HOME", home_},
                                                             {"SESSIONDB_STORE", std::nullopt},
                                                             {"XDG_DATA_HOME", std::nullopt},
                                                             {"SESSIONDB_NAMESPACE", std::nullopt}};
    for (const auto& [k, v] : env) all[k] = v;
    const pid_t pid = fork();
    if (pid == 0) {
      for (const auto& [k, v] : all) v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
      const int in_fd = open("/dev/null", O_RDONLY);
      const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in_fd < 0 || out_fd < 0 || err_fd < 0 || chdir(cwd.c_str()) != 0) _exit(126);
      dup2(in_fd, STDIN_FILENO);
      dup2(out_fd, STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      alarm(60);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    CliRun r;
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
      ADD_FAILURE() << "could not run " << SESSIONDB_CLI_PATH;
      return r;
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }

  // The command of each of our hook entries in `file` (PreToolUse, PostToolUse).
  std::vector<std::string> HookCommands(const std::string& file) {
    json settings = json::parse(Slurp(file), nullptr, false);
    std::vector<std::string> commands;
    for (const char* event : {"PreToolUse", "PostToolUse"}) {
      for (const json& entry : settings["hooks"][event]) {
        // Ours: PreToolUse of the file tools, PostToolUse of those and
        // Bash; and the matcher earlier versions (and other tools) use.
        const std::string want = std::string(event) == "PreToolUse"
                                     ? "Write|Edit|MultiEdit|NotebookEdit"
                                     : "Write|Edit|MultiEdit|NotebookEdit|Bash";
        const std::string matcher = entry.value("matcher", "");
        if (matcher != want && matcher != "Write|Edit|MultiEdit") continue;
        commands.push_back(entry["hooks"][0]["command"].get<std::string>());
      }
    }
    return commands;
  }

  // What install must write for `store`: this binary, resolved, and the store.
  static std::string Expected(const std::string& store) {
    return fs::canonical(SESSIONDB_CLI_PATH).string() + " --store " + store + " hook claude-code";
  }

  std::string work_ = dir_.Sub("work");
  std::string settings_ = dir_.Sub("settings.json");
};

TEST_F(HookInstall, ARelativeStoreIsWrittenAsAnAbsolutePath) {
  CliRun r = RunIn(work_, {"--store", "relative/dir", "hook", "install", "claude-code", "--write",
                           "--settings", settings_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string store = work_ + "/relative/dir";
  const std::vector<std::string> commands = HookCommands(settings_);
  ASSERT_EQ(commands.size(), 2u) << Slurp(settings_);
  for (const std::string& command : commands) EXPECT_EQ(command, Expected(store));
  // It says what it wrote and where.
  EXPECT_TRUE(Contains(r.out, "installed the sessiondb hook in " + settings_)) << r.out;
  EXPECT_TRUE(Contains(r.out, "store:   " + store)) << r.out;
  EXPECT_TRUE(Contains(r.out, "command: " + Expected(store))) << r.out;

  // Printed rather than written, the snippet names the same absolute store.
  CliRun printed = RunIn(work_, {"--store", "./relative/dir/", "hook", "install", "claude-code"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_EQ(json::parse(printed.out)["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            Expected(store));
}

TEST_F(HookInstall, TheStoreVariableAndTheDefaultAreResolvedAtInstallTime) {
  CliRun from_env =
      RunIn(work_, {"hook", "install", "claude-code", "--write", "--settings", settings_},
            {{"SESSIONDB_STORE", "from-env"}});
  ASSERT_EQ(from_env.exit_code, 0) << from_env.err;
  EXPECT_EQ(HookCommands(settings_), std::vector<std::string>(2, Expected(work_ + "/from-env")));

  // Installing again replaces the entry rather than adding a second one.
  CliRun by_default =
      RunIn(work_, {"hook", "install", "claude-code", "--write", "--settings", settings_});
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_EQ(HookCommands(settings_),
            std::vector<std::string>(2, Expected(home_ + "/.local/share/sessiondb")));

  // The default settings file is ~/.claude/settings.json, created with its folder.
  CliRun home = RunIn(work_, {"hook", "install", "claude-code", "--write"},
                      {{"XDG_DATA_HOME", dir_.Sub("xdg")}});
  ASSERT_EQ(home.exit_code, 0) << home.err;
  EXPECT_EQ(HookCommands(home_ + "/.claude/settings.json"),
            std::vector<std::string>(2, Expected(dir_.Sub("xdg") + "/sessiondb")));
}

TEST_F(HookInstall, TheNamespaceGoesWithAPostgresStoreOnly) {
  auto command = [&](const std::vector<std::string>& args,
                     std::map<std::string, std::optional<std::string>> env) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"hook", "install", "claude-code"});
    CliRun r = RunIn(work_, all, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["hooks"]["PreToolUse"][0]["hooks"][0]["command"].get<std::string>();
  };
  const std::string uri = "postgresql://me@db.internal/chats";
  EXPECT_EQ(command({"--store", uri}, {{"SESSIONDB_NAMESPACE", "team-a"}}),
            fs::canonical(SESSIONDB_CLI_PATH).string() + " --store " + uri +
                " --namespace team-a hook claude-code");
  // An embedded store refuses a namespace, so none is written for one.
  EXPECT_EQ(command({"--store", "local"}, {{"SESSIONDB_NAMESPACE", "team-a"}}),
            Expected(work_ + "/local"));
}

TEST_F(HookInstall, TheInstalledCommandFindsItsStoreFromAnyDirectory) {
  ASSERT_EQ(RunIn(work_, {"--store", "rel", "hook", "install", "claude-code", "--write",
                          "--settings", settings_})
                .exit_code,
            0);
  const std::string command = HookCommands(settings_).at(1);  // PostToolUse keeps the write
  const std::string event = WriteFile(
      "event.json",
      json{{"hook_event_name", "PostToolUse"},
           {"session_id", "s1"},
           {"cwd", "/tmp"},
           {"tool_name", "Write"},
           {"tool_input", {{"file_path", "/tmp/x.py"}, {"content", "def f():\n    return 1\n"}}}}
          .dump());
  // Run the way Claude Code runs it: a shell, somewhere else, no store variables.
  const std::string elsewhere = dir_.Sub("elsewhere");
  fs::create_directories(elsewhere);
  const std::string shell = "cd '" + elsewhere + "' && env -u SESSIONDB_STORE -u XDG_DATA_HOME " +
                            command + " < '" + event + "' > /dev/null 2>&1";
  EXPECT_EQ(std::system(shell.c_str()), 0) << shell;
  EXPECT_TRUE(fs::exists(work_ + "/rel/sessiondb.db"))
      << "the hook did not use " << work_ << "/rel";
  EXPECT_FALSE(fs::exists(elsewhere + "/rel"));
}

TEST_F(HookInstall, UninstallLeavesEveryOtherByteAsItWas) {
  // Someone else's hooks, in their own spacing and order, on the same events.
  const std::string original =
      "{\n"
      "    \"model\": \"opus\",\n"
      "    \"hooks\": {\n"
      "        \"PreToolUse\": [\n"
      "            { \"matcher\": \"Bash\", \"hooks\": [ {\"type\": \"command\", \"command\": "
      "\"/usr/bin/audit --strict\"} ] },\n"
      "            {\"matcher\": \"Write|Edit|MultiEdit\", \"hooks\": [{\"type\": \"command\", "
      "\"command\": \"/opt/other/lint hook claude-code\"}]}\n"
      "        ],\n"
      "        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n"
      "    },\n"
      "    \"env\": {\"A\": \"b\"}\n"
      "}\n";
  WriteFile("settings.json", original);
  ASSERT_EQ(RunIn(work_, {"--store", "s", "hook", "install", "claude-code", "--write", "--settings",
                          settings_})
                .exit_code,
            0);
  const std::string installed = Slurp(settings_);
  ASSERT_NE(installed, original);
  EXPECT_EQ(HookCommands(settings_).size(), 3u);  // the other lint's entry, and ours twice
  json merged = json::parse(installed);
  EXPECT_EQ(merged["hooks"]["PreToolUse"].size(), 3u);
  EXPECT_EQ(merged["hooks"]["PostToolUse"].size(), 1u);
  EXPECT_EQ(merged["hooks"]["Stop"].size(), 1u);
  EXPECT_EQ(merged["env"]["A"], "b");

  CliRun removed = RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_TRUE(Contains(removed.out, "removed 2 sessiondb hook entries from " + settings_))
      << removed.out;
  EXPECT_EQ(Slurp(settings_), original);

  // The file keeps its permissions through both rewrites (settings may hold keys).
  fs::permissions(settings_, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(RunIn(work_, {"hook", "install", "claude-code", "--write", "--settings", settings_})
                .exit_code,
            0);
  EXPECT_EQ(fs::status(settings_).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_}).exit_code,
            0);
  EXPECT_EQ(fs::status(settings_).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(Slurp(settings_), original);

  // Nothing of ours left: nothing changes, and it says so.
  CliRun again = RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_TRUE(Contains(again.out, "no sessiondb hook in")) << again.out;
  EXPECT_EQ(Slurp(settings_), original);
}

TEST_F(HookInstall, UninstallTakesOutWhatInstallCreated) {
  // A file without hooks: install adds "hooks"; uninstall takes it out again.
  const std::string original = R"({"model":"opus"})";
  WriteFile("settings.json", original);
  ASSERT_EQ(RunIn(work_, {"hook", "install", "claude-code", "--write", "--settings", settings_})
                .exit_code,
            0);
  EXPECT_EQ(HookCommands(settings_).size(), 2u);
  ASSERT_EQ(RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_}).exit_code,
            0);
  EXPECT_EQ(Slurp(settings_), original);

  // A byte order mark before the object (the parser accepts one) stays too.
  const std::string with_bom = "\xEF\xBB\xBF{\"model\": \"opus\"}\n";
  WriteFile("settings.json", with_bom);
  ASSERT_EQ(RunIn(work_, {"hook", "install", "claude-code", "--write", "--settings", settings_})
                .exit_code,
            0);
  EXPECT_TRUE(Slurp(settings_).starts_with("\xEF\xBB\xBF{\"model\": \"opus\","))
      << Slurp(settings_);
  ASSERT_EQ(RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_}).exit_code,
            0);
  EXPECT_EQ(Slurp(settings_), with_bom);

  // An entry of ours in the middle of someone else's: only it goes.
  const std::string mixed =
      R"({"hooks":{"PostToolUse":[{"matcher":"A","hooks":[]},)"
      R"({"matcher":"Write|Edit|MultiEdit","hooks":[{"type":"command","command":")" +
      fs::canonical(SESSIONDB_CLI_PATH).string() +
      R"( --store /x hook claude-code","timeout":10}]},{"matcher":"B","hooks":[]}]}})";
  WriteFile("settings.json", mixed);
  ASSERT_EQ(RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_}).exit_code,
            0);
  EXPECT_EQ(Slurp(settings_),
            R"({"hooks":{"PostToolUse":[{"matcher":"A","hooks":[]},{"matcher":"B","hooks":[]}]}})");
}

TEST_F(HookInstall, ResidentIsWrittenReplacedAndTakenOutLikeTheRest) {
  const std::string original = R"({"model":"opus"})";
  WriteFile("settings.json", original);
  const std::string store = dir_.Sub("store");
  ASSERT_EQ(RunIn(work_, {"--store", store, "hook", "install", "claude-code", "--resident",
                          "--write", "--settings", settings_})
                .exit_code,
            0);
  EXPECT_EQ(HookCommands(settings_), std::vector<std::string>(2, Expected(store) + " --resident"));
  // Installed again without it: the entries are replaced, not added to.
  CliRun again = RunIn(work_, {"--store", store, "hook", "install", "claude-code", "--write",
                               "--settings", settings_, "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(HookCommands(settings_), std::vector<std::string>(2, Expected(store)));
  ASSERT_EQ(RunIn(work_, {"--store", store, "hook", "install", "claude-code", "--resident",
                          "--write", "--settings", settings_})
                .exit_code,
            0);
  CliRun removed = RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(Slurp(settings_), original);
  // Printed, not written: the same command.
  CliRun printed = RunIn(work_, {"--store", store, "hook", "install", "claude-code", "--resident"});
  EXPECT_TRUE(Contains(printed.out, " hook claude-code --resident\"")) << printed.out;
}

TEST_F(HookInstall, AMalformedHugeOrMisshapenSettingsFileIsRefusedAndLeftAlone) {
  const std::vector<std::string> bad = {
      "{not json",
      "[1, 2]",
      R"({"hooks": []})",
      R"({"hooks": {"PreToolUse": {"matcher": "x"}}})",
      std::string(64 * 1024, '[') + std::string(64 * 1024, ']'),  // nested past any cap
      "{\"x\": \"" + std::string(5 * 1024 * 1024, 'a') + "\"}",   // over the 4 MiB read
  };
  for (const std::string& text : bad) {
    WriteFile("settings.json", text);
    for (const std::vector<std::string>& verb :
         {std::vector<std::string>{"hook", "install", "claude-code", "--write"},
          std::vector<std::string>{"hook", "uninstall", "claude-code"}}) {
      std::vector<std::string> args = verb;
      args.insert(args.end(), {"--settings", settings_});
      CliRun r = RunIn(work_, args);
      EXPECT_EQ(r.exit_code, 2) << verb[1] << " on " << text.substr(0, 40) << ": " << r.out;
      EXPECT_TRUE(Contains(r.err, settings_)) << r.err.substr(0, 300);
      EXPECT_TRUE(Slurp(settings_) == text) << verb[1] << " changed " << text.substr(0, 40);
    }
  }
  // The size limit is named.
  CliRun huge = RunIn(work_, {"hook", "uninstall", "claude-code", "--settings", settings_});
  EXPECT_TRUE(Contains(huge.err, "4 MiB")) << huge.err;
  // A directory is not a settings file.
  CliRun dir = RunIn(work_, {"hook", "install", "claude-code", "--write", "--settings", work_});
  EXPECT_EQ(dir.exit_code, 2) << dir.err;
  EXPECT_TRUE(fs::is_directory(work_));
}

}  // namespace
}  // namespace sessiondb::testing
