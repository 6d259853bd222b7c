// Issue 20, item 6: a session's project is recorded one way whoever writes
// it (the "cwd" of an imported Claude Code or Codex history, the metadata of
// `new`), so `ls --meta project=P`, MCP's list_sessions {project} and
// `search --project P` find the same sessions however P is typed.
#include <set>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class ProjectFilterCli : public Cli {
 protected:
  void ImportHistories() {
    // Claude Code writes the folder with a trailing slash here; Codex with a "./".
    // Claude Code names a session's file after its id.
    const std::string claude = WriteFile(
        "cc-app.jsonl",
        R"({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cc-app","timestamp":"2026-01-01T00:00:00Z","cwd":"/home/dev/app/","message":{"role":"user","content":"the gyroscope drifts in app"}})"
        "\n");
    const std::string codex = WriteFile(
        "codex.jsonl",
        R"({"type":"session_meta","timestamp":"2026-01-02T00:00:00Z","payload":{"id":"cx-app","timestamp":"2026-01-02T00:00:00Z","cwd":"/home/dev/./app"}})"
        "\n"
        R"({"type":"response_item","timestamp":"2026-01-02T00:00:01Z","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"the gyroscope drifts in codex"}]}})"
        "\n");
    // A sibling folder whose name starts with the project's: never its match.
    const std::string sibling = WriteFile(
        "sibling.jsonl",
        R"({"type":"session_meta","timestamp":"2026-01-03T00:00:00Z","payload":{"id":"cx-application","timestamp":"2026-01-03T00:00:00Z","cwd":"/home/dev/application"}})"
        "\n"
        R"({"type":"response_item","timestamp":"2026-01-03T00:00:01Z","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"the gyroscope drifts elsewhere"}]}})"
        "\n");
    ASSERT_EQ(Sdb({"import", claude, "--format", "claude-code"}).exit_code, 0);
    ASSERT_EQ(Sdb({"import", codex, "--format", "codex"}).exit_code, 0);
    ASSERT_EQ(Sdb({"import", sibling, "--format", "codex"}).exit_code, 0);
    // A session made by hand in the same folder, its project typed loosely.
    made_ = NewSession({"--meta", "project=/home/dev/app//"});
    ASSERT_EQ(Sdb({"append", made_, "the gyroscope drifts by hand"}).exit_code, 0);
  }

  // The ids `ls --meta project=P --json` lists.
  std::set<std::string> Listed(const std::string& project) {
    json page = Sdb({"--json", "ls", "--meta", "project=" + project}).Json();
    std::set<std::string> ids;
    for (const json& s : page["sessions"]) ids.insert(s["id"].get<std::string>());
    return ids;
  }

  // The sessions `search gyroscope --project P --json` finds.
  std::set<std::string> Searched(const std::string& project) {
    json r =
        Sdb({"--json", "search", "gyroscope", "--mode", "keyword", "--project", project}).Json();
    std::set<std::string> ids;
    for (const json& h : r["hits"]) ids.insert(h["session_id"].get<std::string>());
    return ids;
  }

  // What MCP's list_sessions {project} answers, as text.
  std::string McpListed(const std::string& project) {
    const json call = {
        {"jsonrpc", "2.0"},
        {"id", 1},
        {"method", "tools/call"},
        {"params", {{"name", "list_sessions"}, {"arguments", {{"project", project}}}}}};
    CliRun r = Run({"mcp"}, {.input = call.dump() + "\n"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  std::string made_;
};

TEST_F(ProjectFilterCli, ImportsAndAppendsRecordOneNormalProject) {
  ImportHistories();
  const json cc = Sdb({"--json", "show", "cc-app"}).Json();
  EXPECT_EQ(cc["session"]["metadata"]["project"], "/home/dev/app") << cc.dump();
  EXPECT_EQ(cc["session"]["metadata"]["cwd"], "/home/dev/app/");  // the source's own, kept
  const json made = Sdb({"--json", "show", made_}).Json();
  EXPECT_EQ(made["session"]["metadata"]["project"], "/home/dev/app");
}

TEST_F(ProjectFilterCli, LsMcpAndSearchAgreeHoweverTheFolderIsTyped) {
  ImportHistories();
  const std::set<std::string> app = {"cc-app", "cx-app", made_};
  for (const std::string typed : {"/home/dev/app", "/home/dev/app/", "/home/dev/./app"}) {
    EXPECT_EQ(Listed(typed), app) << typed;
    EXPECT_EQ(Searched(typed), app) << typed;
    const std::string mcp = McpListed(typed);
    for (const std::string& id : app) EXPECT_NE(mcp.find(id), std::string::npos) << typed << mcp;
    EXPECT_EQ(mcp.find("cx-application"), std::string::npos) << typed << mcp;
  }
  EXPECT_EQ(Listed("/home/dev/application"), (std::set<std::string>{"cx-application"}));
  EXPECT_EQ(Searched("/home/dev/application"), (std::set<std::string>{"cx-application"}));
  // A parent folder finds every project under it in search (ls is exact).
  EXPECT_EQ(Searched("/home/dev").size(), 4u);
  EXPECT_TRUE(Listed("/home/dev").empty());
}

}  // namespace
}  // namespace sessiondb::testing
