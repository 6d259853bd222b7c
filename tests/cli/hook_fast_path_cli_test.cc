// `sessiondb hook claude-code` is answered before the rest of the CLI is
// built (src/cli/hook_command.h). These hold the fast path to the full CLI:
// the same answer for the same event, its options read the same way, and
// every other command line (help, other options) still parsed by CLI11.
#include <algorithm>
#include <filesystem>
#include <string>

#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class HookFastPathCli : public Cli {};

const char* kPastCode = "def settle_invoice_totals(ledger):\n    return sum(ledger)\n";
const char* kNewCode = "def settle_invoice_totals(book):\n    return max(book)\n";

TEST_F(HookFastPathCli, TheFastPathAndTheFullCliGiveTheSameAnswer) {
  // Two stores, the same past write in each.
  const std::string other = dir_.Sub("other-store");
  for (const std::string& store : {store_, other}) {
    CliRun post = Run({"--store", store, "hook", "claude-code"},
                      {.input = ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kPastCode),
                       .with_store = false});
    ASSERT_EQ(post.exit_code, 0) << post.err;
    EXPECT_TRUE(Contains(post.err, "recorded 1 write(s)")) << post.err;
  }
  const std::string pre = ClaudeWriteEvent("PreToolUse", "/work/billing.py", kNewCode);
  // --max-images is not one the fast path takes: this one goes through CLI11.
  CliRun full = Run({"--store", other, "--max-images", "5", "hook", "claude-code"},
                    {.input = pre, .with_store = false});
  CliRun fast = Run({"hook", "claude-code"}, {.input = pre});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  EXPECT_TRUE(Contains(fast.out, "\"permissionDecision\":\"deny\"")) << fast.out << fast.err;
  EXPECT_TRUE(Contains(fast.out, "/work/ledger.py")) << fast.out;
  EXPECT_EQ(fast.out, full.out);
  EXPECT_EQ(fast.err, full.err);
}

TEST_F(HookFastPathCli, SeenAndTheGlobalOptionsAreReadInEveryPlaceCliElevenTakesThem) {
  ASSERT_EQ(Run({"hook", "claude-code"},
                {.input = ClaudeWriteEvent("PostToolUse", "/work/ledger.py", kPastCode)})
                .exit_code,
            0);
  // --seen file: once per file, whatever the content.
  CliRun first = Run({"hook", "claude-code", "--seen", "file"},
                     {.input = ClaudeWriteEvent("PreToolUse", "/work/billing.py", kNewCode)});
  EXPECT_TRUE(Contains(first.out, "deny")) << first.err;
  CliRun other_content =
      Run({"hook", "claude-code", "--seen=file"},
          {.input = ClaudeWriteEvent("PreToolUse", "/work/billing.py", kPastCode)});
  EXPECT_EQ(other_content.out, "") << "the file was seen: the call goes on";
  EXPECT_TRUE(Contains(other_content.err, "seen before")) << other_content.err;
  // The default (content) shows a new change to the same file once more.
  CliRun by_content = Run({"hook", "claude-code"},
                          {.input = ClaudeWriteEvent("PreToolUse", "/work/billing.py", kPastCode)});
  EXPECT_TRUE(Contains(by_content.out, "deny")) << by_content.err;
  // The store after the verb (CLI11's fallthrough), and in its = form.
  CliRun after = Run(
      {"hook", "claude-code", "--store=" + store_, "--seen", "file"},
      {.input = ClaudeWriteEvent("PreToolUse", "/work/billing.py", kNewCode), .with_store = false});
  EXPECT_EQ(after.out, "") << "the same store: seen before";
  // An unknown mode is logged, and content is used.
  CliRun bogus = Run({"hook", "claude-code", "--seen", "sometimes"},
                     {.input = ClaudeWriteEvent("PreToolUse", "/work/new.py", kNewCode)});
  EXPECT_EQ(bogus.exit_code, 0);
  EXPECT_TRUE(Contains(bogus.err, "using content")) << bogus.err;
  EXPECT_TRUE(Contains(bogus.out, "deny")) << bogus.err;
}

TEST_F(HookFastPathCli, EverythingElseIsStillTheFullCli) {
  CliRun help = Run({"hook", "claude-code", "--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "--seen")) << help.out;
  EXPECT_TRUE(Contains(help.out, "--resident")) << help.out;
  EXPECT_TRUE(Contains(help.out, "Global options")) << help.out;
  // A stray word is CLI11's error, not a hook call.
  CliRun stray = Run({"hook", "claude-code", "extra"}, {.input = "{}"});
  EXPECT_EQ(stray.exit_code, 1) << stray.err;
  CliRun no_value = Run({"hook", "claude-code", "--seen"}, {.input = "{}"});
  EXPECT_EQ(no_value.exit_code, 1) << no_value.err;
}

// Each hook call ends with _Exit, leaving the store's write-ahead log as a
// kill would: the calls keep it short themselves (a call's first commit
// empties a log past WalCheckpointer::kInheritedFrames), where it used to
// grow by every call's frames until 4,000 pages, each call reading it all
// back on open.
TEST_F(HookFastPathCli, CallsThatEndWithoutClosingKeepTheLogShort) {
  const std::string wal = store_ + "/sessiondb.db-wal";
  int64_t largest = 0;
  for (int i = 0; i < 80; ++i) {
    const std::string path = "/work/module_" + std::to_string(i) + ".py";
    CliRun post =
        Run({"hook", "claude-code"}, {.input = ClaudeWriteEvent("PostToolUse", path, kPastCode)});
    ASSERT_EQ(post.exit_code, 0) << post.err;
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(wal, ec);
    if (!ec) largest = std::max(largest, static_cast<int64_t>(bytes));
  }
  // 80 calls write some 250 frames; the bound is 64 and a few calls' worth.
  EXPECT_GT(largest, 0);
  EXPECT_LT(largest, 100 * (4096 + 24)) << "the log grew with every call";
  // Every call's write is there.
  CliRun pre = Run({"hook", "claude-code"},
                   {.input = ClaudeWriteEvent("PreToolUse", "/work/module_79.py", kNewCode)});
  EXPECT_TRUE(Contains(pre.out, "/work/module_79.py")) << pre.out << pre.err;
}

}  // namespace
}  // namespace sessiondb::testing
