// Every numeric option of the real `sessiondb`, found in its own --help, is
// parsed strictly: "-1", "0x2", "1e3", "abc" and a number past any range exit
// 2 with a message that names the option and its range, and nothing is
// written.
#include <regex>
#include <set>
#include <sstream>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class NumericOptions : public Cli {};

// The options of one --help text whose value is a number, by their value's
// name there: N, SEQ, SIZE, DAYS, SECONDS, the tokens' IN,OUT list, or the
// type CLI11 names (INT, UINT, FLOAT) when there is none.
std::vector<std::string> NumericOptionsIn(const std::string& help) {
  std::vector<std::string> found;
  const std::regex option_line(
      R"(^  (?:-\w, ?)?(--[a-z-]+) (N|SEQ|SIZE|DAYS|SECONDS|IN,OUT\S*|U?INT\S*|FLOAT\S*)\b)");
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (std::regex_search(line, m, option_line)) found.push_back(m[1].str());
  }
  return found;
}

// The verbs `sessiondb --help` lists.
std::vector<std::string> Verbs(const std::string& help) {
  std::vector<std::string> verbs;
  std::istringstream lines(help);
  std::string line;
  bool in_verbs = false;
  while (std::getline(lines, line)) {
    if (line == "Subcommands:") {
      in_verbs = true;
    } else if (in_verbs && line.starts_with("  ") && line[2] != ' ') {
      verbs.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (in_verbs && line.empty()) {
      in_verbs = false;
    }
  }
  return verbs;
}

TEST_F(NumericOptions, EveryNumericOptionRefusesWhatIsNotAPlainDecimalNumberWithExit2) {
  const std::string top = Run({"--help"}, {.with_store = false}).out;
  // Each verb with its numeric options; the global ones go before any verb.
  std::vector<std::pair<std::string, std::string>> options;
  for (const std::string& option : NumericOptionsIn(top.substr(0, top.find("Subcommands:")))) {
    options.emplace_back("", option);
  }
  for (const std::string& verb : Verbs(top)) {
    const std::string help = Run({verb, "--help"}, {.with_store = false}).out;
    // A verb's help ends with the global options, already counted.
    for (const std::string& option :
         NumericOptionsIn(help.substr(0, help.find("Global options")))) {
      options.emplace_back(verb, option);
    }
  }
  std::set<std::string> names;
  for (const auto& [verb, option] : options) names.insert(verb + " " + option);
  // Not an exhaustive list (the walk is), but proof the walk found them.
  for (const char* expected :
       {"rewind --to", "fork --at", "show --last", "ls --limit", "serve --port", "serve --max-body",
        "search --offset", "purge --older-than", " --max-image-bytes", "append --tokens"}) {
    EXPECT_TRUE(names.contains(expected)) << "not found in --help: " << expected;
  }
  EXPECT_GE(options.size(), 25u);

  const std::string sid = NewSession();
  ASSERT_FALSE(sid.empty());
  const std::string before = Sdb({"--json", "show", sid}).out;
  // Each option gets two of the bad values, in turn, so that every value
  // meets a dozen options and every option one that a lax parser (stoll,
  // strtol) would take ("0x2", "1e3" and "+3" are numbers to them): a
  // third of the runs of trying all six on each, which under ASan took a
  // minute of CI.
  const std::vector<std::string> kBad = {"0x2", "-1", "1e3", "abc", "+3", std::string(309, '9')};
  for (size_t i = 0; i < options.size(); ++i) {
    const auto& [verb, option] = options[i];
    for (const std::string& bad : {kBad[(2 * i) % 6], kBad[(2 * i + 3) % 6]}) {
      std::vector<std::string> args;
      if (!verb.empty()) args.push_back(verb);
      if (verb == "append") args.insert(args.end(), {sid, "text"});
      // --tokens takes IN,OUT: the bad value is one of them.
      args.insert(args.end(), {option, option == "--tokens" ? "5," + bad : bad});
      if (verb.empty()) args.insert(args.end(), {"append", sid, "text"});
      const CliRun r = Sdb(args);
      const std::string what = verb + " " + option + " " + bad.substr(0, 12);
      EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
      EXPECT_TRUE(Contains(r.err, option)) << what << ": " << r.err;
      EXPECT_TRUE(Contains(r.err, "decimal digits")) << what << ": " << r.err;
      EXPECT_LT(r.err.size(), 600u) << what << ": " << r.err;
    }
  }
  // Nothing was appended by any of them.
  EXPECT_EQ(Sdb({"--json", "show", sid}).out, before);
}

TEST_F(NumericOptions, TheRangeIsNamedAndItsEndsAreAccepted) {
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "one"}).exit_code, 0);
  const CliRun negative = Sdb({"rewind", sid, "--to", "-1"});
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_TRUE(Contains(negative.err,
                       "--to: must be a whole number from 0 to "
                       "9223372036854775807, in decimal digits (got '-1')"))
      << negative.err;
  const CliRun limit = Sdb({"ls", "--limit", "1001"});
  EXPECT_EQ(limit.exit_code, 2);
  EXPECT_TRUE(Contains(limit.err, "from 1 to 1000")) << limit.err;
  EXPECT_EQ(Sdb({"ls", "--limit", "1000"}).exit_code, 0);
  EXPECT_EQ(Sdb({"show", sid, "--last", "0"}).exit_code, 0);
  EXPECT_EQ(Sdb({"purge", "--older-than", "1.5"}).exit_code, 0);
  EXPECT_EQ(Sdb({"purge", "--older-than", ".5"}).exit_code, 2);
  EXPECT_EQ(Sdb({"--max-image-bytes", "2MiB", "ls"}).exit_code, 0);
  EXPECT_EQ(Sdb({"--max-image-bytes", "0x2MiB", "ls"}).exit_code, 2);
  const CliRun json = Sdb({"--json", "rewind", sid, "--to", "0x2"});
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_EQ(json.Json()["error"]["code"], "invalid_argument");
  // 0x2 was not taken as 2: the view still holds the message.
  EXPECT_EQ(MessageCount(sid), 1u);
}

}  // namespace
}  // namespace sessiondb::testing
