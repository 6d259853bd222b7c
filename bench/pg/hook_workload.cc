#include "hook_workload.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <vector>

#include "stats.h"

extern char** environ;

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kHookCalls = 40;  // PreToolUse + PostToolUse pairs per backend
constexpr int kReadCalls = 20;  // `ls` and `show` each, per backend
constexpr int kSeedMessages = 20;

struct Ran {
  int exit_code = -1;
  int64_t ns = 0;
};

// Runs `args` with stdin from `in` ("" for /dev/null) and stdout into `out`
// ("" for /dev/null), stderr discarded; its exit code and wall time.
Ran Spawn(const std::vector<std::string>& args, const std::string& in, const std::string& out) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in.empty() ? "/dev/null" : in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.empty() ? "/dev/null" : out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Ran ran;
  const int64_t start = NowNs();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ran.ns = NowNs() - start;
  posix_spawn_file_actions_destroy(&actions);
  return ran;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string HookEvent(const std::string& name, const std::string& file, const std::string& code) {
  return json{{"hook_event_name", name},
              {"tool_name", "Write"},
              {"session_id", "hook-bench"},
              {"cwd", "/work/app"},
              {"tool_input", {{"file_path", file}, {"content", code}}}}
      .dump();
}

std::string Function(int i) {
  return "def settle_invoice_totals_" + std::to_string(i) +
         "(ledger):\n    total = 0\n    for line in ledger:\n        total += line.amount\n"
         "    return round(total, 2)\n";
}

// One backend: how the CLI names its store, and what it measured.
struct Backend {
  std::string name;
  std::vector<std::string> store_args;  // --store X [--namespace N]
  std::string session;                  // for `show`
  bool resident = false;                // its hook calls answered by `hook serve`
  pid_t server = 0;
  std::map<std::string, std::vector<int64_t>> ns;
  int failures = 0;
  std::string first_error;
};

json Summary(const std::vector<int64_t>& ns) {
  double sum = 0;
  for (int64_t v : ns) sum += static_cast<double>(v);
  return {{"calls", ns.size()},
          {"p50_ms", PercentileUs(ns, 50) / 1000},
          {"p99_ms", PercentileUs(ns, 99) / 1000},
          {"mean_ms", ns.empty() ? 0 : sum / static_cast<double>(ns.size()) / 1e6}};
}

}  // namespace

json RunHookWorkload(const std::string& cli_path, const std::string& postgres_uri,
                     const std::string& ns, const std::string& dir) {
  const fs::path root = fs::path(dir) / "hook-workload";
  fs::remove_all(root);
  fs::create_directories(root / "src");
  const std::string out = (root / "stdout").string();

  std::vector<Backend> backends;
  backends.push_back({.name = "embedded", .store_args = {"--store", (root / "embedded").string()}});
  backends.push_back(
      {.name = "postgres", .store_args = {"--store", postgres_uri, "--namespace", ns}});
  // The same calls answered by a resident server (`hook serve`), each on a
  // store of its own.
  backends.push_back({.name = "embedded_resident",
                      .store_args = {"--store", (root / "embedded-resident").string()},
                      .resident = true});
  backends.push_back({.name = "postgres_resident",
                      .store_args = {"--store", postgres_uri, "--namespace", ns + "-resident"},
                      .resident = true});
  if (const char* bouncer = std::getenv("SESSIONDB_BENCH_PGBOUNCER_URI"); bouncer && *bouncer) {
    backends.push_back(
        {.name = "pgbouncer", .store_args = {"--store", bouncer, "--namespace", ns + "-bouncer"}});
  }
  auto command = [&](const Backend& b, std::vector<std::string> verb) {
    std::vector<std::string> args = {cli_path};
    args.insert(args.end(), b.store_args.begin(), b.store_args.end());
    args.insert(args.end(), verb.begin(), verb.end());
    return args;
  };
  auto timed = [&](Backend& b, const std::string& what, const std::vector<std::string>& args,
                   const std::string& in) {
    Ran r = Spawn(args, in, "");
    if (r.exit_code != 0) {
      if (b.failures++ == 0) b.first_error = what + " exited " + std::to_string(r.exit_code);
      return;
    }
    b.ns[what].push_back(r.ns);
  };

  // Each store: created, a session of kSeedMessages messages for the reads,
  // and one write the hook's PreToolUse recalls.
  for (Backend& b : backends) {
    if (Spawn(command(b, {"init"}), "", "").exit_code != 0) {
      b.failures++;
      b.first_error = "init failed";
      continue;
    }
    Spawn(command(b, {"new", "--title", "hook bench"}), "", out);
    b.session = ReadAll(out);
    for (int m = 0; m < kSeedMessages; ++m) {
      Spawn(command(b, {"append", b.session, "seed message " + std::to_string(m)}), "", "");
    }
    const std::string seed = (root / ("seed-" + b.name)).string();
    Write(seed, HookEvent("PostToolUse", "/work/app/ledger.py", Function(0)));
    Spawn(command(b, {"hook", "claude-code"}), seed, "");
  }

  // The servers, in a private folder of this run; every hook call of this
  // process's children looks there.
  const fs::path run = root / "run";
  fs::create_directories(run);
  fs::permissions(run, fs::perms::owner_all);
  setenv("XDG_RUNTIME_DIR", run.c_str(), 1);
  for (Backend& b : backends) {
    if (!b.resident || b.session.empty()) continue;
    std::vector<std::string> args = command(b, {"hook", "serve", "--quiet"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&b.server, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
      b.failures++;
      b.first_error = "hook serve did not start";
      b.session.clear();
    }
  }
  // Each server listens before the first timed call: its socket appears.
  for (int i = 0; i < 1000; ++i) {
    int sockets = 0;
    std::error_code ec;
    for (const auto& e :
         fs::directory_iterator(run / ("sessiondb-" + std::to_string(geteuid())), ec)) {
      sockets += e.path().extension() == ".sock" ? 1 : 0;
    }
    if (sockets == 2) break;
    usleep(10'000);
  }

  // Interleaved: call i of every backend before call i + 1 of any.
  for (int i = 1; i <= kHookCalls; ++i) {
    const std::string file = (root / "src" / ("billing_" + std::to_string(i) + ".py")).string();
    const std::string pre = (root / "pre.json").string();
    const std::string post = (root / "post.json").string();
    Write(pre, HookEvent("PreToolUse", file, Function(i)));
    Write(post, HookEvent("PostToolUse", file, Function(i)));
    for (Backend& b : backends) {
      if (b.session.empty()) continue;
      timed(b, "hook_pre", command(b, {"hook", "claude-code"}), pre);
      timed(b, "hook_post", command(b, {"hook", "claude-code"}), post);
    }
  }
  for (int i = 0; i < kReadCalls; ++i) {
    for (Backend& b : backends) {
      if (b.session.empty()) continue;
      timed(b, "ls", command(b, {"ls"}), "");
      timed(b, "show", command(b, {"show", b.session}), "");
    }
  }

  for (Backend& b : backends) {
    if (b.server <= 0) continue;
    kill(b.server, SIGTERM);
    while (waitpid(b.server, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  unsetenv("XDG_RUNTIME_DIR");

  json result = {{"workload", "hook_processes"},
                 {"hook_calls_per_backend", 2 * kHookCalls},
                 {"read_calls_per_backend", kReadCalls}};
  for (const char* what : {"hook", "ls", "show"}) {
    json entry;
    std::map<std::string, std::pair<double, double>> p;  // backend -> p50, p99
    for (Backend& b : backends) {
      std::vector<int64_t> all;
      if (std::string(what) == "hook") {
        all = b.ns["hook_pre"];
        all.insert(all.end(), b.ns["hook_post"].begin(), b.ns["hook_post"].end());
        entry[b.name + "_pre"] = Summary(b.ns["hook_pre"]);
        entry[b.name + "_post"] = Summary(b.ns["hook_post"]);
      } else {
        all = b.ns[what];
      }
      entry[b.name] = Summary(all);
      p[b.name] = {PercentileUs(all, 50), PercentileUs(all, 99)};
    }
    for (const auto& [name, pair] : p) {
      if (name == "embedded" || p["embedded"].first <= 0) continue;
      const std::string key = name == "postgres" ? "ratio" : "ratio_" + name;
      entry[key + "_p50"] = pair.first / p["embedded"].first;
      entry[key + "_p99"] = pair.second / p["embedded"].second;
    }
    if (p["postgres_resident"].first > 0 && p["embedded_resident"].first > 0) {
      entry["ratio_resident_p50"] = p["postgres_resident"].first / p["embedded_resident"].first;
      entry["ratio_resident_p99"] = p["postgres_resident"].second / p["embedded_resident"].second;
    }
    result[what] = entry;
  }
  json failures = json::object();
  for (const Backend& b : backends) {
    if (b.failures) failures[b.name] = {{"count", b.failures}, {"first", b.first_error}};
  }
  result["failures"] = failures;
  fs::remove_all(root);
  return result;
}

}  // namespace sessiondb::bench
