// docs/cli.md stays true to the program: every verb `sessiondb --help`
// lists has a section there, and every global option is in its table.
#include <regex>
#include <sstream>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class CliDocs : public Cli {};

// docs/cli.md, found from the one path into the source tree the suites get.
std::string CliMd() {
  const auto root = std::filesystem::path(SESSIONDB_PG_CLUSTER_SCRIPT).parent_path().parent_path();
  return Slurp((root / "docs" / "cli.md").string());
}

TEST_F(CliDocs, EveryVerbHasASectionAndEveryGlobalOptionARow) {
  const std::string docs = CliMd();
  ASSERT_FALSE(docs.empty());
  const std::string help = Run({"--help"}, {.with_store = false}).out;
  std::istringstream lines(help);
  std::string line;
  bool in_verbs = false;
  int verbs = 0, options = 0;
  const std::regex option_line(R"(^  (?:-\w,)?(--[a-z-]+))");
  while (std::getline(lines, line)) {
    std::smatch m;
    if (line == "Subcommands:") {
      in_verbs = true;
    } else if (in_verbs && line.starts_with("  ") && line[2] != ' ') {
      const std::string verb = line.substr(2, line.find(' ', 2) - 2);
      ++verbs;
      // A heading names it in backquotes: "### `show [SESSION] ...`" or "..., `unarchive SESSION`".
      const std::regex heading("\n### .*`" + verb + "[ `]");
      EXPECT_TRUE(std::regex_search(docs, heading)) << "docs/cli.md has no section for " << verb;
    } else if (in_verbs && line.empty()) {
      in_verbs = false;
    } else if (!in_verbs && std::regex_search(line, m, option_line)) {
      if (m[1] == "--help") continue;
      ++options;
      EXPECT_TRUE(Contains(docs, "| `" + m[1].str())) << "docs/cli.md has no row for " << m[1];
    }
  }
  EXPECT_GT(verbs, 30);
  EXPECT_GE(options, 9);
}

}  // namespace
}  // namespace sessiondb::testing
