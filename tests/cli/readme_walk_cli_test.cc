// The README's "Using it" steps, run top to bottom as a new user pastes them
// (issue 20: "the README's steps ... give a user a working install, their own
// history in the page, and a hook and MCP server on the same store"). Every
// line of that block runs in one bash session against a fresh home holding a
// Claude Code history and a screenshot, with this build's sessiondb first on
// PATH. Two lines name things that are not ours: `claude mcp add` is Claude
// Code's own command, here a shell function that writes down the command it
// would register; `sessiondb serve` runs until stopped, so the walk starts it
// on a free port in the background. Then: the page's API lists the imported
// history, `open` names its address, the hook's settings hold this binary and
// the walk's store by absolute path, and the registered MCP command, run as
// Claude Code would run it, finds the imported history in the same store.
#include <signal.h>
#include <sys/wait.h>

#include <regex>
#include <sstream>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class ReadmeWalk : public Cli {
 protected:
  static std::string Root() {
    return std::filesystem::path(SESSIONDB_PG_CLUSTER_SCRIPT).parent_path().parent_path();
  }

  // The indented lines under "## Using it", up to the next paragraph, with
  // their trailing "# ..." comments (two spaces or more before them) cut.
  static std::vector<std::string> UsingItLines() {
    std::istringstream readme(Slurp(Root() + "/README.md"));
    std::vector<std::string> out;
    bool in_section = false;
    for (std::string line; std::getline(readme, line);) {
      if (line.starts_with("## ")) {
        in_section = line == "## Using it";
        continue;
      }
      if (!in_section) continue;
      if (!line.starts_with("    ")) {
        if (!out.empty() && !line.empty()) break;  // the block ended
        continue;
      }
      std::string command = line.substr(4);
      if (command.starts_with("#")) continue;  // a continued comment
      command = std::regex_replace(command, std::regex(R"(\s{2,}#.*$)"), "");
      out.push_back(command);
    }
    return out;
  }
};

TEST_F(ReadmeWalk, UsingItStepsGiveTheUsersHistoryInThePageTheHookAndMcpOnOneStore) {
  const std::vector<std::string> lines = UsingItLines();
  ASSERT_GT(lines.size(), 10u) << "README's \"Using it\" block was not found";
  const std::string work = dir_.Sub("work");
  std::filesystem::create_directories(work);
  std::filesystem::create_directories(home_ + "/.claude/projects/-home-dev-app");
  std::ofstream(home_ +
                "/.claude/projects/-home-dev-app/0a0a0a0a-0000-4000-8000-000000000001.jsonl")
      << R"({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"0a0a0a0a-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00Z","cwd":"/home/dev/app","message":{"role":"user","content":"why does the token limit trip on the parser"}})"
      << "\n"
      << R"({"type":"assistant","uuid":"u2","parentUuid":"u1","sessionId":"0a0a0a0a-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:05Z","cwd":"/home/dev/app","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"The parser reads the whole file first."}]}})"
      << "\n";
  WriteFile("shot.png", MakePng(8, 6, "readme"));
  std::filesystem::copy_file(dir_.Sub("shot.png"), work + "/shot.png");

  const std::string bin = std::filesystem::path(SESSIONDB_CLI_PATH).parent_path().string();
  const std::string registered = dir_.Sub("mcp-command");
  const std::string serve_log = dir_.Sub("serve.log");
  std::ostringstream script;
  script
      << "set -euo pipefail\n"
      << "export PATH='" << bin << "':\"$PATH\" HOME='" << home_ << "' NO_COLOR=1"
      << " SESSIONDB_PAGER=cat\n"
      << "unset XDG_DATA_HOME SESSIONDB_NAMESPACE SESSIONDB_STORE SESSIONDB_URL BROWSER DISPLAY\n"
      << "cd '" << work
      << "'\n"
      // Claude Code's command: writes down, one word per line, what it would run.
      << "claude() { shift 4; printf '%s\\n' \"$@\" > '" << registered << "'; }\n";
  bool saw_serve = false, saw_mcp = false, saw_hook = false;
  for (const std::string& line : lines) {
    if (line == "sessiondb serve") {
      saw_serve = true;
      script << "sessiondb serve --port 0 > '" << serve_log << "' 2>&1 &\n"
             << "SERVE_PID=$!\n";
      continue;
    }
    saw_mcp |= line.starts_with("claude mcp add");
    saw_hook |= line.starts_with("sessiondb hook install");
    script << line << "\n";
  }
  ASSERT_TRUE(saw_serve && saw_mcp && saw_hook) << "the README's steps changed; update this walk";
  // What the walk left for the checks below.
  script << "for i in $(seq 100); do grep -q http:// '" << serve_log
         << "' && break; sleep 0.1; done\n"
         << "URL=$(grep -o 'http://[^ ]*' '" << serve_log << "' | head -1)\n"
         << "URL=${URL%/}\n"
         << "echo \"walk-store=$SESSIONDB_STORE\"\n"
         << "echo \"walk-sessions=$(curl -sf \"$URL/v1/sessions?limit=50\" | jq -r "
            "'.sessions[].title' | tr '\\n' '|')\"\n"
         << "IMPORTED=$(sessiondb ls --json --full | jq -r '.sessions[] | select(.title | "
            "test(\"token limit\")) | .id')\n"
         << "echo \"walk-open=$(sessiondb open \"$IMPORTED\" --print --url \"$URL\")\"\n"
         << "kill $SERVE_PID; wait $SERVE_PID || true\n";
  const std::string path = dir_.Sub("walk.sh");
  std::ofstream(path) << script.str();
  const std::string log = dir_.Sub("walk.log");
  const int status = std::system(("bash " + path + " > " + log + " 2>&1 < /dev/null").c_str());
  const std::string said = Slurp(log);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << said << "\n" << script.str();

  const std::string store = home_ + "/chats";
  EXPECT_NE(said.find("walk-store=" + store + "\n"), std::string::npos) << said;
  // The user's own history is in the page (through its API), beside the walk's session.
  EXPECT_NE(said.find("why does the token limit trip on the parser"), std::string::npos) << said;
  EXPECT_NE(said.find("walk-sessions="), std::string::npos) << said;
  EXPECT_NE(said.find("Bug triage|"), std::string::npos) << said;
  EXPECT_NE(said.find("/#/s/0a0a0a0a-0000-4000-8000-000000000001"), std::string::npos) << said;
  // The hook is wired to this binary and the walk's store, by absolute paths.
  const std::string settings = Slurp(home_ + "/.claude/settings.json");
  EXPECT_NE(settings.find(std::filesystem::canonical(SESSIONDB_CLI_PATH).string()),
            std::string::npos)
      << settings;
  EXPECT_NE(settings.find(store), std::string::npos) << settings;

  // The MCP server Claude Code would start: the same store, the imported history.
  std::vector<std::string> argv;
  {
    std::istringstream words(Slurp(registered));
    for (std::string w; std::getline(words, w);) argv.push_back(w);
  }
  ASSERT_GE(argv.size(), 3u) << Slurp(registered);
  EXPECT_EQ(argv[0], "sessiondb");
  ASSERT_EQ(argv.back(), "mcp");
  const std::string requests =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"walk","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_history","arguments":{"query":"token limit","mode":"keyword"}}})"
      "\n";
  std::vector<std::string> mcp(argv.begin() + 1, argv.end());  // the binary is this build's
  CliRun r = Run(mcp, {.input = requests, .with_store = false});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("token limit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0a0a0a0a-0000-4000-8000-000000000001"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace sessiondb::testing
