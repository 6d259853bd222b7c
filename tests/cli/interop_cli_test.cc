// `sessiondb import` and `sessiondb export` through the real binary.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class InteropCli : public Cli {};

TEST_F(InteropCli, ImportAndExportHaveHelpWithExamples) {
  for (const char* verb : {"import", "export"}) {
    CliRun r = Run({verb, "--help"}, {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_TRUE(Contains(r.out, std::string("sessiondb ") + verb)) << r.out;
    EXPECT_TRUE(Contains(r.out, "Example")) << r.out;
  }
  EXPECT_TRUE(Contains(Run({"import", "--help"}, {.with_store = false}).out, "claude-code"));
}

TEST_F(InteropCli, ASnapshotExportedHereImportsThereOnceAndReportsIt) {
  std::string sid = NewSession({"--title", "Traveller"});
  ASSERT_EQ(Sdb({"append", sid, "look", "--image", WritePng("a.png", "travel")}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", sid, "--role", "assistant", "seen"}).exit_code, 0);
  const std::string snap = dir_.Sub("snap.json");
  json exported = Sdb({"--json", "export", "--format", "snapshot", "--out", snap}).Json();
  EXPECT_EQ(exported["sessions"], 1);
  EXPECT_EQ(exported["images"], 1);

  const std::string other = dir_.Sub("other");
  auto at_other = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--store", other});
    return Run(args, {.with_store = false});
  };
  CliRun first = at_other({"--json", "import", snap});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.Json()["format"], "snapshot");
  EXPECT_EQ(first.Json()["sessions_added"], 1);
  EXPECT_EQ(first.Json()["messages_added"], 2);
  EXPECT_EQ(first.Json()["images_added"], 1);
  CliRun again = at_other({"import", snap});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_TRUE(Contains(again.out, "1 already here")) << again.out;
  json shown = at_other({"--json", "show", sid}).Json();
  EXPECT_EQ(shown["session"]["title"], "Traveller");
  ASSERT_EQ(shown["messages"].size(), 2u);
  EXPECT_EQ(shown["messages"][0]["parts"][1]["resource"]["mime"], "image/png");

  // Exporting over an existing file is refused; the file is left as it was.
  EXPECT_EQ(Sdb({"export", "--format", "snapshot", "--out", snap}).exit_code, 4);
}

TEST_F(InteropCli, AnUnknownFormatOrPathIsAClearError) {
  CliRun unknown = Sdb({"import", WriteFile("notes.txt", "just words\n")});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Contains(unknown.err, "--format")) << unknown.err;
  EXPECT_TRUE(Contains(unknown.err, "claude-code")) << unknown.err;
  EXPECT_EQ(Sdb({"import", dir_.Sub("missing")}).exit_code, 3);
  CliRun bad = Sdb({"import", WriteFile("x.json", "{}"), "--format", "gemini"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "snapshot")) << bad.err;
  EXPECT_EQ(Sdb({"export", "--format", "pdf", "--out", dir_.Sub("o")}).exit_code, 2);
  EXPECT_EQ(Sdb({"--json", "ls"}).Json()["sessions"].size(), 0u);
}

}  // namespace
}  // namespace sessiondb::testing
