// Completion: `sessiondb __complete` answers from the program's own verbs
// and options, so the shells' lists never drift from it; the completions of
// dist/completions/ ask it, in bash (its completion function driven through
// COMP_WORDS / COMP_CWORD), zsh (the function with compsys's _describe and
// _files standing in) and fish (`complete -C`): options of each verb, the
// values an option takes, files and folders, and session ids of the store
// the command line names.
#include <regex>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

// Single-quotes `s` for /bin/sh.
std::string Quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string SourceTree() {
  return std::filesystem::path(SESSIONDB_PG_CLUSTER_SCRIPT).parent_path().parent_path().string();
}

std::set<std::string> LinesOf(const std::string& text) {
  std::set<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.insert(line);
  }
  return lines;
}

// The first field of each line (what precedes a tab, or a zsh ':').
std::set<std::string> Candidates(const std::string& text, char separator = '\t') {
  std::set<std::string> out;
  for (const std::string& line : LinesOf(text)) out.insert(line.substr(0, line.find(separator)));
  return out;
}

class Completion : public Cli {
 protected:
  // `sessiondb __complete -- WORDS`: the candidates' lines.
  std::set<std::string> Ask(const std::vector<std::string>& words) {
    std::vector<std::string> args = {"__complete", "--"};
    args.insert(args.end(), words.begin(), words.end());
    const CliRun r = Run(args, {.with_store = false});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return LinesOf(r.out);
  }

  // Runs `command` with sh, HOME in the test's folder and the program's
  // folder first on PATH (so `sessiondb` is this build's); stdout.
  std::string Shell(const std::string& command, int* exit_code = nullptr) {
    const std::string out = dir_.Sub("shell.out"), err = dir_.Sub("shell.err");
    const std::string bin = std::filesystem::path(SESSIONDB_CLI_PATH).parent_path().string();
    const std::string full = "HOME=" + Quoted(home_) + " PATH=" + Quoted(bin) +
                             ":\"$PATH\" SESSIONDB_STORE= XDG_DATA_HOME= " + command + " >" +
                             Quoted(out) + " 2>" + Quoted(err);
    const int status = std::system(full.c_str());
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (exit_code != nullptr) *exit_code = code;
    EXPECT_EQ(code, 0) << command << "\n" << Slurp(err);
    return Slurp(out);
  }

  // What bash offers for the word `cword` of `words` (words[0] the program),
  // its completion function sourced from dist/completions/.
  std::set<std::string> Bash(const std::vector<std::string>& words, size_t cword) {
    std::string array;
    for (const std::string& w : words) array += Quoted(w) + " ";
    const std::string script =
        "source " + Quoted(SourceTree() + "/dist/completions/sessiondb.bash") + " && COMP_WORDS=(" +
        array + ") && COMP_CWORD=" + std::to_string(cword) +
        " && _sessiondb && printf '%s\\n' \"${COMPREPLY[@]}\"";
    return LinesOf(Shell("bash --norc --noprofile -c " + Quoted(script)));
  }

  // What the zsh function offers for `words` (CURRENT the last one): the
  // "candidate:description" entries it gives _describe, and ":files" or
  // ":dirs" for a call of _files.
  std::set<std::string> Zsh(const std::vector<std::string>& words) {
    std::string array;
    for (const std::string& w : words) array += Quoted(w) + " ";
    const std::string script =
        "_describe() { local name=${@[-1]}; print -rl -- \"${(@P)name}\" }; "
        "_files() { if [[ $1 == -/ ]]; then print :dirs; else print :files; fi }; "
        "_arguments() { return 1 }; "
        "fpath=(" +
        Quoted(SourceTree() + "/dist/completions") +
        " $fpath); "
        "autoload -Uz _sessiondb; words=(" +
        array + "); CURRENT=" + std::to_string(words.size()) + "; _sessiondb";
    return LinesOf(Shell("zsh -f -c " + Quoted(script)));
  }

  // What fish offers for `line` (`complete -C`), the completions file sourced.
  std::string Fish(const std::string& line) {
    return Shell("fish --no-config -c " +
                 Quoted("source " + Quoted(SourceTree() + "/dist/completions/sessiondb.fish") +
                        "; complete -C" + Quoted(line)));
  }

  bool HaveShell(const char* shell) {
    return std::system(("command -v " + std::string(shell) + " >/dev/null").c_str()) == 0;
  }

  // The verbs `sessiondb --help` lists.
  std::set<std::string> HelpVerbs() {
    const std::string help = Run({"--help"}, {.with_store = false}).out;
    std::set<std::string> verbs;
    std::istringstream lines(help);
    bool in_verbs = false;
    for (std::string line; std::getline(lines, line);) {
      if (line == "Subcommands:") {
        in_verbs = true;
      } else if (in_verbs && line.starts_with("  ") && line[2] != ' ') {
        verbs.insert(line.substr(2, line.find(' ', 2) - 2));
      } else if (in_verbs && line.empty()) {
        in_verbs = false;
      }
    }
    EXPECT_GT(verbs.size(), 30u);
    return verbs;
  }

  // The long options a verb's --help lists (its own and the global ones).
  std::set<std::string> HelpOptions(const std::string& verb) {
    const std::string help = Run({verb, "--help"}, {.with_store = false}).out;
    std::set<std::string> options;
    const std::regex option(R"(^  (?:-\w, ?)?(--[a-z][a-z-]*))");
    std::istringstream lines(help);
    std::smatch m;
    for (std::string line; std::getline(lines, line);) {
      if (std::regex_search(line, m, option)) options.insert(m[1].str());
    }
    return options;
  }
};

TEST_F(Completion, TheProgramOffersExactlyTheVerbsAndEachVerbsOptionsOfItsHelp) {
  EXPECT_EQ(Candidates(Run({"__complete", "--", ""}, {.with_store = false}).out), HelpVerbs());
  for (const std::string& verb : HelpVerbs()) {
    if (verb == "key" || verb == "hook" || verb == "trash") continue;  // verbs under them
    EXPECT_EQ(Candidates(Run({"__complete", "--", verb, "--"}, {.with_store = false}).out),
              HelpOptions(verb))
        << verb;
  }
  // Verbs under a verb, and their options.
  EXPECT_EQ(Candidates(Run({"__complete", "--", "key", ""}, {.with_store = false}).out),
            (std::set<std::string>{"new", "status", "rotate", "rekey"}));
  EXPECT_TRUE(Ask({"key", "rotate", "--n"})
                  .contains("--new-key-file\tThe new master key or passphrase (mode 0600)"))
      << "with its --help text";
}

TEST_F(Completion, OptionsAreThoseOfTheVerbThatBeginWithTheWord) {
  const std::set<std::string> limit = Ask({"ls", "--li"});
  ASSERT_EQ(limit.size(), 1u);
  EXPECT_TRUE(limit.begin()->starts_with("--limit\tSessions per page")) << *limit.begin();
  // After global options and their values too; not show's --last in ls.
  EXPECT_EQ(Candidates(Run({"__complete", "--", "--store", "x", "--json", "show", "--la"},
                           {.with_store = false})
                           .out),
            std::set<std::string>{"--last"});
  EXPECT_EQ(Ask({"ls", "--la"}), std::set<std::string>{});
}

TEST_F(Completion, AnOptionsFixedValuesAreOfferedAndTheProgramTakesEachOfThem) {
  EXPECT_EQ(Ask({"search", "x", "--mode", ""}),
            (std::set<std::string>{"keyword", "vector", "hybrid"}));
  EXPECT_EQ(Ask({"search", "x", "--kind", "m"}), std::set<std::string>{"messages"});
  EXPECT_EQ(Ask({"import", "--format", "c"}),
            (std::set<std::string>{"claude-code", "codex", "chatgpt", "claude-ai"}));
  EXPECT_EQ(Ask({"append", "s", "--role", ""}),
            (std::set<std::string>{"system", "user", "assistant", "tool"}));
  EXPECT_EQ(Ask({"hook", "claude-code", "--seen", ""}),
            (std::set<std::string>{"content", "file", "session-file"}));
  EXPECT_EQ(Ask({"--max-images", ""}), std::set<std::string>{}) << "a number: nothing to offer";

  // Each value offered is one the program takes (no drift from its parsers).
  const std::string sid = NewSession();
  ASSERT_EQ(Sdb({"append", sid, "hello"}).exit_code, 0);
  for (const std::string& mode : Ask({"search", "x", "--mode", ""})) {
    EXPECT_EQ(Sdb({"search", "hello", "--mode", mode}).exit_code, 0) << mode;
  }
  for (const std::string& kind : Ask({"search", "x", "--kind", ""})) {
    EXPECT_EQ(Sdb({"search", "hello", "--kind", kind}).exit_code, 0) << kind;
  }
  for (const std::string& which : Ask({"search", "x", "--archived", ""})) {
    EXPECT_EQ(Sdb({"search", "hello", "--archived", which}).exit_code, 0) << which;
  }
  for (const std::string& role : Ask({"search", "x", "--role", ""})) {
    EXPECT_EQ(Sdb({"search", "hello", "--role", role}).exit_code, 0) << role;
    EXPECT_EQ(Sdb({"append", sid, "text", "--role", role}).exit_code, 0) << role;
  }
  for (const std::string& format : Ask({"project", "s", "--format", ""})) {
    EXPECT_EQ(Sdb({"project", sid, "--format", format}).exit_code, 0) << format;
  }
  for (const std::string& format : Ask({"export", "--format", ""})) {
    const CliRun r = Sdb({"export", "--format", format, "--out", dir_.Sub("export-" + format)});
    EXPECT_EQ(r.exit_code, 0) << format << ": " << r.err;
  }
  EXPECT_EQ(Ask({"import", "--format", ""}).size(), 9u);
}

TEST_F(Completion, FilesFoldersAndNothingWhereAVerbTakesThem) {
  EXPECT_EQ(Ask({"export", "--format", "jsonl", "--out", ""}), std::set<std::string>{":files"});
  EXPECT_EQ(Ask({"import", ""}), std::set<std::string>{":files"});
  EXPECT_EQ(Ask({"--store", ""}), std::set<std::string>{":dirs"});
  EXPECT_EQ(Ask({"key", "new", ""}), std::set<std::string>{":files"});
  EXPECT_EQ(Ask({"new", "--title", ""}), std::set<std::string>{});
}

TEST_F(Completion, SessionIdsComeFromTheStoreTheCommandLineNames) {
  const std::string a = NewSession({"--id", "alpha-1111", "--title", "First chat"});
  const std::string b = NewSession({"--id", "alpha-2222", "--title", "Second chat"});
  NewSession({"--id", "beta-3333", "--title", "Third"});
  ASSERT_EQ(Sdb({"archive", "beta-3333"}).exit_code, 0);
  EXPECT_EQ(Ask({"--store", store_, "show", "al"}),
            (std::set<std::string>{"alpha-1111\tFirst chat", "alpha-2222\tSecond chat"}));
  // Every verb that takes a SESSION, archived sessions too, --store=DIR too.
  EXPECT_EQ(
      Candidates(
          Run({"__complete", "--", "--store=" + store_, "rm", ""}, {.with_store = false}).out),
      (std::set<std::string>{"alpha-1111", "alpha-2222", "beta-3333"}));
  EXPECT_EQ(Candidates(Run({"__complete", "--", "--store", store_, "search", "x", "--session", "b"},
                           {.with_store = false})
                           .out),
            std::set<std::string>{"beta-3333"});
  // $SESSIONDB_STORE, as every verb reads it.
  const CliRun env = Run({"__complete", "--", "export", "--session", "alpha-2"},
                         {.with_store = false, .env = {{"SESSIONDB_STORE", store_}}});
  EXPECT_EQ(Candidates(env.out), std::set<std::string>{"alpha-2222"});
  // No store there: nothing, said nowhere, and none made.
  EXPECT_EQ(Ask({"--store", dir_.Sub("none"), "show", ""}), std::set<std::string>{});
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("none")));
}

TEST_F(Completion, BashCompletesOptionsValuesFilesAndSessionIdsFromTheProgram) {
  NewSession({"--id", "alpha-1111", "--title", "First chat"});
  NewSession({"--id", "beta-3333", "--title", "Third"});
  const std::string sdb = SESSIONDB_CLI_PATH;
  EXPECT_EQ(Bash({sdb, "ls", "--li"}, 2), std::set<std::string>{"--limit"});
  EXPECT_EQ(Bash({sdb, "search", "q", "--mode", "h"}, 4), std::set<std::string>{"hybrid"});
  EXPECT_EQ(Bash({sdb, "export", "--format", ""}, 3),
            (std::set<std::string>{"snapshot", "ac-dc", "agents-kt", "markdown", "jsonl"}));
  EXPECT_EQ(Bash({sdb, "--store", store_, "show", "al"}, 4), std::set<std::string>{"alpha-1111"});
  EXPECT_EQ(Bash({"sessiondb", "--store", store_, "rm", ""}, 4),
            (std::set<std::string>{"alpha-1111", "beta-3333"}))
      << "`sessiondb` found on PATH";
  // Files: what is in the folder named.
  std::filesystem::create_directories(dir_.Sub("notes"));
  WriteFile("notes/chat.json", "{}");
  EXPECT_EQ(Bash({sdb, "import", dir_.Sub("notes/ch")}, 2),
            std::set<std::string>{dir_.Sub("notes/chat.json")});
  // Verbs: exactly those of --help.
  EXPECT_EQ(Bash({sdb, ""}, 1), HelpVerbs());
  // A program that cannot answer: the lists in the file still give the verbs.
  std::set<std::string> with_l;
  for (const std::string& verb : HelpVerbs()) {
    if (verb.starts_with("l")) with_l.insert(verb);
  }
  EXPECT_EQ(Bash({dir_.Sub("no-such-program"), "l"}, 1), with_l);
}

TEST_F(Completion, ZshCompletesOptionsValuesFilesAndSessionIdsFromTheProgram) {
  if (!HaveShell("zsh"))
    GTEST_SKIP() << "zsh is not installed (scripts/setup.sh --tests installs it)";
  NewSession({"--id", "alpha-1111", "--title", "First: chat"});
  const std::string sdb = SESSIONDB_CLI_PATH;
  const std::set<std::string> limit = Zsh({sdb, "ls", "--li"});
  ASSERT_EQ(limit.size(), 1u);
  EXPECT_TRUE(limit.begin()->starts_with("--limit:Sessions per page")) << *limit.begin();
  EXPECT_EQ(Zsh({sdb, "search", "q", "--mode", ""}),
            (std::set<std::string>{"keyword", "vector", "hybrid"}));
  EXPECT_EQ(Zsh({sdb, "--store", store_, "show", "a"}),
            std::set<std::string>{"alpha-1111:First: chat"});
  EXPECT_EQ(Zsh({sdb, "export", "--format", "jsonl", "--out", ""}),
            std::set<std::string>{":files"});
  EXPECT_EQ(Zsh({sdb, "--store", ""}), std::set<std::string>{":dirs"});
  std::set<std::string> verbs;
  for (const std::string& entry : Zsh({sdb, ""})) verbs.insert(entry.substr(0, entry.find(':')));
  EXPECT_EQ(verbs, HelpVerbs());
}

TEST_F(Completion, FishCompletesOptionsValuesFilesAndSessionIdsFromTheProgram) {
  if (!HaveShell("fish"))
    GTEST_SKIP() << "fish is not installed (scripts/setup.sh --tests installs it)";
  NewSession({"--id", "alpha-1111", "--title", "First chat"});
  const std::string limit = Fish("sessiondb ls --li");
  EXPECT_TRUE(limit.starts_with("--limit\tSessions per page")) << limit;
  const std::string options = Fish("sessiondb ls --");
  EXPECT_TRUE(Contains(options, "--all\t")) << options;
  EXPECT_TRUE(Contains(options, "--store\t")) << "global options after the verb: " << options;
  EXPECT_FALSE(Contains(options, "--last")) << "show's, not ls's: " << options;
  EXPECT_EQ(Candidates(Fish("sessiondb search q --archived ")),
            (std::set<std::string>{"include", "exclude", "only"}));
  EXPECT_EQ(Fish("sessiondb --store " + store_ + " show al"), "alpha-1111\tFirst chat\n");
  std::filesystem::create_directories(dir_.Sub("notes"));
  WriteFile("notes/chat.json", "{}");
  EXPECT_EQ(Candidates(Fish("sessiondb import " + dir_.Sub("notes/ch"))),
            std::set<std::string>{dir_.Sub("notes/chat.json")});
}

}  // namespace
}  // namespace sessiondb::testing
