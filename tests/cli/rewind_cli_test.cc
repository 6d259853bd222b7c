// `sessiondb rewind` through the real binary: the view ends at a seq, `show`
// and `tail` read the view, `events` the whole log; bad targets are refused
// and write nothing.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class RewindCli : public Cli {
 protected:
  std::string SessionWithThree() {
    std::string sid = NewSession();
    for (const char* text : {"first", "second", "third"}) {
      EXPECT_EQ(Sdb({"append", sid, text}).exit_code, 0);
    }
    return sid;
  }

  std::vector<int64_t> ShownSeqs(const std::string& sid, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--json", "show", sid};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<int64_t> out;
    const json shown = Sdb(args).Json();
    for (const json& m : shown["messages"]) out.push_back(m["seq"].get<int64_t>());
    return out;
  }
};

TEST_F(RewindCli, RewindEndsTheViewAndEventsStillListTheLog) {
  std::string sid = SessionWithThree();
  CliRun r = Sdb({"--json", "rewind", sid, "--to", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = r.Json();
  EXPECT_EQ(j["event"]["type"], "rewind");
  EXPECT_EQ(j["event"]["seq"], 4);
  EXPECT_EQ(j["event"]["rewind"]["to_seq"], 1);
  EXPECT_EQ(j["session"]["message_count"], 1);
  EXPECT_EQ(j["session"]["last_seq"], 4);

  EXPECT_EQ(ShownSeqs(sid), (std::vector<int64_t>{1}));
  ASSERT_EQ(Sdb({"append", sid, "a new second"}).exit_code, 0);
  EXPECT_EQ(ShownSeqs(sid), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(ShownSeqs(sid, {"--last", "1"}), (std::vector<int64_t>{5}));
  EXPECT_FALSE(Contains(Sdb({"show", sid}).out, "third"));

  json events = Sdb({"--json", "events", sid}).Json()["events"];
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[2]["message"]["parts"][0]["text"], "third");
  EXPECT_EQ(events[3]["rewind"]["to_seq"], 1);
  EXPECT_TRUE(Contains(Sdb({"events", sid}).out, "rewind  to #1"));
}

TEST_F(RewindCli, HumanOutputSaysWhereTheViewEndsAndAPrefixNamesTheSession) {
  std::string sid = SessionWithThree();
  CliRun r = Sdb({"rewind", sid.substr(0, 20), "--to", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "rewind #4")) << r.out;
  EXPECT_TRUE(Contains(r.out, "ends at #2")) << r.out;
  EXPECT_TRUE(Contains(r.out, "2 messages")) << r.out;
  EXPECT_EQ(ShownSeqs(sid), (std::vector<int64_t>{1, 2}));
}

TEST_F(RewindCli, BadTargetsAreRefusedAndWriteNothing) {
  std::string sid = SessionWithThree();
  struct Case {
    std::vector<std::string> args;
    int exit_code;
  };
  // A value that is no seq (negative, not decimal digits, past INT64_MAX)
  // is refused before the store opens, and one past the end by the store:
  // both invalid arguments (exit 2). A missing --to is a usage error (exit 1).
  const std::vector<Case> cases = {
      {{"rewind", sid, "--to", "4"}, 2},                     // past the end
      {{"rewind", sid, "--to", "-1"}, 2},                    // negative
      {{"rewind", sid, "--to", "two"}, 2},                   // not a number
      {{"rewind", sid, "--to", "0x2"}, 2},                   // not decimal
      {{"rewind", sid, "--to", "99999999999999999999"}, 2},  // past INT64_MAX
      {{"rewind", sid}, 1},                                  // no --to
      {{"rewind", "no-such-session", "--to", "0"}, 3},       // unknown session
  };
  for (const Case& c : cases) {
    CliRun r = Sdb(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args.back() << "\n" << r.out << r.err;
    EXPECT_FALSE(r.err.empty()) << c.args.back();
  }
  json events = Sdb({"--json", "events", sid}).Json()["events"];
  EXPECT_EQ(events.size(), 3u);
  EXPECT_EQ(ShownSeqs(sid), (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace sessiondb::testing
