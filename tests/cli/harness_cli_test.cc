// The harness verbs of `sessiondb`: fork, events, compact, prune, view,
// usage, drafts and project, through the real binary.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class HarnessCli : public Cli {
 protected:
  std::string Line(CliRun r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    return r.out;
  }
};

TEST_F(HarnessCli, EveryHarnessVerbHasHelpWithAnExample) {
  for (const char* verb :
       {"fork", "events", "compact", "prune", "view", "usage", "drafts", "project"}) {
    CliRun r = Run({verb, "--help"}, {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << verb;
    EXPECT_TRUE(Contains(r.out, std::string("sessiondb ") + verb)) << verb << ":\n" << r.out;
    EXPECT_TRUE(Contains(r.out, "Example")) << verb << ":\n" << r.out;
  }
}

TEST_F(HarnessCli, ForkCompactAndEventsWorkTogether) {
  std::string sid = NewSession({"--title", "Parent"});
  ASSERT_EQ(Sdb({"append", sid, "first question"}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", sid, "--role", "assistant", "an answer"}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", sid, "second question"}).exit_code, 0);

  std::string fork = Line(Sdb({"fork", sid, "--at", "2"}));
  ASSERT_EQ(Sdb({"append", fork, "a different second question"}).exit_code, 0);
  json listed = Sdb({"--json", "ls"}).Json();
  ASSERT_EQ(listed["sessions"].size(), 2u);
  EXPECT_EQ(listed["sessions"][0]["id"], fork);
  EXPECT_EQ(listed["sessions"][0]["parent_id"], sid);
  EXPECT_EQ(listed["sessions"][0]["fork_seq"], 2);
  EXPECT_EQ(listed["sessions"][0]["title"], "Parent");
  EXPECT_TRUE(Contains(Sdb({"ls", "--full"}).out, sid + "@2"));  // ls alone shortens ids
  json shown = Sdb({"--json", "show", fork}).Json();
  ASSERT_EQ(shown["messages"].size(), 3u);
  EXPECT_EQ(shown["messages"][2]["parts"][0]["text"], "a different second question");

  CliRun compact = Sdb({"--json", "compact", sid, "--from", "1", "--to", "2", "--model", "m",
                        "--strategy", "llm-summary"},
                       "They greeted each other.\n");
  ASSERT_EQ(compact.exit_code, 0) << compact.err;
  json c = compact.Json();
  EXPECT_EQ(c["seq"], 4);
  EXPECT_EQ(c["compaction"]["summary"], "They greeted each other.\n");
  json events = Sdb({"--json", "events", sid}).Json()["events"];
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[3]["type"], "compaction");
  EXPECT_EQ(events[3]["compaction"]["model"], "m");
  EXPECT_TRUE(Contains(Sdb({"events", sid}).out, "compaction  of #1..#2"));

  CliRun bad = Sdb({"compact", sid, "--from", "3", "--to", "9", "--summary", "x"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "1..4")) << bad.err;
  CliRun no_summary =
      Run({"compact", sid, "--from", "1", "--to", "2"}, {.stdin_is_terminal = true});
  EXPECT_EQ(no_summary.exit_code, 2);
  EXPECT_TRUE(Contains(no_summary.err, "--summary")) << no_summary.err;
  EXPECT_EQ(Sdb({"--json", "events", sid}).Json()["events"].size(), 4u);
  EXPECT_EQ(Sdb({"fork", "nope"}).exit_code, 3);
  EXPECT_EQ(Sdb({"fork", sid, "--at", "99"}).exit_code, 2);
}

TEST_F(HarnessCli, ViewRecordsAResourceAndPruneErasesWhatASummaryCovers) {
  std::string sid = NewSession();
  std::string png = WritePng("shot.png", "cli-view");
  json appended = Sdb({"--json", "append", sid, "secret words", "--image", png}).Json();
  std::string res = appended["resources"][0]["resource_id"];
  std::string sha = appended["resources"][0]["content_sha256"];
  ASSERT_EQ(Sdb({"append", sid, "--role", "assistant", "seen"}).exit_code, 0);

  json view = Sdb({"--json", "view", sid, res, "--reason", "again"}).Json();
  EXPECT_EQ(view["type"], "resource_view");
  EXPECT_EQ(view["resource_view"]["resource"]["content_sha256"], sha);
  EXPECT_EQ(Sdb({"view", sid, "res_unknown"}).exit_code, 3);

  CliRun compact = Sdb({"--json", "compact", sid, "--from", "1", "--to", "2", "--summary",
                        "an image was shown", "--prune"});
  ASSERT_EQ(compact.exit_code, 0) << compact.err;
  json c = compact.Json();
  EXPECT_EQ(c["pruned"]["events_pruned"], 2);
  EXPECT_EQ(c["pruned"]["blobs_deleted"], 1);
  EXPECT_TRUE(Contains(c["compaction"]["limitations"].get<std::string>(), res));
  EXPECT_EQ(FindBlob(sha), "");
  json shown = Sdb({"--json", "show", sid}).Json();
  EXPECT_EQ(shown["messages"][0]["pruned"], true);
  EXPECT_EQ(Sdb({"verify"}).exit_code, 0);
  EXPECT_EQ(Sdb({"prune", sid, "1"}).exit_code, 2);  // not a compaction
}

TEST_F(HarnessCli, ProjectPrintsEachProviderShape) {
  std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "--role", "system", "be brief"}).exit_code, 0);
  ASSERT_EQ(Sdb({"append", sid, "what is this?", "--image", WritePng("a.png", "proj")}).exit_code,
            0);
  json chat = Sdb({"project", sid}).Json();
  ASSERT_EQ(chat["messages"].size(), 2u);
  EXPECT_EQ(chat["messages"][0]["role"], "system");
  EXPECT_EQ(chat["messages"][1]["content"][1]["type"], "image_url");
  json anthropic = Sdb({"project", sid, "--format", "anthropic"}).Json();
  EXPECT_EQ(anthropic["system"], "be brief");
  EXPECT_EQ(anthropic["messages"][0]["content"][1]["source"]["type"], "base64");
  json responses = Sdb({"project", sid, "--format", "openai-responses"}).Json();
  EXPECT_EQ(responses["input"][1]["content"][1]["type"], "input_image");

  CliRun bad = Sdb({"project", sid, "--format", "gemini"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(Contains(bad.err, "openai-chat")) << bad.err;
  EXPECT_EQ(Sdb({"project", "nope"}).exit_code, 3);
}

TEST_F(HarnessCli, UsageTotalsTheTurnsTokens) {
  std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "--role", "assistant", "a", "--model", "gpt-5", "--provider",
                 "openai", "--tokens", "100,20,80"})
                .exit_code,
            0);
  ASSERT_EQ(Sdb({"append", sid, "--role", "assistant", "b", "--model", "gpt-5", "--provider",
                 "openai", "--tokens", "50,5,0,7"})
                .exit_code,
            0);
  json u = Sdb({"--json", "usage", sid}).Json();
  EXPECT_EQ(u["turns"], 2);
  EXPECT_EQ(u["total"]["input_tokens"], 150);
  EXPECT_EQ(u["total"]["output_tokens"], 25);
  EXPECT_EQ(u["total"]["cached_tokens"], 80);
  EXPECT_EQ(u["total"]["reasoning_tokens"], 7);
  EXPECT_EQ(u["by_model"][0]["provider"], "openai");
  EXPECT_TRUE(Contains(Sdb({"usage", sid}).out, "gpt-5"));
  EXPECT_EQ(Sdb({"append", sid, "c", "--tokens", "1"}).exit_code, 1);     // IN,OUT at least
  EXPECT_EQ(Sdb({"append", sid, "c", "--tokens", "1,-2"}).exit_code, 2);  // not a count
  EXPECT_EQ(Sdb({"--json", "usage", sid}).Json()["turns"], 2);
}

TEST_F(HarnessCli, DraftsAreListedFinishedAndDiscarded) {
  std::string sid = NewSession();
  EXPECT_TRUE(Contains(Sdb({"drafts", sid}).out, "No unfinished drafts"));
  EXPECT_EQ(Sdb({"drafts", "nope"}).exit_code, 3);
  EXPECT_EQ(Sdb({"drafts", sid, "--finish", "draft_nope"}).exit_code, 3);
  EXPECT_EQ(Sdb({"drafts", sid, "--discard", "draft_nope"}).exit_code, 3);
}

}  // namespace
}  // namespace sessiondb::testing
