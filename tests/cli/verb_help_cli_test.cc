// Each verb's --help: its own options and examples, then the global options
// (which work after the verb too), and never the root's examples.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class VerbHelp : public Cli {};

TEST_F(VerbHelp, EachVerbsHelpListsTheGlobalOptionsAndNotTheRootsExamples) {
  for (const char* verb : {"ls", "show", "append", "export", "search", "serve", "mcp", "version",
                           "active", "drafts"}) {
    CliRun r = Run({verb, "--help"}, {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_TRUE(Contains(r.out, "Global options")) << verb << ":\n" << r.out;
    for (const char* flag : {"--store", "--json", "--no-pager", "--namespace", "--fast"}) {
      EXPECT_TRUE(Contains(r.out, flag)) << verb << " lacks " << flag << ":\n" << r.out;
    }
    EXPECT_FALSE(Contains(r.out, "Exit codes:")) << verb << ":\n" << r.out;
    EXPECT_FALSE(Contains(r.out, "sessiondb copy --from")) << verb << ":\n" << r.out;
  }
  // The nested verbs too.
  CliRun hook = Run({"hook", "claude-code", "--help"}, {.with_store = false});
  EXPECT_TRUE(Contains(hook.out, "--no-pager")) << hook.out;
  EXPECT_FALSE(Contains(hook.out, "Exit codes:")) << hook.out;
  // The root keeps its examples.
  EXPECT_TRUE(Contains(Run({"--help"}, {.with_store = false}).out, "sessiondb copy --from"));
}

}  // namespace
}  // namespace sessiondb::testing
