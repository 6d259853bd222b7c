// `sessiondb import` and `sessiondb export` through the real binary.
#include "blob/base64.h"
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

// History comes in whole: an image over --max-attachment-bytes stays in its
// message as a descriptor, and the summary says so.
TEST_F(InteropCli, AnImageOverTheImportByteLimitIsReportedAndKeptAsADescriptor) {
  const std::string big = MakePng(320, 200, "big", 4096);
  json record = {{"type", "user"},
                 {"uuid", "aaaaaaaa-0000-4000-8000-000000000001"},
                 {"parentUuid", nullptr},
                 {"sessionId", "0b9d1c2e-cccc-4222-8333-944455556666"},
                 {"timestamp", "2025-06-01T10:00:00.000Z"},
                 {"message",
                  {{"role", "user"},
                   {"content", json::array({{{"type", "text"}, {"text", "this one"}},
                                            {{"type", "image"},
                                             {"source",
                                              {{"type", "base64"},
                                               {"media_type", "image/png"},
                                               {"data", blob::Base64Encode(big)}}}}})}}}};
  const std::string file =
      WriteFile("0b9d1c2e-cccc-4222-8333-944455556666.jsonl", record.dump() + "\n");
  CliRun r =
      Sdb({"--json", "import", file, "--format", "claude-code", "--max-attachment-bytes", "1KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.Json()["messages_added"], 1);
  EXPECT_EQ(r.Json()["images_added"], 0);
  EXPECT_EQ(r.Json()["attachments_not_stored"], 1);
  ASSERT_EQ(r.Json()["not_stored"].size(), 1u);
  EXPECT_TRUE(Contains(r.Json()["not_stored"][0]["reason"].get<std::string>(), "1.0 KiB")) << r.out;
  json shown = Sdb({"--json", "show", "0b9d1c2e-cccc-4222-8333-944455556666"}).Json();
  const json& resource = shown["messages"][0]["parts"][1]["resource"];
  EXPECT_EQ(resource["width"], 320);
  EXPECT_FALSE(resource.contains("content_sha256")) << resource.dump();
  EXPECT_TRUE(Contains(resource.value("not_stored", ""), "--max-attachment-bytes"))
      << resource.dump();

  CliRun text =
      Run({"--store", dir_.Sub("other"), "import", file, "--max-attachment-bytes", "1KiB"},
          {.with_store = false});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(Contains(text.out, "kept 1 attachment as a descriptor without its bytes:"))
      << text.out;
  EXPECT_EQ(Sdb({"import", file, "--max-attachment-bytes", "0"}).exit_code, 2);  // out of range
}

}  // namespace
}  // namespace sessiondb::testing
