// Error messages quote what was typed (an id, a verb, a URL, an option's
// value): on stderr their control characters are escaped as the terminal
// output's are, so an argument cannot command the terminal; --json keeps
// them exact. Against the real binary.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class ErrorEscaping : public Cli {};

TEST_F(ErrorEscaping, ControlCharactersTypedAreEscapedInTheErrorLine) {
  ASSERT_FALSE(NewSession().empty());  // a store, so `show` gets to the id
  const std::string esc = "\x1b]0;pwned\x07\x1b[2J";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"show", "id" + esc},
                                               {"frobnicate" + esc},
                                               {"open", "--print", "--url", "http://x" + esc},
                                               {"ls", "--limit", "1" + esc},
                                               {"ls", "--bogus" + esc}}) {
    const CliRun r = Sdb(args);
    EXPECT_NE(r.exit_code, 0) << args[0];
    EXPECT_FALSE(Contains(r.err, "\x1b")) << args[0] << ": " << r.err;
    EXPECT_FALSE(Contains(r.err, "\x07")) << args[0] << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "\\x1b")) << args[0] << ": " << r.err;
  }
  // --json keeps the message exact: JSON escapes it itself.
  const CliRun json = Sdb({"--json", "show", "id" + esc});
  EXPECT_TRUE(Contains(json.Json()["error"]["message"].get<std::string>(), esc)) << json.out;
}

}  // namespace
}  // namespace sessiondb::testing
