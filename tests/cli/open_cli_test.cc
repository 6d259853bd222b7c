// `sessiondb open SESSION` (issue 20, item 11): the session's address in the
// web page, from a prefix or the active session, on the page address the
// user named; a browser started through $BROWSER (here a script that writes
// down what it was given), and the hostile cases: an address that is not
// http(s), a session that does not exist, a browser that cannot run.
#include <sys/stat.h>

#include "cli/cli_fixture.h"

namespace sessiondb::testing {
namespace {

class Open : public Cli {
 protected:
  // No display and no $BROWSER unless a test sets one: nothing is started.
  CliRun OpenRun(const std::vector<std::string>& args,
                 std::map<std::string, std::optional<std::string>> env = {}) {
    env.try_emplace("BROWSER", std::nullopt);
    env.try_emplace("DISPLAY", std::nullopt);
    env.try_emplace("WAYLAND_DISPLAY", std::nullopt);
    env.try_emplace("SESSIONDB_URL", std::nullopt);
    std::vector<std::string> argv = {"open"};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv, {.env = env});
  }

  // A "browser": a script that appends its arguments to `log`.
  std::string FakeBrowser(const std::string& log) {
    const std::string path =
        WriteFile("browser.sh", "#!/bin/sh\nprintf '%s\\n' \"$@\" >> " + log + "\n");
    chmod(path.c_str(), 0755);
    return path;
  }
};

TEST_F(Open, PrintsTheSessionsPageAddressFromAPrefix) {
  const std::string id = NewSession();
  CliRun r = OpenRun({id.substr(0, 10), "--print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "http://127.0.0.1:7411/#/s/" + id + "\n");
}

TEST_F(Open, TakesThePageAddressFromTheFlagOrTheEnvironment) {
  const std::string id = NewSession();
  CliRun flag = OpenRun({id, "--print", "--url", "https://chats.example:8443//"});
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, "https://chats.example:8443/#/s/" + id + "\n");
  CliRun env = OpenRun({id, "--print"}, {{"SESSIONDB_URL", "http://10.0.0.5:9000"}});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_EQ(env.out, "http://10.0.0.5:9000/#/s/" + id + "\n");
}

TEST_F(Open, WithoutASessionOpensTheActiveOne) {
  CliRun none = OpenRun({"--print"});
  EXPECT_EQ(none.exit_code, 3) << none.out;
  EXPECT_EQ(none.out, "");
  const std::string id = NewSession();
  ASSERT_EQ(Sdb({"active", id}).exit_code, 0);
  CliRun r = OpenRun({"--print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "http://127.0.0.1:7411/#/s/" + id + "\n");
}

TEST_F(Open, RefusesAnAddressThatIsNotHttpAndASessionThatIsNotThere) {
  const std::string id = NewSession();
  for (const std::string url : {"ftp://x/", "javascript:alert(1)", "", "127.0.0.1:7411"}) {
    CliRun r = OpenRun({id, "--print", "--url", url}, {{"SESSIONDB_URL", "file:///etc"}});
    EXPECT_EQ(r.exit_code, 2) << url << ": " << r.out;
    EXPECT_EQ(r.out, "") << url;
    EXPECT_NE(r.err.find("http://"), std::string::npos) << r.err;
  }
  CliRun missing = OpenRun({"ffffffff-0000-7000-8000-000000000000", "--print"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_EQ(missing.out, "");
}

TEST_F(Open, StartsTheBrowserNamedByBrowserWithTheAddress) {
  const std::string id = NewSession();
  const std::string log = dir_.Sub("browser.log");
  CliRun r = OpenRun({id, "--json"}, {{"BROWSER", FakeBrowser(log) + ":firefox"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = r.Json();
  EXPECT_EQ(j["session_id"], id);
  EXPECT_EQ(j["url"], "http://127.0.0.1:7411/#/s/" + id);
  EXPECT_EQ(j["opened"], true);
  EXPECT_EQ(Slurp(log), "http://127.0.0.1:7411/#/s/" + id + "\n");
  // --print never starts it.
  ASSERT_EQ(OpenRun({id, "--print"}, {{"BROWSER", FakeBrowser(log)}}).exit_code, 0);
  EXPECT_EQ(Slurp(log), "http://127.0.0.1:7411/#/s/" + id + "\n");
}

TEST_F(Open, ABrowserThatCannotRunIsAnErrorAfterTheAddressIsPrinted) {
  const std::string id = NewSession();
  CliRun r = OpenRun({id}, {{"BROWSER", dir_.Sub("no-such-browser")}});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_EQ(r.out, "http://127.0.0.1:7411/#/s/" + id + "\n");
  EXPECT_NE(r.err.find("no-such-browser"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sessiondb::testing
