// sessiondb_writers_bench: many writers on one embedded store (issue 19,
// item 6), each shape of writer beside the fdatasync floor of the same run:
//
//   one_writer      one thread, one Store: the rate one writer gets
//   threads_64      64 threads sharing one Store (group commit)
//   stores_64       64 Store objects in one process, a thread each (one
//                   group-commit queue per file in the process)
//   processes_64    64 processes, a Store each (the writer lock's fair wait
//                   before SQLite's lock; no commit is shared across processes)
//   http_64         64 HTTP clients of one `sessiondb serve` server in this
//                   process, a connection each
//
// and two baselines, the same writers as the store wrote before issue 19's
// item 6, through the public API: stores_private_64 (64 Stores, each with a
// clock of its own, which keeps each on a group-commit queue of its own) and
// processes_no_writer_lock_64 (a folder planted at the writer lock's name, so
// every process waits in SQLite's busy handler alone).
//
// Every writer appends durable 500-byte messages to a session of its own for
// --seconds; the figures are appends/s, p50 and p99 of one append's latency,
// and the ratios the issue's targets name (rate over one writer's; p99 over
// p50). Afterwards every session is read back: each acknowledged append is
// there once, seqs dense. One JSON object per line on stdout; progress on stderr.
//
//   sessiondb_writers_bench [--dir DIR] [--seconds S] [--writers N] [--workloads LIST]
#include <fcntl.h>
#include <httplib.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <latch>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "floors.h"
#include "server/http_server.h"
#include "sessiondb/store.h"
#include "stats.h"

extern char** environ;

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kMessageBytes = 500;

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "sessiondb_writers_bench: " << what << "\n";
  std::exit(1);
}

void Progress(const std::string& line) { std::cerr << "[writers_bench] " << line << std::endl; }
void Emit(const json& j) { std::cout << j.dump() << std::endl; }

std::string MessageText(int writer, int64_t i) {
  std::string text = "writer " + std::to_string(writer) + " message " + std::to_string(i) + ": ";
  while (text.size() < kMessageBytes) text += "durable append of a chat turn ";
  text.resize(kMessageBytes);
  return text;
}

std::string SessionOf(int writer) { return "writer-" + std::to_string(writer); }

// Appends to `session` through `store` until `deadline_ns`; the latency of
// each append. Dies on a failed append: the figures would mean nothing.
std::vector<int64_t> AppendUntil(Store& store, int writer, int64_t deadline_ns) {
  std::vector<int64_t> ns;
  ns.reserve(20'000);
  for (int64_t i = 1; NowNs() < deadline_ns; ++i) {
    Message m;
    m.parts.push_back(Part::Text(MessageText(writer, i)));
    const int64_t t = NowNs();
    auto r = store.Append(SessionOf(writer), m);
    if (!r)
      Die("append " + std::to_string(i) + " of writer " + std::to_string(writer) + ": " +
          r.error().ToString());
    ns.push_back(NowNs() - t);
  }
  return ns;
}

struct Figures {
  int64_t n = 0;
  double seconds = 0;
  double per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
  // The CPU the run used (user and system, every thread or writer process),
  // or -1 when not measured.
  double cpu_seconds = -1;
};

// The most appends per second this machine's cores could make at the CPU
// each append cost in this run (issue 40: 64 writers at 0.8 of it or more).
double CpuCeilingPerS(const Figures& f) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return f.cpu_seconds > 0 ? static_cast<double>(f.n) * cores / f.cpu_seconds : 0;
}

// The CPU one append cost, in microseconds, and the run's rate over its
// ceiling; 0 when the CPU was not measured.
double CpuUsPerAppend(const Figures& f) {
  return f.cpu_seconds > 0 ? f.cpu_seconds * 1e6 / static_cast<double>(f.n) : 0;
}
double OverCpuCeiling(const Figures& f) {
  return f.cpu_seconds > 0 ? f.per_s / CpuCeilingPerS(f) : 0;
}

// The CPU time of the processes this one has waited for, in seconds.
double ChildrenCpuSeconds() {
  struct rusage u;
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

Figures FiguresOf(const std::vector<std::vector<int64_t>>& per_writer, double seconds) {
  std::vector<int64_t> all;
  for (const auto& w : per_writer) all.insert(all.end(), w.begin(), w.end());
  return {static_cast<int64_t>(all.size()), seconds, static_cast<double>(all.size()) / seconds,
          PercentileUs(all, 50), PercentileUs(all, 99)};
}

class Bench {
 public:
  Bench(fs::path root, double seconds, int writers, std::string self)
      : root_(std::move(root)), seconds_(seconds), writers_(writers), self_(std::move(self)) {}

  void Floor() {
    Progress("floor: 1,000 x (4 KiB pwrite + fdatasync) on the same disk");
    floor_ = MeasureFdatasync4k(root_.string(), 1000);
    Emit({{"workload", "fdatasync_4k"},
          {"n", floor_.n},
          {"p50_us", floor_.p50_us},
          {"p99_us", floor_.p99_us},
          {"per_s", 1e6 / floor_.p50_us}});
  }

  // Threads appending through `stores` (one each when there are as many
  // stores as writers, else all through the first). With `private_queues`
  // each store gets a clock of its own, which keeps it off the shared queue.
  void InProcess(const std::string& name, int writers, int stores, bool private_queues = false) {
    const fs::path dir = Fresh(name, writers);
    std::vector<std::unique_ptr<Store>> opened;
    for (int s = 0; s < stores; ++s) opened.push_back(Open(dir, private_queues));
    std::vector<std::vector<int64_t>> ns(static_cast<size_t>(writers));
    std::latch ready(writers + 1);
    int64_t deadline_ns = 0;
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, w] {
        Store& store = *opened[static_cast<size_t>(w % stores)];
        ready.arrive_and_wait();
        ns[static_cast<size_t>(w)] = AppendUntil(store, w, deadline_ns);
      });
    }
    deadline_ns = NowNs() + static_cast<int64_t>(seconds_ * 1e9);
    const int64_t start = NowNs();
    const int64_t cpu_start = ProcessCpuNs();
    ready.arrive_and_wait();  // publishes deadline_ns
    for (std::thread& t : threads) t.join();
    Figures f = FiguresOf(ns, static_cast<double>(NowNs() - start) / 1e9);
    f.cpu_seconds = static_cast<double>(ProcessCpuNs() - cpu_start) / 1e9;
    Report(name, writers, f, dir);
  }

  // `writers` processes (this program again, as --child), a Store each.
  // Without `writer_lock`, a folder at the lock file's name makes every
  // process write without it (docs/many-writers.md, the hostile side file).
  void Processes(int writers, bool writer_lock) {
    const std::string name = writer_lock ? "processes" : "processes_no_writer_lock";
    const fs::path dir = Fresh(name, writers);
    if (!writer_lock) {
      fs::remove(dir / "sessiondb.db-writer");
      fs::create_directory(dir / "sessiondb.db-writer");
    }
    struct Child {
      pid_t pid;
      int go_fd;   // we write the deadline here
      int out_fd;  // it writes "ready\n", then its latencies
    };
    std::vector<Child> children;
    for (int w = 0; w < writers; ++w) {
      int go[2], out[2];
      if (pipe2(go, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) Die("pipe");
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_adddup2(&actions, go[0], 0);
      posix_spawn_file_actions_adddup2(&actions, out[1], 1);
      const std::string writer = std::to_string(w);
      const std::string dir_arg = dir.string();
      std::vector<char*> argv = {const_cast<char*>(self_.c_str()), const_cast<char*>("--child"),
                                 const_cast<char*>(dir_arg.c_str()),
                                 const_cast<char*>(writer.c_str()), nullptr};
      pid_t pid;
      if (posix_spawn(&pid, self_.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
        Die("spawning a writer process");
      }
      posix_spawn_file_actions_destroy(&actions);
      close(go[0]);
      close(out[1]);
      children.push_back({pid, go[1], out[0]});
    }
    for (const Child& c : children) {
      if (ReadLine(c.out_fd) != "ready") Die("a writer process did not start");
    }
    const int64_t start = NowNs();
    const double children_cpu_start = ChildrenCpuSeconds();
    // CLOCK_MONOTONIC is the same clock in every process.
    const std::string deadline =
        std::to_string(start + static_cast<int64_t>(seconds_ * 1e9)) + "\n";
    for (const Child& c : children) {
      if (write(c.go_fd, deadline.data(), deadline.size()) < 0) Die("starting a writer");
      close(c.go_fd);
    }
    std::vector<std::vector<int64_t>> ns;
    for (const Child& c : children) {
      std::string all;
      char buf[65536];
      for (ssize_t n; (n = read(c.out_fd, buf, sizeof(buf))) > 0;) all.append(buf, n);
      close(c.out_fd);
      int status = 0;
      waitpid(c.pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("a writer process failed");
      std::istringstream in(all);
      std::vector<int64_t> mine;
      for (int64_t v; in >> v;) mine.push_back(v);
      ns.push_back(std::move(mine));
    }
    // The writers' whole lives (open, append, close): a little more than the
    // appends alone.
    Figures f = FiguresOf(ns, static_cast<double>(NowNs() - start) / 1e9);
    f.cpu_seconds = ChildrenCpuSeconds() - children_cpu_start;
    Report(name + "_" + std::to_string(writers), writers, f, dir, /*already_named=*/true);
  }

  // `writers` HTTP clients of a server on loopback, a connection each.
  void Http(int writers) {
    const fs::path dir = Fresh("http", writers);
    auto store = Open(dir);
    server::ServerOptions options;
    options.port = 0;
    options.threads = writers + 8;
    auto http = server::HttpServer::Start(*store, dir.string(), options);
    if (!http) Die("starting the server: " + http.error().ToString());
    std::thread serving([&] { (void)(*http)->Run(); });
    const int port = (*http)->port();
    std::vector<std::vector<int64_t>> ns(static_cast<size_t>(writers));
    std::latch ready(writers + 1);
    int64_t deadline_ns = 0;
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, w] {
        httplib::Client client("127.0.0.1", port);
        client.set_keep_alive(true);
        client.set_tcp_nodelay(true);
        client.set_read_timeout(60, 0);
        const std::string path = "/v1/sessions/" + SessionOf(w) + "/messages";
        ready.arrive_and_wait();
        auto& mine = ns[static_cast<size_t>(w)];
        for (int64_t i = 1; NowNs() < deadline_ns; ++i) {
          const json body = {{"role", "user"},
                             {"parts", {{{"type", "text"}, {"text", MessageText(w, i)}}}}};
          const int64_t t = NowNs();
          auto r = client.Post(path, body.dump(), "application/json");
          if (!r || r->status != 201) Die("HTTP append failed");
          mine.push_back(NowNs() - t);
        }
      });
    }
    deadline_ns = NowNs() + static_cast<int64_t>(seconds_ * 1e9);
    const int64_t start = NowNs();
    const int64_t cpu_start = ProcessCpuNs();
    ready.arrive_and_wait();
    for (std::thread& t : threads) t.join();
    const double seconds = static_cast<double>(NowNs() - start) / 1e9;
    // The server's and its clients' (threads of this process alike).
    const double cpu_seconds = static_cast<double>(ProcessCpuNs() - cpu_start) / 1e9;
    (*http)->Stop();
    serving.join();
    store.reset();
    Figures f = FiguresOf(ns, seconds);
    f.cpu_seconds = cpu_seconds;
    Report("http", writers, f, dir);
  }

  void Summary() {
    json s = {{"workload", "summary"}, {"fdatasync_p50_us", floor_.p50_us}};
    for (const auto& [name, f] : results_) {
      s[name + "_per_s"] = f.per_s;
      s[name + "_p99_over_p50"] = f.p50_us > 0 ? f.p99_us / f.p50_us : 0;
      if (one_writer_per_s_ > 0) s[name + "_over_one_writer"] = f.per_s / one_writer_per_s_;
      if (f.cpu_seconds > 0) s[name + "_over_cpu_ceiling"] = OverCpuCeiling(f);
    }
    s["load_1m"] = LoadAverage1m();
    Emit(s);
    std::fprintf(stderr, "\n%-28s %10s %10s %10s %8s %8s %8s %8s\n", "writers", "appends/s",
                 "p50 ms", "p99 ms", "x one", "p99/p50", "cpu us", "x ceil");
    std::fprintf(stderr, "%-28s %10.0f %10.2f %10.2f\n", "fdatasync floor", 1e6 / floor_.p50_us,
                 floor_.p50_us / 1000, floor_.p99_us / 1000);
    for (const auto& [name, f] : results_) {
      std::fprintf(stderr, "%-28s %10.0f %10.2f %10.2f %8.1f %8.1f %8.0f %8.2f\n", name.c_str(),
                   f.per_s, f.p50_us / 1000, f.p99_us / 1000,
                   one_writer_per_s_ > 0 ? f.per_s / one_writer_per_s_ : 0,
                   f.p50_us > 0 ? f.p99_us / f.p50_us : 0, CpuUsPerAppend(f), OverCpuCeiling(f));
    }
  }

  int writers() const { return writers_; }

 private:
  fs::path Fresh(const std::string& name, int writers) {
    const fs::path dir = root_ / (name + "-" + std::to_string(writers));
    fs::remove_all(dir);
    auto store = Open(dir);
    for (int w = 0; w < writers; ++w) {
      if (!store->CreateSession({.id = SessionOf(w)})) Die("creating " + SessionOf(w));
    }
    sync();  // earlier runs' dirty pages would otherwise be written back during this one
    return dir;
  }

  static std::unique_ptr<Store> Open(const fs::path& dir, bool private_queue = false) {
    StoreOptions options{.durability = Durability::kDurable};
    if (private_queue) {
      options.clock = [] {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
      };
    }
    auto store = Store::Open(dir.string(), options);
    if (!store) Die("opening " + dir.string() + ": " + store.error().ToString());
    return std::move(*store);
  }

  static std::string ReadLine(int fd) {
    std::string line;
    char c;
    while (read(fd, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }

  // Reads every session back: as many messages as appends, seqs 1..n.
  void Report(const std::string& name, int writers, const Figures& f, const fs::path& dir,
              bool already_named = false) {
    const std::string key = already_named  ? name
                            : writers == 1 ? name
                                           : name + "_" + std::to_string(writers);
    auto store = Open(dir);
    int64_t stored = 0;
    bool dense = true;
    for (int w = 0; w < writers; ++w) {
      auto messages = store->ReadMessages(SessionOf(w));
      if (!messages) Die("reading back " + SessionOf(w) + ": " + messages.error().ToString());
      for (size_t i = 0; i < messages->size(); ++i) {
        dense = dense && (*messages)[i].seq == static_cast<int64_t>(i + 1);
      }
      stored += std::ssize(*messages);
    }
    if (stored != f.n || !dense) {
      Die(key + ": " + std::to_string(f.n) + " appends acknowledged, " + std::to_string(stored) +
          " stored" + (dense ? "" : ", seqs not dense"));
    }
    if (key == "one_writer") one_writer_per_s_ = f.per_s;
    results_.emplace_back(key, f);
    Emit({{"workload", key},
          {"writers", writers},
          {"n", f.n},
          {"seconds", f.seconds},
          {"per_s", f.per_s},
          {"p50_us", f.p50_us},
          {"p99_us", f.p99_us},
          {"over_one_writer", one_writer_per_s_ > 0 ? f.per_s / one_writer_per_s_ : 0},
          {"p99_over_p50", f.p50_us > 0 ? f.p99_us / f.p50_us : 0},
          {"over_fdatasync_floor_rate", f.per_s * floor_.p50_us / 1e6},
          {"cpu_seconds", f.cpu_seconds},
          {"cpu_us_per_append", CpuUsPerAppend(f)},
          {"cpu_ceiling_per_s", CpuCeilingPerS(f)},
          {"over_cpu_ceiling", OverCpuCeiling(f)},
          {"load_1m", LoadAverage1m()},
          {"message_bytes", kMessageBytes},
          {"verified", "every acknowledged append stored once, seqs dense"}});
    fs::remove_all(dir, ec_);
  }

  std::error_code ec_;
  const fs::path root_;
  const double seconds_;
  const int writers_;
  const std::string self_;
  LatencyFloor floor_;
  double one_writer_per_s_ = 0;
  std::vector<std::pair<std::string, Figures>> results_;
};

// The body of one writer process: opens the store, says "ready", reads the
// deadline from stdin, appends until it, then prints each latency in ns.
int RunChild(const std::string& dir, int writer) {
  auto store = Store::Open(dir, {.durability = Durability::kDurable});
  if (!store) Die("child: " + store.error().ToString());
  std::cout << "ready" << std::endl;
  int64_t deadline_ns = 0;
  if (!(std::cin >> deadline_ns)) Die("child: no deadline");
  std::vector<int64_t> ns = AppendUntil(**store, writer, deadline_ns);
  std::string out;
  for (int64_t v : ns) out += std::to_string(v) + "\n";
  std::cout << out << std::flush;
  return 0;
}

constexpr const char* kUsage =
    R"(sessiondb_writers_bench: many writers on one embedded store

Usage: sessiondb_writers_bench [--dir DIR] [--seconds S] [--writers N] [--workloads LIST]

  --dir DIR         where the stores are created (default ./bench-data-writers)
  --seconds S       how long each run appends (default 5)
  --writers N       writers of the concurrent runs (default 64)
  --workloads LIST  comma-separated: one_writer, threads, stores, stores_private,
                    processes, processes_no_writer_lock, http; or "all" (default).
                    The fdatasync floor is always measured. stores_private and
                    processes_no_writer_lock are the baselines: the same writers
                    as the store wrote them before (a group-commit queue per
                    Store; SQLite's busy handler alone).

Prints one JSON object per line on stdout (see docs/benchmarks.md) and a table
on stderr. Exits 1 when an append fails or a run's read-back finds an
acknowledged append missing, doubled, or seqs not dense.
)";

}  // namespace
}  // namespace sessiondb::bench

int main(int argc, char** argv) {
  using namespace sessiondb::bench;
  if (argc == 4 && std::string(argv[1]) == "--child") return RunChild(argv[2], std::atoi(argv[3]));
  std::string dir = "bench-data-writers";
  std::string workloads = "all";
  double seconds = 5;
  int writers = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--dir" && has_value) {
      dir = argv[++i];
    } else if (arg == "--workloads" && has_value) {
      workloads = argv[++i];
    } else if (arg == "--seconds" && has_value) {
      seconds = std::atof(argv[++i]);
      if (!(seconds > 0 && seconds <= 3600)) Die("--seconds wants (0, 3600]");
    } else if (arg == "--writers" && has_value) {
      writers = std::atoi(argv[++i]);
      if (writers < 2 || writers > 1024) Die("--writers wants 2 to 1024");
    } else {
      std::cerr << "sessiondb_writers_bench: unknown argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  std::set<std::string> selected;
  std::stringstream list(workloads);
  for (std::string item; std::getline(list, item, ',');) selected.insert(item);
  for (const std::string& item : selected) {
    static const std::set<std::string> kKnown = {"all",
                                                 "one_writer",
                                                 "threads",
                                                 "stores",
                                                 "stores_private",
                                                 "processes",
                                                 "processes_no_writer_lock",
                                                 "http"};
    if (!kKnown.contains(item)) Die("unknown workload '" + item + "'");
  }
  auto want = [&](const char* name) { return selected.contains("all") || selected.contains(name); };
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) Die("cannot create --dir " + dir);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) Die("cannot find this program's path (/proc/self/exe)");

  Bench bench(dir, seconds, writers, self);
  Emit({{"workload", "config"},
        {"seconds", seconds},
        {"writers", writers},
        {"message_bytes", kMessageBytes},
        {"durability", "durable: WAL, synchronous=FULL, every append fsynced before it returns"},
        {"hardware_threads", std::thread::hardware_concurrency()}});
  bench.Floor();
  if (want("one_writer")) {
    Progress("one_writer");
    bench.InProcess("one_writer", 1, 1);
  }
  if (want("threads")) {
    Progress("threads: " + std::to_string(writers) + " threads on one Store");
    bench.InProcess("threads", writers, 1);
  }
  if (want("stores")) {
    Progress("stores: " + std::to_string(writers) + " Store objects in one process");
    bench.InProcess("stores", writers, writers);
  }
  if (want("stores_private")) {
    Progress("stores_private: " + std::to_string(writers) + " Stores, a queue each (before)");
    bench.InProcess("stores_private", writers, writers, /*private_queues=*/true);
  }
  if (want("processes")) {
    Progress("processes: " + std::to_string(writers) + " processes");
    bench.Processes(writers, /*writer_lock=*/true);
  }
  if (want("processes_no_writer_lock")) {
    Progress("processes_no_writer_lock: " + std::to_string(writers) + " processes (before)");
    bench.Processes(writers, /*writer_lock=*/false);
  }
  if (want("http")) {
    Progress("http: " + std::to_string(writers) + " clients over HTTP");
    bench.Http(writers);
  }
  bench.Summary();
  return 0;
}
