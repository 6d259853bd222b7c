// Draft autosave under a crash: a child process streams assistant output
// through a DraftWriter (default 2 s save interval) and is killed with
// SIGKILL mid-stream. Afterwards the draft is there, listed as unfinished,
// holds a prefix of what was streamed, and is at most one interval (plus the
// time a save takes) behind what the writer had been given.
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "core/uuid.h"
#include "durability/killed_child.h"
#include "sessiondb/draft_writer.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

using namespace std::chrono_literals;

// The stream is deterministic, so any saved text can be checked as a prefix.
std::string Token(int i) { return "tok" + std::to_string(i) + " "; }

// Runs in the child: streams a token every 5 ms forever, reporting
// "now_ms total_length\n" on `progress_fd` after each delta is handed over.
[[noreturn]] void StreamUntilKilled(const std::string& dir, int progress_fd) {
  auto store = Store::Open(dir);
  if (!store) _exit(2);
  auto writer = DraftWriter::Open(store->get(), "chat", {.model = "gpt-test"});
  if (!writer) _exit(3);
  size_t length = 0;
  for (int i = 0;; ++i) {
    const std::string token = Token(i);
    (*writer)->AppendText(token);
    length += token.size();
    std::string line = std::to_string(SystemNowMs()) + " " + std::to_string(length) + "\n";
    if (write(progress_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      _exit(4);
    }
    std::this_thread::sleep_for(5ms);
  }
}

TEST(DraftCrash, AKilledWriterLeavesAnIncompleteDraftAtMostOneIntervalBehind) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  {
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "chat"}));
  }
  std::string expected;
  for (int i = 0; expected.size() < 1'000'000; ++i) expected += Token(i);

  // Two saves and most of a third interval.
  const KilledChild child =
      RunChildAndKill([&](int ack_fd) { StreamUntilKilled(store_dir, ack_fd); }, 5500ms);
  ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;
  const int64_t killed_ms = child.killed_at_ms;
  const std::string& progress = child.acks;
  // What the writer had been given 2 s (the interval) plus 1 s (a save's own
  // time on a slow disk) before the kill must be in the store.
  const int64_t must_have_ms = killed_ms - 3000;
  size_t must_have = 0;
  size_t streamed = 0;
  std::istringstream lines(progress);
  int64_t at_ms = 0;
  size_t length = 0;
  while (lines >> at_ms >> length) {
    if (at_ms <= must_have_ms) must_have = length;
    streamed = length;
  }
  ASSERT_GT(must_have, 0u) << "the child streamed nothing in its first 2.5 s";

  auto store = Store::Open(store_dir);
  ASSERT_TRUE(store);
  auto drafts = (*store)->ListDrafts("chat");
  ASSERT_TRUE(drafts) << drafts.error().ToString();
  ASSERT_EQ(drafts->size(), 1u);
  const Draft& d = drafts->front();
  EXPECT_EQ(d.model, "gpt-test");
  EXPECT_EQ(d.role, Role::kAssistant);
  EXPECT_GE(d.text.size(), must_have);
  EXPECT_LE(d.text.size(), streamed);
  EXPECT_EQ(expected.compare(0, d.text.size(), d.text), 0) << "the draft is not a prefix";
  EXPECT_TRUE((*store)->ReadMessages("chat")->empty());  // unfinished: not in the log

  // Recovering it appends what was saved.
  auto finished = (*store)->FinishDraft(d.id, {});
  ASSERT_TRUE(finished);
  EXPECT_EQ((*store)->ReadMessages("chat")->front().Text(), d.text);
}

}  // namespace
}  // namespace sessiondb::testing
