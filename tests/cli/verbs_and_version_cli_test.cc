// `sessiondb --version`, `sessiondb version`, and what an unknown verb gets:
// git's answer, with the verbs it most likely meant.
#include <regex>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class VerbsAndVersion : public Cli {};

// The version CMake's project() declares, read from the source tree.
std::string ProjectVersion() {
  // scripts/pg_cluster.sh is the one path into the source tree the suites are given.
  const auto root = std::filesystem::path(SESSIONDB_PG_CLUSTER_SCRIPT).parent_path().parent_path();
  const std::string cmake = Slurp((root / "CMakeLists.txt").string());
  std::smatch m;
  EXPECT_TRUE(std::regex_search(cmake, m, std::regex(R"(project\(sessiondb VERSION ([0-9.]+))")))
      << "no project(sessiondb VERSION ...) in CMakeLists.txt";
  return m.size() > 1 ? m[1].str() : "?";
}

TEST_F(VerbsAndVersion, VersionFlagAndVerbPrintCMakesProjectVersion) {
  const std::string version = ProjectVersion();
  CliRun flag = Run({"--version"}, {.with_store = false});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, "sessiondb " + version + "\n");
  CliRun verb = Run({"version"}, {.with_store = false});
  EXPECT_EQ(verb.exit_code, 0) << verb.err;
  EXPECT_EQ(verb.out, "sessiondb " + version + "\n");
  CliRun json_verb = Run({"--json", "version"}, {.with_store = false});
  EXPECT_EQ(json_verb.Json()["version"], version);
  // It needs no store: nothing was created under HOME.
  EXPECT_FALSE(std::filesystem::exists(home_ + "/.local/share/sessiondb"));
}

TEST_F(VerbsAndVersion, AnUnknownVerbIsNamedWithTheClosestOneAsGitDoes) {
  CliRun r = Sdb({"lss"});
  EXPECT_EQ(r.exit_code, 1) << "usage errors exit 1 (docs/cli.md)";
  EXPECT_EQ(r.err,
            "sessiondb: 'lss' is not a sessiondb command. See 'sessiondb --help'.\n\n"
            "The most similar command is\n\tls\n");
  EXPECT_EQ(r.out, "");

  // A swap of two letters, and a verb behind global options with values.
  CliRun swapped =
      Run({"--store", store_, "--max-images", "3", "shwo", "x"}, {.with_store = false});
  EXPECT_EQ(swapped.exit_code, 1);
  EXPECT_TRUE(Contains(swapped.err, "'shwo' is not a sessiondb command")) << swapped.err;
  EXPECT_TRUE(Contains(swapped.err, "The most similar command is\n\tshow\n")) << swapped.err;
}

TEST_F(VerbsAndVersion, SeveralCloseVerbsAreAllListedAndNoneWhenNothingIsClose) {
  CliRun r = Sdb({"se"});  // the beginning of both search and serve
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "The most similar commands are\n")) << r.err;
  EXPECT_TRUE(Contains(r.err, "\tsearch\n")) << r.err;
  EXPECT_TRUE(Contains(r.err, "\tserve\n")) << r.err;

  CliRun far = Sdb({"frobnicate"});
  EXPECT_EQ(far.exit_code, 1);
  EXPECT_EQ(far.err,
            "sessiondb: 'frobnicate' is not a sessiondb command. See 'sessiondb --help'.\n");
}

TEST_F(VerbsAndVersion, AnUnknownVerbWithJsonIsAUsageErrorDocument) {
  CliRun r = Sdb({"--json", "lss"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.Json()["error"]["code"], "usage");
  EXPECT_TRUE(Contains(r.Json()["error"]["message"], "'lss' is not a sessiondb command"));
}

TEST_F(VerbsAndVersion, AKnownVerbWithABadOptionIsAnUnknownOptionOfThatVerb) {
  CliRun r = Sdb({"ls", "--bogus"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(Contains(r.err, "is not a sessiondb command")) << r.err;
  EXPECT_TRUE(Contains(r.err, "sessiondb: unknown option '--bogus' for 'sessiondb ls'")) << r.err;
}

}  // namespace
}  // namespace sessiondb::testing
