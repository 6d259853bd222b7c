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
  EXPECT_TRUE(Has(md, "**Tool call** `zoom` (`call_1`)\n\n```json\n{\"x\":1}\n```\n"));
  EXPECT_TRUE(Has(md, "**Tool result** (`call_1`)\n\n```\nzoomed: a cat\n```\n"));
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
