// `sessiondb import --watch DIR` as a real process: transcripts written into
// DIR line by line come into the store as they are written, the other
// tool's sweep (a deleted transcript) loses nothing, a watch killed with
// SIGKILL and started again neither loses an acknowledged message nor imports
// one twice, and files that are not regular files inside DIR (a FIFO, a
// symbolic link out) are left out without stopping the watch.
//
// Every wait is bounded and polls for what it waits for (the watcher's
// stderr, the store's contents); no sleep decides a result. Slow tier: each
// test waits out the watch's quiet time several times.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

std::string Slurp(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

void Append(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

// Polls `done` every 20 ms for up to 60 s; true once it holds.
bool WaitUntil(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

// Claude Code's records as it writes them (docs/interop.md, "claude-code"):
// a user prompt, and an assistant response of one text block.
class ClaudeTranscript {
 public:
  explicit ClaudeTranscript(std::string session) : session_(std::move(session)) {}

  static std::string Uuid(int n) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "cccccccc-0000-4000-8000-%012d", n);
    return buf;
  }

  // The next record, with its newline; its text is `text`.
  std::string Next(const std::string& text) {
    ++n_;
    const bool user = n_ % 2 == 1;
    json message = user ? json{{"role", "user"}, {"content", text}}
                        : json{{"id", "msg_01" + std::to_string(n_)},
                               {"type", "message"},
                               {"role", "assistant"},
                               {"model", "claude-sonnet-4-5-20250929"},
                               {"content", json::array({{{"type", "text"}, {"text", text}}})},
                               {"stop_reason", nullptr},
                               {"usage", {{"input_tokens", 12}, {"output_tokens", 7}}}};
    json r = {{"parentUuid", n_ > 1 ? json(Uuid(n_ - 1)) : json(nullptr)},
              {"isSidechain", false},
              {"userType", "external"},
              {"cwd", "/home/dev/app"},
              {"sessionId", session_},
              {"version", "1.0.98"},
              {"gitBranch", "main"},
              {"type", user ? "user" : "assistant"},
              {"message", std::move(message)},
              {"uuid", Uuid(n_)},
              {"timestamp", "2026-01-02T10:00:" + std::string(n_ < 10 ? "0" : "") +
                                std::to_string(n_) + ".000Z"}};
    if (!user) r["requestId"] = "req_01" + std::to_string(n_);
    return r.dump() + "\n";
  }

 private:
  std::string session_;
  int n_ = 0;
};

// A Codex rollout's lines (docs/interop.md, "codex").
std::string CodexRollout(const std::string& id, const std::vector<std::string>& prompts) {
  std::string out = json{{"timestamp", "2026-01-02T00:00:00.000Z"},
                         {"type", "session_meta"},
                         {"payload",
                          {{"id", id},
                           {"timestamp", "2026-01-02T00:00:00.000Z"},
                           {"cwd", "/home/dev/app"},
                           {"originator", "codex_cli_rs"},
                           {"cli_version", "0.46.0"},
                           {"source", "cli"},
                           {"model_provider", "openai"}}}}
                        .dump() +
                    "\n";
  for (const std::string& p : prompts) {
    out += json{{"timestamp", "2026-01-02T00:00:01.000Z"},
                {"type", "response_item"},
                {"payload",
                 {{"type", "message"},
                  {"role", "user"},
                  {"content", json::array({{{"type", "input_text"}, {"text", p}}})}}}}
               .dump() +
           "\n";
  }
  return out;
}

// The texts of the session's messages, in order; empty when the store or
// the session is not there yet. A read the running watch gets in the way of
// (the store busy, or still being made) is tried again, so that a check made
// while it writes reads what is stored, not a transient failure.
std::vector<std::string> Texts(const std::string& store_path, const std::string& session) {
  for (int attempt = 0;; ++attempt) {
    std::error_code ec;
    if (!fs::exists(fs::path(store_path) / "sessiondb.db", ec)) return {};
    StoreOptions o;
    o.create_if_missing = false;
    o.read_only = true;
    auto store = Store::Open(store_path, o);
    if (store) {
      auto messages = (*store)->ReadMessages(session);
      if (messages) {
        std::vector<std::string> texts;
        for (const Message& m : *messages) {
          std::string t;
          for (const Part& p : m.parts) t += p.text;
          texts.push_back(t);
        }
        return texts;
      }
      if (messages.error().code() == StatusCode::kNotFound) return {};
    }
    if (attempt == 100) {
      ADD_FAILURE() << "cannot read " << store_path << ": "
                    << (store ? "the session" : store.error().ToString());
      return {};
    }
    std::this_thread::sleep_for(20ms);
  }
}

// `sessiondb --store STORE import --watch DIR ARGS...`, its stderr in a file.
class Watcher {
 public:
  Watcher(const std::string& store, const std::string& dir, const fs::path& err,
          std::vector<std::string> args = {})
      : err_(err) {
    std::vector<std::string> argv = {SESSIONDB_CLI_PATH, "--store", store,
                                     "import",           "--watch", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> c_argv;
      for (auto& a : argv) c_argv.push_back(a.data());
      c_argv.push_back(nullptr);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int null_fd = open("/dev/null", O_RDWR);
      if (err_fd < 0 || null_fd < 0) _exit(126);
      dup2(null_fd, STDIN_FILENO);
      dup2(null_fd, STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      alarm(120);  // a watch the test forgot ends anyway
      execv(c_argv[0], c_argv.data());
      _exit(127);
    }
  }
  ~Watcher() {
    if (pid_ > 0) Kill();
  }
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  std::string Err() const { return Slurp(err_); }
  bool ErrHas(const std::string& needle) const { return Err().find(needle) != std::string::npos; }

  // Sends `signal` and waits; the exit code, or -1 when it did not exit normally.
  int Stop(int signal) {
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void Kill() { (void)Stop(SIGKILL); }
  // Waits for it to end by itself (bounded by its alarm).
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  fs::path err_;
  pid_t pid_ = -1;
};

// The messages the watcher acknowledged for `file` (its "imported FILE:
// ..., N messages added" lines), summed.
int Acknowledged(const std::string& err, const std::string& file) {
  const std::regex line("imported " + std::regex_replace(file, std::regex(R"([.])"), R"(\.)") +
                        R"(:[^\n]* (\d+) messages? added)");
  int sum = 0;
  for (std::sregex_iterator it(err.begin(), err.end(), line), end; it != end; ++it) {
    sum += std::stoi((*it)[1]);
  }
  return sum;
}

class WatchImport : public ::testing::Test {
 protected:
  TempDir tmp_;
  std::string store_ = tmp_.Sub("store");
  fs::path dir_ = tmp_.Sub("projects");
  fs::path err_ = tmp_.Sub("watch.err");
  void SetUp() override { fs::create_directories(dir_); }
};

TEST_F(WatchImport, TranscriptWrittenLineByLineComesInWholeAndOutlivesItsSweep) {
  const std::string session = "5a1e0c2d-1111-4222-8333-944455556666";
  const fs::path file = dir_ / "-home-dev-app" / (session + ".jsonl");
  const fs::path marker_file =
      dir_ / "-home-dev-app" / "6b2f1d3e-1111-4222-8333-944455556666.jsonl";
  Watcher w(store_, dir_.string(), err_, {"--format", "claude-code"});
  ASSERT_TRUE(WaitUntil([&] { return w.ErrHas("watching "); })) << w.Err();

  // The project folder is made after the watch started: it is followed too.
  ClaudeTranscript t(session);
  Append(file, t.Next("why does the gyroscope drift?"));
  Append(file, t.Next("its bias is not calibrated."));
  ASSERT_TRUE(WaitUntil([&] { return Texts(store_, session).size() == 2; })) << w.Err();

  // A writer stops mid-line: the half line is no record and no skip...
  const std::string third = t.Next("how do I calibrate it?");
  Append(file, third.substr(0, third.size() / 2));
  // ...which is seen once a file written after it is in (its quiet time ends
  // no later than that file's).
  ClaudeTranscript marker("6b2f1d3e-1111-4222-8333-944455556666");
  Append(marker_file, marker.Next("a later file"));
  ASSERT_TRUE(WaitUntil([&] {
    return Texts(store_, "6b2f1d3e-1111-4222-8333-944455556666").size() == 1;
  })) << w.Err();
  EXPECT_EQ(Texts(store_, session).size(), 2u);
  EXPECT_FALSE(w.ErrHas("skipped")) << w.Err();

  // ...and the line, once whole, comes in with what follows it.
  Append(file, third.substr(third.size() / 2));
  Append(file, t.Next("hold it still for ten seconds at start-up."));
  ASSERT_TRUE(WaitUntil([&] { return Texts(store_, session).size() == 4; })) << w.Err();
  EXPECT_EQ(Texts(store_, session),
            (std::vector<std::string>{"why does the gyroscope drift?",
                                      "its bias is not calibrated.", "how do I calibrate it?",
                                      "hold it still for ten seconds at start-up."}));
  EXPECT_TRUE(WaitUntil([&] {
    return Acknowledged(w.Err(), "-home-dev-app/" + session + ".jsonl") == 4;
  })) << w.Err();

  // The tool's sweep deletes the transcript: the store keeps it, and the
  // watch goes on (a file written after the deletion still comes in).
  fs::remove(file);
  Append(marker_file, marker.Next("after the sweep"));
  ASSERT_TRUE(WaitUntil([&] {
    return Texts(store_, "6b2f1d3e-1111-4222-8333-944455556666").size() == 2;
  })) << w.Err();
  EXPECT_EQ(w.Stop(SIGINT), 0) << w.Err();
  EXPECT_TRUE(w.ErrHas("ended")) << w.Err();
  EXPECT_EQ(Texts(store_, session).size(), 4u);

  // A watch started again reads nothing it already has.
  Watcher again(store_, dir_.string(), err_, {"--format", "claude-code"});
  Append(dir_ / "-home-dev-app" / "7c3a2e4f-1111-4222-8333-944455556666.jsonl",
         ClaudeTranscript("7c3a2e4f-1111-4222-8333-944455556666").Next("a third session"));
  ASSERT_TRUE(WaitUntil([&] {
    return Texts(store_, "7c3a2e4f-1111-4222-8333-944455556666").size() == 1;
  })) << again.Err();
  EXPECT_EQ(again.Stop(SIGTERM), 0) << again.Err();
  EXPECT_EQ(again.Err().find("6b2f1d3e"), std::string::npos) << again.Err();
  EXPECT_EQ(Texts(store_, session).size(), 4u);
}

TEST_F(WatchImport, KilledWatchLosesNothingAcknowledgedAndImportsNothingTwice) {
  const std::string session = "8d4b3f50-1111-4222-8333-944455556666";
  const std::string done_session = "9e5c4061-1111-4222-8333-944455556666";
  const std::string rel = "-home-dev-app/" + session + ".jsonl";
  const std::string done_rel = "-home-dev-app/" + done_session + ".jsonl";
  ClaudeTranscript t(session);
  std::vector<std::string> expected;
  auto write = [&](int n) {
    for (int i = 0; i < n; ++i) {
      expected.push_back("message " + std::to_string(expected.size() + 1));
      Append(dir_ / rel, t.Next(expected.back()));
    }
  };

  auto w = std::make_unique<Watcher>(store_, dir_.string(), err_);
  ASSERT_TRUE(WaitUntil([&] { return w->ErrHas("watching "); })) << w->Err();
  // A finished session, imported and then left alone.
  ClaudeTranscript done(done_session);
  Append(dir_ / done_rel, done.Next("finished") + done.Next("long ago"));
  ASSERT_TRUE(WaitUntil([&] { return Acknowledged(w->Err(), done_rel) == 2; })) << w->Err();
  // The session being written: killed while its lines keep coming.
  write(2);
  ASSERT_TRUE(WaitUntil([&] { return Acknowledged(w->Err(), rel) >= 2; })) << w->Err();
  // Paced past the quiet time, so the kill may land in an import, after
  // one, or before its acknowledgment: each is a case the restart must mend.
  for (int round = 0; round < 5; ++round) {
    write(2);
    std::this_thread::sleep_for(round == 4 ? 550ms : 600ms);  // pacing the writer, not a result
  }
  w->Kill();
  const std::string first_run = Slurp(err_);
  const int acknowledged = Acknowledged(first_run, rel);
  ASSERT_GE(acknowledged, 2);
  // Every message printed as imported is in the store, in order.
  std::vector<std::string> stored = Texts(store_, session);
  ASSERT_GE(stored.size(), static_cast<size_t>(acknowledged));
  EXPECT_EQ(stored, std::vector<std::string>(expected.begin(),
                                             expected.begin() + static_cast<long>(stored.size())));

  // Written while no watch ran, then a restart: all of it, once each.
  write(3);
  const fs::path err2 = tmp_.Sub("watch2.err");
  w = std::make_unique<Watcher>(store_, dir_.string(), err2);
  ASSERT_TRUE(WaitUntil([&] { return Texts(store_, session).size() >= expected.size(); }))
      << w->Err();
  write(1);
  ASSERT_TRUE(WaitUntil([&] { return Texts(store_, session).size() >= expected.size(); }))
      << w->Err();
  EXPECT_EQ(Texts(store_, session), expected);
  EXPECT_EQ(Texts(store_, done_session), (std::vector<std::string>{"finished", "long ago"}));
  EXPECT_EQ(w->Stop(SIGINT), 0) << w->Err();
  // The finished transcript was not read again: its state said so.
  EXPECT_EQ(w->Err().find(done_rel), std::string::npos) << w->Err();
}

TEST_F(WatchImport, CodexRolloutInADatedFolderMadeAfterTheStartComesIn) {
  const fs::path sessions = dir_;
  Watcher w(store_, sessions.string(), err_);
  ASSERT_TRUE(WaitUntil([&] { return w.ErrHas("watching "); })) << w.Err();
  const std::string id = "01990f4e-7c2a-7d33-a1b2-0c3d4e5f6071";
  const fs::path rollout =
      sessions / "2026" / "01" / "02" / ("rollout-2026-01-02T00-00-00-" + id + ".jsonl");
  Append(rollout, CodexRollout(id, {"rename the flag", "and its tests"}));
  ASSERT_TRUE(WaitUntil([&] { return Texts(store_, id).size() == 2; })) << w.Err();
  EXPECT_EQ(Texts(store_, id), (std::vector<std::string>{"rename the flag", "and its tests"}));
  // Its line comes once the import returned, just after the commit.
  EXPECT_TRUE(WaitUntil([&] { return w.ErrHas("imported 2026/01/02/rollout-"); })) << w.Err();
  EXPECT_EQ(w.Stop(SIGINT), 0) << w.Err();
}

TEST_F(WatchImport, FifoAndLinkOutOfTheFolderAreLeftOutAndTheWatchGoesOn) {
  // A transcript outside the watched folder, which no link may bring in.
  const std::string outside_session = "a0f6d172-1111-4222-8333-944455556666";
  const fs::path outside = tmp_.Sub("elsewhere") + "/" + outside_session + ".jsonl";
  ClaudeTranscript secret(outside_session);
  Append(outside, secret.Next("a secret prompt"));

  Watcher w(store_, dir_.string(), err_, {"--format", "claude-code"});
  ASSERT_TRUE(WaitUntil([&] { return w.ErrHas("watching "); })) << w.Err();
  fs::create_directories(dir_ / "p");
  ASSERT_EQ(mkfifo((dir_ / "p" / "b1c7e283-1111-4222-8333-944455556666.jsonl").c_str(), 0600), 0);
  fs::create_symlink(outside, dir_ / "p" / (outside_session + ".jsonl"));
  // A transcript imported, then replaced by a link out of the folder.
  const std::string replaced = "c2d8f394-1111-4222-8333-944455556666";
  ClaudeTranscript r(replaced);
  Append(dir_ / "p" / (replaced + ".jsonl"), r.Next("kept as it was"));
  ASSERT_TRUE(WaitUntil([&] { return Texts(store_, replaced).size() == 1; })) << w.Err();
  const fs::path link_tmp = dir_ / "p" / "swap.tmp";
  fs::create_symlink(outside, link_tmp);
  fs::rename(link_tmp, dir_ / "p" / (replaced + ".jsonl"));
  ASSERT_TRUE(WaitUntil([&] {
    const std::string err = w.Err();
    return err.find("left out p/" + replaced + ".jsonl") != std::string::npos &&
           err.find("left out p/b1c7e283") != std::string::npos &&
           err.find("left out p/" + outside_session + ".jsonl") != std::string::npos;
  })) << w.Err();
  EXPECT_TRUE(w.ErrHas("not a regular file")) << w.Err();
  EXPECT_TRUE(w.ErrHas("symbolic link")) << w.Err();
  // The watch is still there: a file written now comes in.
  const std::string later = "d3e9a4b5-1111-4222-8333-944455556666";
  Append(dir_ / "p" / (later + ".jsonl"), ClaudeTranscript(later).Next("still watching"));
  ASSERT_TRUE(WaitUntil([&] { return Texts(store_, later).size() == 1; })) << w.Err();
  EXPECT_EQ(w.Stop(SIGINT), 0) << w.Err();
  EXPECT_TRUE(Texts(store_, outside_session).empty());
  EXPECT_EQ(Texts(store_, replaced), std::vector<std::string>{"kept as it was"});
}

TEST_F(WatchImport, TooManyFoldersEndTheWatchSayingWhichLimit) {
  for (const char* d : {"a", "b", "c"}) fs::create_directories(dir_ / d);
  Watcher w(store_, dir_.string(), err_, {"--max-watched-dirs", "2"});
  EXPECT_NE(w.Wait(), 0);
  EXPECT_TRUE(w.ErrHas("more than 2 folders")) << w.Err();
  EXPECT_TRUE(w.ErrHas("--max-watched-dirs")) << w.Err();
}

}  // namespace
}  // namespace sessiondb::testing
