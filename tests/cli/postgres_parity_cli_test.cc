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

// `reindex --hnsw` on PostgreSQL builds this machine's graph of the
// namespace (in its cache folder, docs/postgres.md), and says so; an
// encrypted namespace keeps none, and the report says its vectors are
// scanned exactly rather than name an index that was not built.
TEST_F(PostgresParityCli, ReindexWithHnswBuildsThisMachinesGraphUnlessTheNamespaceIsEncrypted) {
  PgTestDatabase pg;
  ASSERT_TRUE(pg.ok());
  const std::string cache = dir_.Sub("cache");
  const RunOptions with_cache = {.with_store = false, .env = {{"SESSIONDB_CACHE_DIR", cache}}};
  auto pg_run = [&](std::vector<std::string> args, const std::string& uri) {
    args.insert(args.begin(), {"--store", uri});
    return Run(args, with_cache);
  };
  ASSERT_EQ(pg_run({"new", "--id", "s"}, pg.uri()).exit_code, 0);
  ASSERT_EQ(pg_run({"append", "s", "vectors for the graph"}, pg.uri()).exit_code, 0);
  CliRun reindex = pg_run({"--json", "reindex", "--hnsw"}, pg.uri());
  ASSERT_EQ(reindex.exit_code, 0) << reindex.err;
  json report = reindex.Json();
  EXPECT_EQ(report["vector_index"], "hnsw") << reindex.out;
  EXPECT_GE(report["vectors"].get<int64_t>(), 1);
  int graphs = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache)) {
    graphs += e.path().extension() == ".hnsw" ? 1 : 0;
  }
  EXPECT_EQ(graphs, 1) << "the graph is kept in this machine's cache folder";
  CliRun found = pg_run({"search", "--mode", "vector", "vectors graph"}, pg.uri());
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_TRUE(Contains(found.out, "vectors for the graph")) << found.out;

  // An encrypted namespace of the same database.
  const std::string key = dir_.Sub("ns.key");
  ASSERT_EQ(Run({"key", "new", key}, {.with_store = false}).exit_code, 0);
  const std::string sealed_uri = pg.uri() + "&namespace=sealed";
  ASSERT_EQ(pg_run({"--key-file", key, "new", "--id", "k"}, sealed_uri).exit_code, 0);
  ASSERT_EQ(pg_run({"--key-file", key, "append", "k", "sealed vectors"}, sealed_uri).exit_code, 0);
  CliRun sealed = pg_run({"--key-file", key, "--json", "reindex", "--hnsw"}, sealed_uri);
  ASSERT_EQ(sealed.exit_code, 0) << sealed.err;
  EXPECT_EQ(sealed.Json()["vector_index"], "exact scan") << sealed.out;
  EXPECT_TRUE(Contains(sealed.Json().value("vector_index_note", ""), "scanned exactly"))
      << sealed.out;
  CliRun plain = pg_run({"--key-file", key, "reindex", "--hnsw"}, sealed_uri);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(Contains(plain.out, "vector search: exact scan")) << plain.out;
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
