// The CLI on a PostgreSQL store does what it does on an embedded one: an
// import learns the code writes it brings, `reindex --hnsw` reports the
// index it has, and what the server says while a session starts never
// reaches the output raw.
#include <chrono>

#include "cli/cli_fixture.h"
#include "core/iso_time.h"

namespace sessiondb::testing {
namespace {

class PostgresParityCli : public Cli {
 protected:
  // Runs the CLI on the test database's store.
  CliRun Pg(const PgTestDatabase& pg, std::vector<std::string> args) {
    std::vector<std::string> full = {"--store", pg.uri()};
    full.insert(full.end(), args.begin(), args.end());
    return Run(full, {.with_store = false});
  }

  // A Codex rollout whose one patch adds src/tally.py, an hour ago (churn
  // counts recent edits).
  std::string PatchRollout() {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    const std::string started = FormatUtcTime(now_ms - 3600000, UtcTimeForm::kIsoMillis);
    const std::string patched = FormatUtcTime(now_ms - 3599000, UtcTimeForm::kIsoMillis);
    json meta = {{"type", "session_meta"},
                 {"timestamp", started},
                 {"payload", {{"id", "rollout-1"}, {"timestamp", started}, {"cwd", "/w"}}}};
    json call = {{"type", "response_item"},
                 {"timestamp", patched},
                 {"payload",
                  {{"type", "custom_tool_call"},
                   {"call_id", "c1"},
                   {"name", "apply_patch"},
                   {"input",
                    "*** Begin Patch\n*** Add File: src/tally.py\n"
                    "+def tally_votes(ballots):\n+    return len(ballots)\n"
                    "*** End Patch\n"}}}};
    return WriteFile("rollout.jsonl", meta.dump() + "\n" + call.dump() + "\n");
  }
};

// On PostgreSQL, `import` learned no code writes: churn and recall stayed
// empty until `reindex`, and the report had no code_writes_learned.
TEST_F(PostgresParityCli, AnImportLearnsItsCodeWritesAsOnAnEmbeddedStore) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  ASSERT_EQ(Pg(pg, {"init"}).exit_code, 0);
  const std::string rollout = PatchRollout();
  CliRun first = Pg(pg, {"--json", "import", rollout, "--format", "codex"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.Json()["code_writes_learned"], 1) << first.out;
  CliRun churn = Pg(pg, {"--json", "churn"});
  ASSERT_EQ(churn.exit_code, 0) << churn.err;
  ASSERT_EQ(churn.Json().size(), 1u) << churn.out;
  EXPECT_EQ(churn.Json()[0]["file_path"], "/w/src/tally.py");
  CliRun hits = Pg(pg, {"--json", "search", "tally_votes", "--kind", "code", "--mode", "keyword"});
  ASSERT_EQ(hits.exit_code, 0) << hits.err;
  EXPECT_EQ(hits.Json()["hits"].size(), 1u) << hits.out;
  // Again: nothing new, and the same count as the embedded store gives.
  CliRun again = Pg(pg, {"--json", "import", rollout, "--format", "codex"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.Json()["code_writes_learned"], 0);
  json embedded = Sdb({"--json", "import", rollout, "--format", "codex"}).Json();
  EXPECT_EQ(embedded["code_writes_learned"], 1);
  // Nothing else changed: one session, one message.
  CliRun listed = Pg(pg, {"--json", "ls"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  ASSERT_EQ(listed.Json()["sessions"].size(), 1u) << listed.out;
  EXPECT_EQ(listed.Json()["sessions"][0]["message_count"], 1);
}

// `reindex --hnsw` on PostgreSQL said "vector_index": "hnsw" though no
// index was built (the backend keeps no file for one).
TEST_F(PostgresParityCli, ReindexWithHnswSaysThePostgresStoreScansExactly) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  ASSERT_EQ(Pg(pg, {"new", "--id", "s"}).exit_code, 0);
  ASSERT_EQ(Pg(pg, {"append", "s", "vectors for the exact scan"}).exit_code, 0);
  CliRun reindex = Pg(pg, {"--json", "reindex", "--hnsw"});
  ASSERT_EQ(reindex.exit_code, 0) << reindex.err;
  json report = reindex.Json();
  EXPECT_EQ(report["vector_index"], "exact scan") << reindex.out;
  EXPECT_TRUE(Contains(report.value("vector_index_note", ""), "scanned exactly")) << reindex.out;
  EXPECT_GE(report["vectors"].get<int64_t>(), 1);
  CliRun plain = Pg(pg, {"reindex", "--hnsw"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(Contains(plain.out, "vector search: exact scan")) << plain.out;
  EXPECT_FALSE(Contains(plain.out, "hnsw")) << plain.out;
  // The embedded store still builds one.
  NewSession({"--id", "e"});
  ASSERT_EQ(Sdb({"append", "e", "vectors for the graph"}).exit_code, 0);
  EXPECT_EQ(Sdb({"--json", "reindex", "--hnsw"}).Json()["vector_index"], "hnsw");
}

// A WARNING the server sends while a session starts (here a database
// setting that no longer applies) was printed raw by libpq ("WARNING:
// invalid value for parameter ...") on every command. Notices are not
// ours to print, from the first byte on; the command works as before.
TEST_F(PostgresParityCli, ServerWarningsAtConnectionDoNotReachTheOutput) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  ASSERT_EQ(Pg(pg, {"new", "--id", "w", "--title", "Warned"}).exit_code, 0);
  const std::string db = pg.Query("SELECT current_database()");
  pg.Query("ALTER DATABASE " + db + " SET default_tablespace = 'no_such_tablespace'");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ls"}, {"append", "w", "after the warning"}, {"show", "w"}}) {
    CliRun r = Pg(pg, args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(Contains(r.err, "WARNING")) << r.err;
    EXPECT_FALSE(Contains(r.out, "WARNING")) << r.out;
  }
  CliRun shown = Pg(pg, {"show", "w"});
  EXPECT_TRUE(Contains(shown.out, "after the warning")) << shown.out;
}

}  // namespace
}  // namespace sessiondb::testing
