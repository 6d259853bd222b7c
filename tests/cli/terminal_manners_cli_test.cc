// Terminal manners: long output goes through a pager only when stdout is a
// terminal ($SESSIONDB_PAGER, then $PAGER; --no-pager), and colour only on a
// terminal and never with NO_COLOR.
#include <sys/stat.h>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class TerminalManners : public Cli {
 protected:
  void SetUp() override {
    ASSERT_EQ(NewSession({"--id", "chat-1", "--title", "Gyroscope notes"}), "chat-1");
    ASSERT_EQ(Sdb({"append", "chat-1", "the gyroscope drifts near the token limit"}).exit_code, 0);
    // A pager that records that it ran and what it was given, and takes a
    // moment to finish, so a CLI that does not wait for it is caught.
    pager_ = WriteFile("pager.sh",
                       "#!/bin/sh\nsleep 0.3\ncat > '" + paged_ + "'\necho ran > '" + ran_ + "'\n");
    chmod(pager_.c_str(), 0755);
  }

  bool PagerRan() const { return std::filesystem::exists(ran_); }

  std::string pager_;
  std::string paged_ = dir_.Sub("paged.txt");
  std::string ran_ = dir_.Sub("pager-ran");
};

TEST_F(TerminalManners, OnATerminalLongOutputGoesThroughThePagerAndIsWaitedFor) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"ls"}, {"show", "chat-1"}, {"events", "chat-1"}, {"search", "gyroscope"}}) {
    std::filesystem::remove(ran_);
    std::filesystem::remove(paged_);
    CliRun r = RunOnTerminal(args, {{"SESSIONDB_PAGER", pager_}});
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    // Checked right after the CLI exited: it waited for the slow pager.
    EXPECT_TRUE(PagerRan()) << args[0];
    EXPECT_TRUE(Contains(Slurp(paged_), args[0] == "ls" ? "Gyroscope notes" : "gyroscope"))
        << args[0] << ": " << Slurp(paged_);
    EXPECT_FALSE(Contains(r.out, "gyroscope")) << args[0] << ": the pager had it, not the terminal";
  }
}

TEST_F(TerminalManners, PagerIsSessiondbPagerThenPager) {
  CliRun r = RunOnTerminal({"ls"}, {{"PAGER", pager_}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(PagerRan()) << "$PAGER is used when $SESSIONDB_PAGER is unset";

  std::filesystem::remove(ran_);
  CliRun cat = RunOnTerminal({"ls"}, {{"PAGER", pager_}, {"SESSIONDB_PAGER", "cat"}});
  EXPECT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_FALSE(PagerRan()) << "$SESSIONDB_PAGER wins; cat means no pager";
  EXPECT_TRUE(Contains(cat.out, "Gyroscope notes")) << cat.out;
}

TEST_F(TerminalManners, NoPagerWhenStdoutIsNotATerminalOrWithNoPager) {
  CliRun piped = Run({"ls"}, {.env = {{"SESSIONDB_PAGER", pager_}, {"PAGER", pager_}}});
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_TRUE(Contains(piped.out, "Gyroscope notes")) << piped.out;
  EXPECT_FALSE(PagerRan()) << "stdout is a file: never a pager";

  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--no-pager", "ls"}, {"ls", "--no-pager"}}) {
    CliRun r = RunOnTerminal(args, {{"SESSIONDB_PAGER", pager_}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(PagerRan()) << args[0];
    EXPECT_TRUE(Contains(r.out, "Gyroscope notes")) << r.out;
  }
}

TEST_F(TerminalManners, AnErrorOpensNoPager) {
  CliRun r = RunOnTerminal({"show", "nosuch-session"}, {{"SESSIONDB_PAGER", pager_}});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(Contains(r.err, "does not exist")) << r.err;
  EXPECT_FALSE(PagerRan());
}

TEST_F(TerminalManners, SearchMatchesAreBoldOnATerminalUnlessNoColor) {
  CliRun color = RunOnTerminal({"--no-pager", "search", "gyroscope", "--mode", "keyword"});
  ASSERT_EQ(color.exit_code, 0) << color.err;
  EXPECT_TRUE(Contains(color.out, "\x1b[1mgyroscope\x1b[0m")) << color.out;

  CliRun empty =
      RunOnTerminal({"--no-pager", "search", "gyroscope", "--mode", "keyword"}, {{"NO_COLOR", ""}});
  EXPECT_TRUE(Contains(empty.out, "\x1b[1m")) << "an empty NO_COLOR is unset";

  CliRun plain = RunOnTerminal({"--no-pager", "search", "gyroscope", "--mode", "keyword"},
                               {{"NO_COLOR", "1"}});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(Contains(plain.out, "gyroscope")) << plain.out;
  EXPECT_FALSE(Contains(plain.out, "\x1b")) << "no escape code at all with NO_COLOR";

  CliRun piped = Sdb({"search", "gyroscope", "--mode", "keyword"});
  EXPECT_FALSE(Contains(piped.out, "\x1b")) << piped.out;
  EXPECT_TRUE(Contains(piped.out, "**gyroscope**")) << piped.out;
}

}  // namespace
}  // namespace sessiondb::testing
