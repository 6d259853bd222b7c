// The markdown export: a transcript per session with its images beside it.
#include "blob/sha256.h"
#include "interop_fixture.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

class MarkdownExport : public InteropTest {
 protected:
  void SetUp() override {
    store_ = OpenStore("store");
    FillSample(*store_);
  }

  std::string Export(const std::string& folder, std::vector<std::string> ids) {
    auto r =
        ExportTo(*store_, dir_.Sub(folder), {.format = ExportFormat::kMarkdown, .sessions = ids});
    EXPECT_TRUE(r) << r.error().ToString();
    if (r) report_ = *r;
    return ReadFile(dir_.path() / folder / (ids.front() + ".md"));
  }

  static bool Has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
  }

  std::unique_ptr<Store> store_;
  ExportReport report_;
};

TEST_F(MarkdownExport, TranscriptHasRolesToolBlocksAndCompactionNote) {
  const std::string md = Export("out", {"chat-main"});
  EXPECT_EQ(md.rfind("# What is in these pictures?\n", 0), 0u) << md.substr(0, 60);
  EXPECT_TRUE(Has(md, "- Session: `chat-main`"));
  EXPECT_TRUE(Has(md, "\n## User · "));
  EXPECT_TRUE(Has(md, "\n## Assistant (gpt-test) · "));
  EXPECT_TRUE(Has(md, "\n## Tool · "));
  // A tool no rule knows: its raw arguments, its result right under it, and
  // the result's own message pointing up to it.
  EXPECT_TRUE(Has(md,
                  "**Tool call** `zoom` (`call_1`)\n\n```json\n{\"x\":1}\n```\n\n"
                  "Output\n\n```\nzoomed: a cat\n```\n"))
      << md;
  EXPECT_TRUE(Has(md, "*Result of `call_1`: shown with its call above.*"));
  EXPECT_FALSE(Has(md, "**Tool result**"));
  EXPECT_TRUE(Has(md, "> **Reasoning**\n> \n> Let me look closer."));
  EXPECT_TRUE(Has(md, "> **Compaction** of events 1–4"));
  EXPECT_TRUE(Has(md, "> Cat and dog."));
  EXPECT_TRUE(Has(md, "> **Viewed** cat.png from event 1: look again"));
  EXPECT_TRUE(Has(md, "*Tokens: 120 in, 30 out*"));
  // Events in order: the question before the answer, the summary after it.
  EXPECT_LT(md.find("What is in these pictures?\n\n"), md.find("A cat and a dog."));
  EXPECT_LT(md.find("A cat and a dog."), md.find("**Compaction**"));
  EXPECT_LT(md.find("**Compaction**"), md.find("Thanks!"));
  EXPECT_EQ(report_.messages, 5);
}

TEST_F(MarkdownExport, ImagesAreWrittenBesideTheTranscriptAndLinked) {
  const std::string md = Export("out", {"chat-main"});
  const std::string png_rel = "chat-main/" + blob::Sha256Hex(png_).substr(0, 12) + ".png";
  const std::string jpg_rel = "chat-main/" + blob::Sha256Hex(jpeg_).substr(0, 12) + ".jpg";
  EXPECT_TRUE(Has(md, "![cat.png](" + png_rel + ")")) << md;
  EXPECT_TRUE(Has(md, "![dog.jpg](" + jpg_rel + ")"));
  EXPECT_EQ(ReadFile(dir_.path() / "out" / png_rel), png_);
  EXPECT_EQ(ReadFile(dir_.path() / "out" / jpg_rel), jpeg_);
  EXPECT_EQ(report_.images, 2);
  EXPECT_EQ(report_.files.size(), 3u);  // two images and the transcript
}

TEST_F(MarkdownExport, ForkPrunedAndArchivedSessionsSaySo) {
  const std::string fork = Export("a", {"chat-fork"});
  EXPECT_TRUE(Has(fork, "- Forked from: `chat-main` after event 3"));
  EXPECT_TRUE(Has(fork, "Another idea"));
  EXPECT_TRUE(Has(fork, "What is in these pictures?"));  // inherited history
  const std::string old = Export("b", {"chat-archived"});
  EXPECT_EQ(old.rfind("# Old\n", 0), 0u);
  EXPECT_TRUE(Has(old, "- Archived"));
  EXPECT_TRUE(Has(old, "*(content pruned after compaction)*"));
  EXPECT_FALSE(Has(old, "old question"));
}

TEST_F(MarkdownExport, FenceOutgrowsBackticksInTheContent) {
  ASSERT_TRUE(store_->CreateSession(NewSession{.id = "code"}));
  ASSERT_TRUE(
      store_->Append("code", Msg(Role::kTool, {Part::ToolResult("c", "```\nrm -rf\n```")})));
  const std::string md = Export("out", {"code"});
  EXPECT_TRUE(Has(md, "````\n```\nrm -rf\n```\n````\n")) << md;
}

TEST_F(MarkdownExport, AgentToolCallsReadAsDiffsCommandsAndFilesWithTheirResults) {
  ASSERT_TRUE(store_->CreateSession(NewSession{.id = "agent"}));
  auto calls = store_->Append(
      "agent",
      Msg(Role::kAssistant,
          {Part::ToolCall(
               "e1", "Edit",
               R"({"file_path":"src/app.py","old_string":"a = 1\nb = 2\n","new_string":"a = 1\nb = 3\nc = 4\n"})"),
           Part::ToolCall("w1", "Write",
                          R"({"file_path":"src/util.py","content":"def f():\n    pass\n"})"),
           Part::ToolCall("b1", "Bash", R"({"command":"make test"})"),
           Part::ToolCall("r1", "Read", R"({"file_path":"src/app.py","offset":10,"limit":20})"),
           Part::ToolCall("m1", "mcp__github__create_issue", R"({"title":"Bug"})"),
           Part::ToolCall("x1", "Edit", R"({"file_path":["a"],"old_string":1})"),
           Part::ToolCall("n1", "Bash", R"({"command":"sleep 1"})")}));
  ASSERT_TRUE(calls) << calls.error().ToString();
  std::string long_output;
  for (int i = 0; i < 50; ++i) long_output += "row " + std::to_string(i) + "\n";
  ASSERT_TRUE(store_->Append(
      "agent",
      Msg(Role::kTool,
          {Part::ToolResult("e1", "updated"), Part::ToolResult("b1", "ok\n"),
           Part::ToolResult("r1", long_output), Part::ToolResult("m1", "denied", /*is_error=*/true),
           Part::ToolResult("x1", "bad"), Part::ToolResult("zz", "orphan")})));
  const std::string md = Export("out", {"agent"});
  EXPECT_TRUE(Has(md,
                  "**Tool call** `Edit` (`e1`): Edited src/app.py: +2 \xE2\x88\x92"
                  "1\n\n"
                  "```diff\n--- src/app.py\n+++ src/app.py\n a = 1\n-b = 2\n+b = 3\n+c = 4\n```\n\n"
                  "Output\n\n```\nupdated\n```\n"))
      << md;
  EXPECT_TRUE(Has(md,
                  "**Tool call** `Write` (`w1`): Wrote src/util.py (2 lines)\n\n"
                  "src/util.py\n\n```python\ndef f():\n    pass\n```\n"));
  EXPECT_TRUE(
      Has(md, "**Tool call** `Bash` (`b1`): $ make test\n\n```console\n$ make test\nok\n```\n"));
  EXPECT_TRUE(Has(md,
                  "**Tool call** `Read` (`r1`): Read src/app.py (lines 10\xE2\x80\x93"
                  "29)\n\n"
                  "Output, 50 lines, 340 bytes\n\n```\nrow 0\n"));
  EXPECT_TRUE(Has(md,
                  "**Tool call** `mcp__github__create_issue` (`m1`): github \xE2\x80\xBA "
                  "create\\_issue (error)\n\n```json\n{\n  \"title\": \"Bug\"\n}\n```\n\n"
                  "Error\n\n```\ndenied\n```\n"));
  // Arguments of other types: the raw text, as before; the result still beside it.
  EXPECT_TRUE(Has(
      md,
      "**Tool call** `Edit` (`x1`)\n\n```json\n{\"file_path\":[\"a\"],\"old_string\":1}\n```\n\n"
      "Output\n\n```\nbad\n```\n"));
  // A call with no result is the call alone; a result with no call is itself.
  EXPECT_TRUE(
      Has(md, "**Tool call** `Bash` (`n1`): $ sleep 1\n\n```console\n$ sleep 1\n```\n\n## Tool"));
  EXPECT_TRUE(Has(md, "**Tool result** (`zz`)\n\n```\norphan\n```\n"));
  EXPECT_TRUE(Has(md, "*Result of `e1`: shown with its call above.*"));
  EXPECT_FALSE(Has(md, "*Result of `zz`"));
}

TEST_F(MarkdownExport, EncryptedReasoningWithNoTextShowsNothing) {
  ASSERT_TRUE(store_->CreateSession(NewSession{.id = "sealed"}));
  Message m = Msg(Role::kAssistant, {Part::Reasoning("", "gAAAAB=="), Part::Text("Answer.")});
  m.provider = "openai";
  ASSERT_TRUE(store_->Append("sealed", m));
  const std::string md = Export("out", {"sealed"});
  EXPECT_FALSE(Has(md, "**Reasoning**")) << md;
  EXPECT_FALSE(Has(md, "gAAAAB"));
  EXPECT_TRUE(Has(md, "Answer."));
}

TEST_F(MarkdownExport, SameSessionGivesTheSameBytes) {
  EXPECT_EQ(Export("a", {"chat-main"}), Export("b", {"chat-main"}));
}

TEST_F(MarkdownExport, RefusesAFileAsTheFolderAndAnExistingTranscript) {
  WriteFile(dir_.Sub("file"), "x");
  auto r = ExportTo(*store_, dir_.Sub("file"), {.format = ExportFormat::kMarkdown});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kAlreadyExists);
  Export("out", {"chat-main"});
  auto again = ExportTo(*store_, dir_.Sub("out"),
                        {.format = ExportFormat::kMarkdown, .sessions = {"chat-main"}});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace sessiondb::testing
