// `sessiondb export --force`: an export may replace what an earlier export
// wrote, recognised by the manifest it left and the bytes still being those
// it wrote, and still never a file of anyone else's.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class ExportForce : public Cli {
 protected:
  void SetUp() override {
    ASSERT_EQ(NewSession({"--id", "chat-1", "--title", "First"}), "chat-1");
    ASSERT_EQ(Sdb({"append", "chat-1", "the first words"}).exit_code, 0);
  }
  CliRun Export(const std::string& format, const std::string& out, bool force) {
    std::vector<std::string> args = {"export", "--format", format, "--out", out};
    if (force) args.push_back("--force");
    return Sdb(args);
  }
};

TEST_F(ExportForce, ForceReplacesAnEarlierFileExport) {
  for (const std::string format : {"snapshot", "jsonl"}) {
    const std::string out = dir_.Sub("chat." + format);
    ASSERT_EQ(Export(format, out, false).exit_code, 0);
    ASSERT_EQ(Sdb({"append", "chat-1", "words added later " + format}).exit_code, 0);

    CliRun again = Export(format, out, false);
    EXPECT_EQ(again.exit_code, 4) << format;
    EXPECT_TRUE(Contains(again.err, "--force")) << "it says how: " << again.err;
    EXPECT_FALSE(Contains(Slurp(out), "words added later " + format));

    CliRun forced = Export(format, out, true);
    EXPECT_EQ(forced.exit_code, 0) << format << ": " << forced.err;
    EXPECT_TRUE(Contains(Slurp(out), "words added later " + format)) << format;
    // And again: the replacement is listed as the export's in turn.
    EXPECT_EQ(Export(format, out, true).exit_code, 0) << format;
  }
}

TEST_F(ExportForce, ForceNeverOverwritesAForeignFile) {
  const std::string theirs = WriteFile("theirs.json", "somebody's notes");
  CliRun r = Export("snapshot", theirs, true);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(Contains(r.err, "did not write")) << r.err;
  EXPECT_EQ(Slurp(theirs), "somebody's notes");
}

TEST_F(ExportForce, ForceNeverOverwritesAnExportSomeoneChangedSince) {
  const std::string out = dir_.Sub("chat.json");
  ASSERT_EQ(Export("snapshot", out, false).exit_code, 0);
  std::ofstream(out, std::ios::app) << " ";  // an edit, however small
  const std::string edited = Slurp(out);
  CliRun r = Export("snapshot", out, true);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(Slurp(out), edited);
}

TEST_F(ExportForce, AForeignFileWhereTheManifestGoesIsNotOverwritten) {
  const std::string manifest = WriteFile(".chat.json.sessiondb-export.json", "my own file");
  CliRun r = Export("snapshot", dir_.Sub("chat.json"), false);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(Slurp(manifest), "my own file");
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("chat.json")));
}

// The manifest is outside input too: one nested past the parse cap is not
// read (no crash, no deep recursion) and not overwritten, nor is the file it
// would have let --force replace.
TEST_F(ExportForce, AHostileManifestIsRefusedAndLeftAsItIs) {
  const std::string out = dir_.Sub("chat.json");
  ASSERT_EQ(Export("snapshot", out, false).exit_code, 0);
  const std::string manifest = dir_.Sub(".chat.json.sessiondb-export.json");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string hostile =
      R"({"sessiondb_export_manifest":1,"files":{"chat.json":)" + deep + "}}";
  std::ofstream(manifest, std::ios::trunc) << hostile;
  const std::string exported = Slurp(out);
  CliRun r = Export("snapshot", out, true);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(Slurp(manifest), hostile);
  EXPECT_EQ(Slurp(out), exported);
  // The store still serves.
  EXPECT_EQ(Sdb({"show", "chat-1"}).exit_code, 0);
}

TEST_F(ExportForce, AFolderExportIsReplacedButAForeignFileInItIsNot) {
  const std::string md = dir_.Sub("md");
  ASSERT_EQ(Export("markdown", md, false).exit_code, 0);
  // The manifest is beside the folder: inside it are the transcripts alone.
  EXPECT_TRUE(std::filesystem::exists(dir_.Sub(".md.sessiondb-export.json")));
  EXPECT_FALSE(std::filesystem::exists(md + "/.sessiondb-export.json"));
  ASSERT_EQ(Sdb({"append", "chat-1", "a later line"}).exit_code, 0);
  CliRun forced = Export("markdown", md + "/", true);  // the same folder, the same manifest
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(Contains(Slurp(md + "/chat-1.md"), "a later line"));

  // A second session whose transcript's name is taken by someone's file.
  ASSERT_EQ(NewSession({"--id", "chat-2"}), "chat-2");
  ASSERT_EQ(Sdb({"append", "chat-2", "hello"}).exit_code, 0);
  std::ofstream(md + "/chat-2.md") << "my transcript";
  CliRun r = Export("markdown", md, true);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(Contains(r.err, "chat-2.md")) << r.err;
  EXPECT_EQ(Slurp(md + "/chat-2.md"), "my transcript");
}

}  // namespace
}  // namespace sessiondb::testing
