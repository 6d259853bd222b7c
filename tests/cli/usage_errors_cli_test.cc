// A command line that does not parse, through the real binary: every error
// is a line that starts "sessiondb: ", names the verb and where its options
// are listed, and an unknown option gets the closest options of that verb
// (or the global ones), as an unknown verb gets the closest verbs. Exit 1,
// or 2 for a value an option's check refused; --json gets the same words.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class UsageErrors : public Cli {};

TEST_F(UsageErrors, AnUnknownOptionNamesItsVerbAndTheClosestOptionOfThatVerb) {
  const CliRun r = Sdb({"ls", "--limt", "5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sessiondb: unknown option '--limt' for 'sessiondb ls'. See 'sessiondb ls --help'.\n"
            "\nThe most similar option is\n\t--limit\n");
  EXPECT_EQ(r.out, "");
  // With its value attached, and among another verb's options: show has --last.
  EXPECT_TRUE(Contains(Sdb({"ls", "--limt=5"}).err, "The most similar option is\n\t--limit\n"));
  const CliRun show = Sdb({"show", "x", "--lats", "2"});
  EXPECT_TRUE(Contains(show.err, "unknown option '--lats' for 'sessiondb show'")) << show.err;
  EXPECT_TRUE(Contains(show.err, "\t--last\n")) << show.err;
  // A global option after the verb is one of its options too.
  EXPECT_TRUE(Contains(Sdb({"ls", "--no-pagr"}).err, "The most similar option is\n\t--no-pager\n"));
  // Nothing close: no suggestion.
  EXPECT_EQ(Sdb({"ls", "--bogus"}).err,
            "sessiondb: unknown option '--bogus' for 'sessiondb ls'. See 'sessiondb ls --help'.\n");
}

TEST_F(UsageErrors, AnUnknownOptionBeforeTheVerbIsNamedWithTheClosestGlobalOne) {
  const CliRun r = Run({"--stor", store_, "ls"}, {.with_store = false});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sessiondb: unknown option '--stor'. See 'sessiondb --help'.\n"
            "\nThe most similar option is\n\t--store\n")
      << "not taken for a verb named after the option's value";
}

TEST_F(UsageErrors, MissingValuesArgumentsAndVerbsSayWhatIsNeeded) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  for (const Case& c : std::vector<Case>{
           {{"ls", "--limit"},
            "sessiondb: option '--limit' of 'sessiondb ls' needs a value (N). "
            "See 'sessiondb ls --help'.\n"},
           {{"append"},
            "sessiondb: 'sessiondb append' needs SESSION. See 'sessiondb append --help'.\n"},
           {{"export", "--format", "jsonl"},
            "sessiondb: 'sessiondb export' needs --out PATH. See 'sessiondb export --help'.\n"},
           {{"ls", "extra"},
            "sessiondb: unexpected argument 'extra' for 'sessiondb ls'. See 'sessiondb ls "
            "--help'.\n"},
           {{"ls", "--all", "--archived"},
            "sessiondb: --archived excludes --all. See 'sessiondb ls --help'.\n"},
           {{"key"},
            "sessiondb: 'sessiondb key' needs a command: new, status, rotate, rekey. "
            "See 'sessiondb key --help'.\n"},
           {{"key", "rotat"},
            "sessiondb: 'rotat' is not a 'sessiondb key' command. See 'sessiondb key --help'.\n"
            "\nThe most similar command is\n\trotate\n"},
           {{}, "sessiondb: no command given. See 'sessiondb --help'.\n"},
           {{"append", "x", "--tokens", "5"},
            "sessiondb: option '--tokens' of 'sessiondb append' needs at least 2 values "
            "(IN,OUT[,CACHED[,REASONING[,CACHE_WRITE]]]), got 1. See 'sessiondb append --help'.\n"},
       }) {
    const CliRun r = Sdb(c.args);
    const std::string what = c.args.empty() ? "(nothing)" : c.args[0];
    EXPECT_EQ(r.exit_code, 1) << what << ": " << r.err;
    EXPECT_EQ(r.err, c.err) << what;
    EXPECT_FALSE(Contains(r.err, "Run with --help")) << "CLI11's words: " << r.err;
  }
}

TEST_F(UsageErrors, AValueAnOptionRefusesHasThePrefixAndExits2) {
  const CliRun r = Sdb({"ls", "--limit", "abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "sessiondb: --limit: must be a whole number from 1 to 1000, in decimal digits "
            "(got 'abc'). See 'sessiondb ls --help'.\n");
}

TEST_F(UsageErrors, JsonGetsTheSameWordsInItsErrorDocument) {
  const CliRun unknown = Sdb({"--json", "ls", "--limt", "5"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.Json()["error"]["code"], "usage");
  EXPECT_EQ(unknown.Json()["error"]["message"], "unknown option '--limt' for 'sessiondb ls'");
  const CliRun global = Sdb({"--json", "--stor", "x", "ls"});
  EXPECT_EQ(global.Json()["error"]["message"], "unknown option '--stor'");
  const CliRun invalid = Sdb({"--json", "ls", "--limit", "0"});
  EXPECT_EQ(invalid.exit_code, 2);
  EXPECT_EQ(invalid.Json()["error"]["code"], "invalid_argument");
  EXPECT_TRUE(Contains(invalid.Json()["error"]["message"].get<std::string>(), "--limit: must be"));
}

}  // namespace
}  // namespace sessiondb::testing
