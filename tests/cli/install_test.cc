// `cmake --install --strip` of this build (what `make install` runs) into
// ~/.local of a temporary home: every file lands where the README says, the
// program is stripped and runs, the Python package imports from the user site
// with nothing set, the man page renders without a warning, the completions
// parse and complete, and the verbs of `sessiondb --help` are exactly those of
// the man page and of each completion, so the three cannot drift apart.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// Single-quotes `s` for /bin/sh.
std::string Sh(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct ShellRun {
  int exit_code = -1;
  std::string out, err;
};

class Install : public ::testing::Test {
 protected:
  void SetUp() override {
    ShellRun r = Shell(std::string(SESSIONDB_CMAKE_COMMAND) + " --install " +
                       Sh(SESSIONDB_BINARY_DIR) + " --prefix " + Sh(prefix_) + " --strip");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    install_log_ = r.out;
  }

  // Runs `command` with /bin/sh, HOME in the test's directory.
  ShellRun Shell(const std::string& command) {
    const std::string out = dir_.Sub("out"), err = dir_.Sub("err");
    const std::string full = "cd " + Sh(dir_.Sub("")) + " && HOME=" + Sh(dir_.Sub("home")) +
                             " && export HOME && (" + command + ") >" + Sh(out) + " 2>" + Sh(err);
    const int status = std::system(full.c_str());
    ShellRun r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = ReadAll(out);
    r.err = ReadAll(err);
    return r;
  }

  std::string Installed(const std::string& relative) const { return prefix_ + "/" + relative; }

  // The verbs `sessiondb --help` lists (CLI11's Subcommands section).
  std::set<std::string> HelpVerbs() {
    ShellRun help = Shell(Sh(Installed("bin/sessiondb")) + " --help");
    EXPECT_EQ(help.exit_code, 0) << help.err;
    std::set<std::string> verbs;
    std::istringstream lines(help.out);
    std::string line;
    bool in_section = false;
    while (std::getline(lines, line)) {
      if (line == "Subcommands:" || line == "SUBCOMMANDS:") {
        in_section = true;
      } else if (in_section && line.starts_with("  ") && line.size() > 2 && line[2] != ' ') {
        verbs.insert(line.substr(2, line.find(' ', 2) - 2));
      } else if (in_section && !line.starts_with("  ")) {
        break;
      }
    }
    EXPECT_GT(verbs.size(), 20u) << help.out;
    return verbs;
  }

  // The long global options `sessiondb --help` lists (its OPTIONS section).
  std::set<std::string> HelpGlobalOptions() {
    ShellRun help = Shell(Sh(Installed("bin/sessiondb")) + " --help");
    std::set<std::string> options;
    const std::regex option(R"(^  (?:-\w, ?)?(--[a-z][a-z-]*))");
    std::istringstream lines(help.out.substr(0, help.out.find("Subcommands:")));
    std::string line;
    std::smatch m;
    while (std::getline(lines, line)) {
      if (std::regex_search(line, m, option)) options.insert(m[1].str());
    }
    EXPECT_TRUE(options.contains("--store")) << help.out;
    return options;
  }

  // What the bash completion offers for the words of `line` (the last word is
  // the one being completed), with bash sourcing the installed file.
  std::set<std::string> BashComplete(const std::string& words, int cword) {
    ShellRun r = Shell("bash --norc --noprofile -c " +
                       Sh("source " + Sh(Installed("share/bash-completion/completions/sessiondb")) +
                          " && COMP_WORDS=(" + words + ") && COMP_CWORD=" + std::to_string(cword) +
                          " && _sessiondb && printf '%s\\n' \"${COMPREPLY[@]}\""));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> offered;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.empty()) offered.insert(line);
    }
    return offered;
  }

  // The section headers of an ELF file (readelf -S), one per line.
  std::string Sections(const std::string& file) {
    ShellRun r = Shell("readelf -S --wide " + Sh(file));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  TempDir dir_;
  // Where `make install` puts it for a user (HOME is dir_/home in Shell).
  std::string prefix_ = dir_.Sub("home/.local");
  std::string install_log_;  // what `cmake --install` printed
};

TEST_F(Install, EveryFileLandsUnderThePrefix) {
  for (const char* file :
       {"bin/sessiondb", "share/man/man1/sessiondb.1",
        "share/bash-completion/completions/sessiondb", "share/zsh/site-functions/_sessiondb",
        "share/fish/vendor_completions.d/sessiondb.fish", "share/doc/sessiondb/README.md",
        "share/doc/sessiondb/docs/cli.md", "share/doc/sessiondb/docs/http-api.md"}) {
    EXPECT_TRUE(fs::is_regular_file(Installed(file))) << file;
  }
  const fs::perms perms = fs::status(Installed("bin/sessiondb")).permissions();
  EXPECT_NE(perms & fs::perms::others_exec, fs::perms::none);
}

// The debug information and symbol table are most of the program's size:
// `make install` leaves them in build/.
TEST_F(Install, TheProgramIsStripped) {
  const std::string sections = Sections(Installed("bin/sessiondb"));
  EXPECT_NE(sections.find(" .text "), std::string::npos) << sections;
  EXPECT_EQ(sections.find(" .debug_info "), std::string::npos) << sections;
  EXPECT_EQ(sections.find(" .symtab "), std::string::npos) << sections;
}

// When the extension was built, the package lands in the user site of the
// interpreter it was built for (~/.local/lib/python3.X/site-packages), which
// imports it with no PYTHONPATH or PYTHONUSERBASE; the extension is stripped too.
TEST_F(Install, ThePythonPackageImportsFromTheUserSite) {
  std::smatch m;
  if (!std::regex_search(install_log_, m, std::regex(R"(Python package: (/\S+) \(for (\S+)\))"))) {
    GTEST_SKIP() << "the Python package was not built (pybind11-dev, python3-dev): "
                 << install_log_;
  }
  const std::string package = m[1].str(), python = m[2].str();
  EXPECT_TRUE(package.starts_with(prefix_ + "/lib/python3")) << package;
  bool extension = false;
  for (const auto& entry : fs::directory_iterator(package)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("_sessiondb") || !name.ends_with(".so")) continue;
    extension = true;
    EXPECT_EQ(Sections(entry.path().string()).find(" .debug_info "), std::string::npos) << name;
  }
  EXPECT_TRUE(extension) << package;
  ShellRun r = Shell("cd / && env -u PYTHONPATH -u PYTHONUSERBASE -u PYTHONNOUSERSITE " +
                     Sh(python) + " -c " +
                     Sh("import site, sessiondb; print(site.getusersitepackages()); "
                        "print(sessiondb.__file__)"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, fs::path(package).parent_path().string() + "\n" + package + "/__init__.py\n");
}

#ifdef SESSIONDB_NODE_EXECUTABLE
// The Node package lands where `npm install -g --prefix PREFIX` would put it,
// its addon inside, and a program requires it from there and uses a store
// with nothing from the build tree (no SESSIONDB_NODE_ADDON).
TEST_F(Install, TheNodePackageLoadsFromThePrefix) {
  const std::string package = Installed("lib/node_modules/sessiondb");
  for (const char* file :
       {"package.json", "index.d.ts", "lib/index.js", "lib/store.js", "native/sessiondb.node"}) {
    EXPECT_TRUE(fs::is_regular_file(package + "/" + file)) << file;
  }
  const std::string script =
      "const s = require(" + nlohmann::json(package).dump() +
      ");"
      "s.Store.open('node-store').then(async (st) => {"
      "  const x = await st.createSession({ title: 'installed' });"
      "  await st.append(x.id, { role: 'user', content: 'hello from the prefix' });"
      "  console.log((await st.read(x.id))[0].parts[0].text);"
      "  await st.close();"
      "}).catch((e) => { console.error(e); process.exit(1); });";
  ShellRun r =
      Shell("env -u SESSIONDB_NODE_ADDON " + Sh(SESSIONDB_NODE_EXECUTABLE) + " -e " + Sh(script));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello from the prefix\n");
}
#endif

TEST_F(Install, TheInstalledProgramRuns) {
  ShellRun help = Shell(Sh(Installed("bin/sessiondb")) + " --help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("Subcommands:"), std::string::npos) << help.out;
  // And works on a store: the installed binary needs nothing from the build tree.
  ShellRun init = Shell(Sh(Installed("bin/sessiondb")) + " --store store init");
  EXPECT_EQ(init.exit_code, 0) << init.err;
}

TEST_F(Install, TheManPageRendersWithoutWarnings) {
  ShellRun r = Shell("LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z " +
                     Sh(Installed("share/man/man1/sessiondb.1")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ShellRun man = Shell("MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l " +
                       Sh(Installed("share/man/man1/sessiondb.1")));
  EXPECT_EQ(man.exit_code, 0) << man.err;
  EXPECT_EQ(man.err, "");
  EXPECT_NE(man.out.find("sessiondb - an embedded database"), std::string::npos) << man.out;
  EXPECT_NE(man.out.find("SESSIONDB_STORE"), std::string::npos);
}

TEST_F(Install, TheBashCompletionParsesAndCompletesVerbs) {
  ShellRun syntax =
      Shell("bash -n " + Sh(Installed("share/bash-completion/completions/sessiondb")));
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;

  std::set<std::string> with_l;
  for (const std::string& verb : HelpVerbs()) {
    if (verb.starts_with("l")) with_l.insert(verb);
  }
  ASSERT_FALSE(with_l.empty());
  EXPECT_EQ(BashComplete("sessiondb l", 1), with_l);
  // After global options and their values too.
  EXPECT_EQ(BashComplete("sessiondb --store /tmp/x --json l", 4), with_l);
  EXPECT_EQ(BashComplete("sessiondb hook install c", 3), std::set<std::string>{"claude-code"});
  EXPECT_EQ(BashComplete("sessiondb --st", 1), std::set<std::string>{"--store"});
}

TEST_F(Install, TheZshAndFishCompletionsParse) {
  for (const auto& [shell, file] :
       {std::pair{"zsh", "share/zsh/site-functions/_sessiondb"},
        std::pair{"fish", "share/fish/vendor_completions.d/sessiondb.fish"}}) {
    if (Shell(std::string("command -v ") + shell).exit_code != 0) {
      GTEST_SKIP() << shell << " is not installed (scripts/setup.sh --tests installs it)";
    }
    ShellRun r = Shell(std::string(shell) + " -n " + Sh(Installed(file)));
    EXPECT_EQ(r.exit_code, 0) << shell << ": " << r.err;
  }
  ShellRun fish =
      Shell("fish --no-config -c " +
            Sh("source " + Sh(Installed("share/fish/vendor_completions.d/sessiondb.fish")) +
               "; complete -C'sessiondb l'"));
  EXPECT_EQ(fish.exit_code, 0) << fish.err;
  // Every verb starting with "l", each on a line of its own with its description.
  EXPECT_TRUE(fish.out.starts_with("ledger\t")) << fish.out;
  EXPECT_NE(fish.out.find("\nls\t"), std::string::npos) << fish.out;
}

// `cpack -G DEB` (make deb) packs the same files under /usr, with the
// libraries the program links as dependencies, and those it loads on first
// use named by hand (libmicrohttpd a dependency, libpq and libcurl
// recommended).
TEST_F(Install, TheDebianPackageHoldsTheSameFilesUnderUsr) {
  if (Shell("command -v dpkg-deb && command -v dpkg-shlibdeps").exit_code != 0) {
    GTEST_SKIP() << "dpkg-deb or dpkg-shlibdeps (dpkg-dev) is missing";
  }
  const std::string out = dir_.Sub("deb");
  ShellRun packed =
      Shell("cpack -G DEB --config " +
            Sh(std::string(SESSIONDB_BINARY_DIR) + "/CPackConfig.cmake") + " -B " + Sh(out));
  ASSERT_EQ(packed.exit_code, 0) << packed.out << packed.err;
  ShellRun listed = Shell("dpkg-deb -c " + Sh(out) + "/sessiondb_*.deb");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  for (const char* file :
       {"./usr/bin/sessiondb", "./usr/share/man/man1/sessiondb.1",
        "./usr/share/bash-completion/completions/sessiondb",
        "./usr/share/zsh/site-functions/_sessiondb",
        "./usr/share/fish/vendor_completions.d/sessiondb.fish",
        "./usr/share/doc/sessiondb/README.md", "./usr/share/doc/sessiondb/docs/cli.md"}) {
    EXPECT_NE(listed.out.find(std::string(file) + "\n"), std::string::npos) << file;
  }
  ShellRun depends = Shell("dpkg-deb -f " + Sh(out) + "/sessiondb_*.deb Depends");
  EXPECT_NE(depends.out.find("libsqlite3"), std::string::npos) << depends.out;
  // Loaded on first use, so not found by dpkg-shlibdeps: named by hand.
  EXPECT_NE(depends.out.find("libmicrohttpd12"), std::string::npos) << depends.out;
  ShellRun recommends = Shell("dpkg-deb -f " + Sh(out) + "/sessiondb_*.deb Recommends");
  EXPECT_NE(recommends.out.find("libpq5"), std::string::npos) << recommends.out;
  EXPECT_NE(recommends.out.find("libcurl4"), std::string::npos) << recommends.out;
}

// The verbs of --help, the man page and each completion are the same set.
TEST_F(Install, TheManPageAndCompletionsNameExactlyTheVerbsOfHelp) {
  const std::set<std::string> verbs = HelpVerbs();

  // Man page: the tags of the VERBS section (".TP" then ".B verb").
  const std::string man = ReadAll(Installed("share/man/man1/sessiondb.1"));
  const size_t begin = man.find(".SH VERBS\n"), end = man.find(".SH ", begin + 1);
  ASSERT_NE(begin, std::string::npos);
  std::set<std::string> in_man;
  const std::regex tag(R"(\.TP\n\.B ([a-z][a-z-]*)\n)");
  const std::string section = man.substr(begin, end - begin);
  for (std::sregex_iterator it(section.begin(), section.end(), tag), last; it != last; ++it) {
    in_man.insert((*it)[1].str());
  }
  EXPECT_EQ(in_man, verbs) << "the VERBS of dist/man/sessiondb.1 and `sessiondb --help` differ";

  // Bash: what an empty word completes to.
  EXPECT_EQ(BashComplete("sessiondb ''", 1), verbs)
      << "dist/completions/sessiondb.bash and `sessiondb --help` differ";

  // Zsh: the 'verb:description' entries of its verbs array.
  const std::string zsh = ReadAll(Installed("share/zsh/site-functions/_sessiondb"));
  std::set<std::string> in_zsh;
  const std::regex entry(R"(\n  '([a-z][a-z-]*):)");
  for (std::sregex_iterator it(zsh.begin(), zsh.end(), entry), last; it != last; ++it) {
    in_zsh.insert((*it)[1].str());
  }
  EXPECT_EQ(in_zsh, verbs) << "dist/completions/_sessiondb and `sessiondb --help` differ";

  // Fish: the verbs offered before one is given (-a VERB on the first word).
  const std::string fish = ReadAll(Installed("share/fish/vendor_completions.d/sessiondb.fish"));
  std::set<std::string> in_fish;
  const std::regex first(R"(not __fish_seen_subcommand_from \$verbs" -a ([a-z][a-z-]*) )");
  for (std::sregex_iterator it(fish.begin(), fish.end(), first), last; it != last; ++it) {
    in_fish.insert((*it)[1].str());
  }
  EXPECT_EQ(in_fish, verbs) << "dist/completions/sessiondb.fish and `sessiondb --help` differ";
  // ... and its $verbs list, which the other completions' conditions use.
  std::string list = fish.substr(fish.find("set -l verbs "));
  list = std::regex_replace(list.substr(0, list.find("\n\n")), std::regex(R"(\\\n)"), " ");
  std::istringstream words(list.substr(std::string("set -l verbs ").size()));
  std::set<std::string> fish_list;
  for (std::string w; words >> w;) fish_list.insert(w);
  EXPECT_EQ(fish_list, verbs) << "the $verbs of dist/completions/sessiondb.fish";

  // Every global option of --help is offered by each completion and in the man page.
  const std::string bash = ReadAll(Installed("share/bash-completion/completions/sessiondb"));
  for (const std::string& option : HelpGlobalOptions()) {
    const std::string name = option.substr(2);
    EXPECT_NE(bash.find(option), std::string::npos) << option << " (bash)";
    EXPECT_NE(zsh.find(option + "["), std::string::npos) << option << " (zsh)";
    EXPECT_NE(fish.find("-l " + name + " "), std::string::npos) << option << " (fish)";
    if (option != "--help") {
      std::string roff;
      for (char c : option) roff += c == '-' ? std::string("\\-") : std::string(1, c);
      EXPECT_NE(man.find(roff), std::string::npos) << option << " (man page)";
    }
  }
}

}  // namespace
}  // namespace sessiondb::testing
