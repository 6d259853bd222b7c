// docs/cli.md's examples run (issue 20, item 13): every `sessiondb ...` line
// of its code blocks is run by bash, as a reader would paste it, against a
// store with a session for SID (a fresh one per example, so `rm SID` takes
// nothing from the next), the files the examples name, and a PostgreSQL
// store where they name one. Also `init --json`, whose schema version the
// docs once gave wrong, on both backends.
#include <sys/wait.h>

#include <regex>
#include <sstream>

#include "cli_fixture.h"
#include "sessiondb/postgres_schema.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

class DocsExamples : public Cli {
 protected:
  static std::string Root() {
    return std::filesystem::path(SESSIONDB_PG_CLUSTER_SCRIPT).parent_path().parent_path();
  }

  // The `sessiondb ...` lines of the code blocks of docs/cli.md; not the
  // synopsis, nor output the docs quote.
  static std::vector<std::string> Examples() {
    std::istringstream docs(Slurp(Root() + "/docs/cli.md"));
    std::vector<std::string> out;
    bool in_block = false;
    for (std::string line; std::getline(docs, line);) {
      if (line.starts_with("```")) {
        in_block = !in_block;
      } else if (in_block && line.starts_with("sessiondb ") && !Contains(line, "[GLOBAL")) {
        out.push_back(line);
      }
    }
    return out;
  }

  // Runs `command` with bash in `cwd_`, with this build's sessiondb first on
  // PATH and the test's store and home; the exit status, output in `said`.
  int Bash(const std::string& command, std::string* said) {
    const std::string script = dir_.Sub("example.sh");
    {
      std::ofstream out(script);
      out << "set -o pipefail\n"
          << "export PATH='" << std::filesystem::path(SESSIONDB_CLI_PATH).parent_path().string()
          << "':\"$PATH\" HOME='" << home_ << "' SESSIONDB_STORE='" << store_
          << "' NO_COLOR=1 SESSIONDB_PAGER=cat\n"
          << "unset XDG_DATA_HOME SESSIONDB_NAMESPACE\n"
          << "cd '" << cwd_ << "'\n"
          << command << "\n";
    }
    const std::string log = dir_.Sub("example.log");
    const int status = std::system(("bash " + script + " > " + log + " 2>&1 < /dev/null").c_str());
    *said = Slurp(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // A session with a message and an image, made the active one. Written
  // through the library, not three `sessiondb` runs: one per example, they
  // were most of this test's minute and a half under ASan. The store is
  // closed again before the example runs.
  std::string SessionForSid() {
    auto store = Store::Open(store_);
    EXPECT_TRUE(store.has_value()) << store.error().ToString();
    if (!store) return "";
    auto session = (*store)->CreateSession({});
    EXPECT_TRUE(session.has_value());
    if (!session) return "";
    Message m;
    m.parts = {Part::Text("what is in this screenshot?"), Part::ImageFromFile(png_)};
    EXPECT_TRUE((*store)->Append(session->id, m).has_value());
    EXPECT_TRUE((*store)->SetActiveSession(session->id).ok());
    return session->id;
  }

  std::string cwd_ = dir_.Sub("work");
  std::string png_;
};

TEST_F(DocsExamples, EveryExampleOfCliMdRuns) {
  const std::vector<std::string> examples = Examples();
  ASSERT_GT(examples.size(), 20u) << "docs/cli.md's examples were not found";
  std::filesystem::create_directories(cwd_);
  std::filesystem::create_directories(home_ + "/.claude/projects/-home-dev-app");
  ASSERT_EQ(Sdb({"init"}).exit_code, 0);
  png_ = WritePng("shot.png", "docs");
  std::filesystem::copy_file(png_, cwd_ + "/shot.png");
  // What the examples read: a Claude Code history, a snapshot, the default store.
  {
    std::ofstream(home_ + "/.claude/projects/-home-dev-app/cc-docs.jsonl")
        << R"({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cc-docs","timestamp":"2026-01-01T00:00:00Z","cwd":"/home/dev/app","message":{"role":"user","content":"hello from Claude Code"}})"
        << "\n";
  }
  const std::string exported = SessionForSid();
  ASSERT_EQ(
      Sdb({"export", "--format", "snapshot", "--session", exported, "--out", cwd_ + "/chat.json"})
          .exit_code,
      0);
  ASSERT_EQ(
      Run({"--store", home_ + "/.local/share/sessiondb", "init"}, {.with_store = false}).exit_code,
      0);
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());

  for (std::string example : examples) {
    const std::string sid = SessionForSid();
    example = std::regex_replace(example, std::regex(R"(\bSID\b)"), sid);
    // The docs' PostgreSQL server is this test's.
    example =
        std::regex_replace(example, std::regex(R"(postgresql://me@db/chats\?)"), pg.uri() + "&");
    example = std::regex_replace(example, std::regex(R"(postgresql://me@db/chats)"), pg.uri());
    std::string said;
    const int code = Bash(example, &said);
    EXPECT_EQ(code, 0) << example << "\n" << said;
  }
}

TEST_F(DocsExamples, InitJsonGivesTheSchemaVersionOnBothBackends) {
  const json embedded = Sdb({"--json", "init"}).Json();
  EXPECT_EQ(embedded["schema_version"], kSchemaVersion) << embedded.dump();
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  CliRun r = Run({"--json", "--store", pg.uri(), "init"}, {.with_store = false});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json shared = json::parse(r.out);
  EXPECT_EQ(shared["schema_version"], kPostgresSchemaVersion) << r.out;
  EXPECT_FALSE(Contains(r.out, "password")) << r.out;
}

// docs/cli.md: "a mistyped --store never leaves an empty store behind".
// import creates a store (it may be the first thing one holds), but one it
// created goes again when nothing came in: a failed or an empty import.
TEST_F(DocsExamples, ImportIntoAMistypedStoreLeavesNothingBehind) {
  const std::string history = WriteFile(
      "x1.jsonl",
      R"({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"x1","timestamp":"2026-01-01T00:00:00Z","cwd":"/a","message":{"role":"user","content":"hi"}})"
      "\n");
  const std::string typo = dir_.Sub("stroe");
  CliRun unknown = Run({"--store", typo, "import", WriteFile("notes.txt", "just words\n")},
                       {.with_store = false});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists(typo)) << "a failed import left a store behind";
  CliRun missing =
      Run({"--store", typo, "import", dir_.Sub("nothing-here")}, {.with_store = false});
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(typo)) << "an import of nothing left a store behind";
  // An import that brings something keeps the store it made.
  CliRun first = Run({"--store", typo, "import", history}, {.with_store = false});
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(std::filesystem::exists(typo));
  // A store that was there stays, even when the import adds nothing.
  CliRun again = Run({"--store", typo, "import", history}, {.with_store = false});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Run({"--store", typo, "--json", "ls"}, {.with_store = false}).Json()["sessions"].size(),
            1u);
}

}  // namespace
}  // namespace sessiondb::testing
