// What `ls` and `show` print on a terminal: titles and message text are
// data, and a title holding ESC must not be able to clear the screen, retitle
// the window or hide lines. The real binary runs with its stdout on a
// pseudo-terminal; the same commands piped, and with --json, stay byte-exact.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli_fixture.h"
#include "cli/output.h"
#include "sessiondb/store.h"

namespace sessiondb::testing {
namespace {

// A title written into the index the way an older sessiondb could have kept
// it, before titles were cleaned: ESC sequences, BEL, DEL and a C1 CSI.
const std::string kRawTitle = "evil\x1b]0;owned\x07\x1b[2J\x7f\xC2\x9Bx";
constexpr char kRawTextBytes[] = "line\x1b[8mhidden\x1b[0m\0nul\rover\nnext\tcol";
const std::string kRawText(kRawTextBytes, sizeof(kRawTextBytes) - 1);

class TerminalOutput : public Cli {
 protected:
  void SetUp() override {
    auto store = Store::Open(store_);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->CreateSession({.id = "s1"}));
    Message m;
    m.parts = {Part::Text(kRawText)};
    ASSERT_TRUE((*store)->Append("s1", m));
    store->reset();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((store_ + "/sessiondb.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE sessions SET title = ?1", -1, &st, nullptr),
              SQLITE_OK);
    sqlite3_bind_text(st, 1, kRawTitle.data(), static_cast<int>(kRawTitle.size()),
                      SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }

  // Runs `sessiondb --store <store> ARGS` with stdout on a raw pseudo-terminal
  // (no newline translation) and returns what the terminal received.
  std::string RunOnTerminal(const std::vector<std::string>& args, int* exit_code) {
    PseudoTerminal tty;
    if (!tty.ok()) {
      ADD_FAILURE() << "no pseudo-terminal available";
      return "";
    }
    termios raw{};
    tcgetattr(tty.slave(), &raw);
    cfmakeraw(&raw);
    tcsetattr(tty.slave(), TCSANOW, &raw);
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("HOME", home_.c_str(), 1);
      // What reaches the terminal is the point here, not a pager
      // (terminal_manners_cli_test.cc).
      setenv("SESSIONDB_PAGER", "cat", 1);
      dup2(tty.slave(), STDOUT_FILENO);
      alarm(60);
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
    tty.CloseSlave();
    std::string out;
    int status = 0;
    // Reads as the child writes, so a full terminal buffer never blocks it.
    while (true) {
      out += tty.Drain();
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      usleep(10'000);
    }
    out += tty.Drain();
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  }
};

// No byte that a terminal would take as a command: C0 but newline, tab and
// the CR of a CR LF, DEL, and C1 as UTF-8 (0xC2 0x80-0x9F).
std::string FirstControl(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const bool crlf = c == '\r' && i + 1 < s.size() && s[i + 1] == '\n';
    if ((c < 0x20 && c != '\n' && c != '\t' && !crlf) || c == 0x7F ||
        (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F)) {
      return "byte " + std::to_string(c) + " at " + std::to_string(i);
    }
  }
  return "";
}

TEST(EscapeForTerminal, ControlCharactersBecomeVisibleEscapes) {
  using cli::EscapeForTerminal;
  EXPECT_EQ(EscapeForTerminal("plain caf\xC3\xA9\n\tok\r\n"), "plain caf\xC3\xA9\n\tok\r\n");
  EXPECT_EQ(EscapeForTerminal("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(EscapeForTerminal(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(EscapeForTerminal("a\rb\x7f\x07"), "a\\x0db\\x7f\\x07");
  EXPECT_EQ(EscapeForTerminal("\xC2\x9B"
                              "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(EscapeForTerminal("\xE2\x80\xAE"
                              "txt"),
            "\\u202etxt");                                 // right-to-left override
  EXPECT_EQ(EscapeForTerminal("\xFF\xC3"), "\\xff\\xc3");  // not UTF-8
  EXPECT_EQ(FirstControl(EscapeForTerminal(kRawTitle + kRawText)), "");
}

TEST_F(TerminalOutput, LsAndShowEscapeControlCharactersOnATerminal) {
  int code = -1;
  const std::string ls = RunOnTerminal({"ls"}, &code);
  EXPECT_EQ(code, 0) << ls;
  EXPECT_EQ(FirstControl(ls), "") << ls;
  EXPECT_TRUE(Contains(ls, "evil\\x1b]0;owned\\x07\\x1b[2J\\x7f\\u009bx")) << ls;

  const std::string show = RunOnTerminal({"show", "s1"}, &code);
  EXPECT_EQ(code, 0) << show;
  EXPECT_EQ(FirstControl(show), "") << show;
  EXPECT_TRUE(Contains(show, "evil\\x1b]0;owned")) << show;
  EXPECT_TRUE(Contains(show, "line\\x1b[8mhidden\\x1b[0m\\x00nul\\x0dover")) << show;
  EXPECT_TRUE(Contains(show, "next\tcol")) << show;  // tabs and newlines stay
}

TEST_F(TerminalOutput, PipedAndJsonOutputStayByteExact) {
  // Piped: the bytes as stored, for programs that want them.
  CliRun piped = Sdb({"show", "s1"});
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_TRUE(Contains(piped.out, kRawTitle)) << piped.out;
  EXPECT_TRUE(Contains(piped.out, "line\x1b[8mhidden")) << piped.out;

  // --json on a terminal: the document JSON escaping makes, not ours.
  int code = -1;
  const std::string json_out = RunOnTerminal({"--json", "show", "s1"}, &code);
  EXPECT_EQ(code, 0);
  const std::string piped_json = Sdb({"--json", "show", "s1"}).out;
  EXPECT_EQ(json_out, piped_json);
  auto j = nlohmann::json::parse(json_out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json_out;
  EXPECT_EQ(j["session"]["title"], kRawTitle);
}

}  // namespace
}  // namespace sessiondb::testing
