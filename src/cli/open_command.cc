// `sessiondb open SESSION`: the address of a session in the web page that
// `sessiondb serve` serves, printed, and opened in a browser when one can be.
// The page routes `#/s/ID` to the session itself, so this address is one a
// user can bookmark or paste into a chat.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "api/json_forms.h"
#include "cli/commands.h"
#include "cli/session_ref.h"

extern char** environ;

namespace sessiondb::cli {
namespace {

// Where `sessiondb serve` listens when given no --host or --port.
constexpr char kDefaultPageUrl[] = "http://127.0.0.1:7411";

struct OpenArgs {
  std::string session = "-";
  std::string url;
  bool print_only = false;
};

// The page's base address: --url, else $SESSIONDB_URL, else serve's default,
// without a trailing slash. kInvalidArgument for anything but http(s)://, or
// one with a space or control character, so a mistyped address is said, not
// handed to a browser.
Result<std::string> PageBase(const std::string& flag) {
  std::string base = flag;
  if (base.empty()) {
    const char* env = std::getenv("SESSIONDB_URL");
    base = env && *env ? env : kDefaultPageUrl;
  }
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0)
    return Err(
        Status::InvalidArgument("the page address must begin with http:// or https://, "
                                "got '" +
                                base + "' (--url or $SESSIONDB_URL)"));
  // A URL has neither; a control character would reach the browser's
  // command line and, printed, the terminal.
  if (std::any_of(base.begin(), base.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7F; })) {
    return Err(
        Status::InvalidArgument("the page address may not hold spaces or control "
                                "characters, got '" +
                                base + "' (--url or $SESSIONDB_URL)"));
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

// The program that opens an address: the first entry of $BROWSER (a list
// separated by ':', as sensible-browser reads it), else xdg-open when a
// graphical session is there to show it. Empty: nothing can, so we only print.
std::string BrowserProgram() {
  if (const char* browser = std::getenv("BROWSER"); browser && *browser) {
    std::string first(browser);
    return first.substr(0, first.find(':'));
  }
  const bool graphical = std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY");
  return graphical ? "xdg-open" : "";
}

// Runs `program url` (looked up on PATH, no shell) and waits for it: xdg-open
// and browsers hand the address over and return.
Status LaunchBrowser(const std::string& program, const std::string& url) {
  std::vector<std::string> args = {program, url};
  std::vector<char*> argv = {args[0].data(), args[1].data(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, program.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    return Status::Io("cannot run '" + program + "' to open the page; the address is " + url);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::Io("'" + program + "' could not open " + url);
  return Status::Ok();
}

}  // namespace

void AddOpenCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<OpenArgs>();
  auto* cmd = app.add_subcommand(
      "open", "Print a session's address in the web page, and open it in a browser");
  cmd->add_option("session", args->session,
                  std::string(kSessionArgHelp) + " (default: the active session)");
  cmd->add_option("--url", args->url,
                  "Where `sessiondb serve` is: default $SESSIONDB_URL, else http://127.0.0.1:7411")
      ->option_text("URL");
  cmd->add_flag("--print", args->print_only, "Only print the address; do not start a browser");
  cmd->footer(
      "\nThe address is the page's `#/s/ID`; it works while `sessiondb serve` runs there.\n"
      "A browser is started with $BROWSER, else xdg-open on a graphical session; otherwise\n"
      "the address is only printed.\n"
      "\nExamples:\n  sessiondb open 0192f3a1\n  sessiondb open - --print --url "
      "http://127.0.0.1:8080");
  cmd->callback([&ctx, args] {
    auto base = PageBase(args->url);
    if (!base) return ctx.Fail(base.error());
    std::optional<std::string> id = ctx.SessionId(args->session);
    if (!id) return;
    const std::string url = *base + "/#/s/" + *id;
    const std::string browser = args->print_only ? "" : BrowserProgram();
    const Status opened = browser.empty() ? Status::Ok() : LaunchBrowser(browser, url);
    // A browser that failed is an error whose message holds the address; on
    // a terminal the address is printed first all the same.
    if (ctx.options.json) {
      if (!opened.ok()) return ctx.Fail(opened);
      return ctx.PrintJson({{"session_id", *id}, {"url", url}, {"opened", !browser.empty()}});
    }
    std::cout << url << "\n";
    if (!opened.ok()) ctx.Fail(opened);
  });
}

}  // namespace sessiondb::cli
