// sessiondb_server_bench: the HTTP server on loopback, measured as apps use
// it (docs/benchmarks.md, "The server").
//   1. Durable appends over HTTP: one client, then N clients at once (64 by
//      default), each appending small messages to its own session for a few
//      seconds: messages/s and p50/p99 latency. Group commit is what lets the
//      many clients share fsyncs.
//   2. With a history of --history messages in --sessions sessions: a page of
//      the session list and a keyword and a hybrid search, p50/p99 over HTTP.
//
// Usage: sessiondb_server_bench [--dir DIR] [--clients 64] [--seconds 10]
//                               [--history 20000] [--sessions 1000]
#include <httplib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"
#include "sessiondb/store.h"
#include "stats.h"

namespace {

using namespace sessiondb;
namespace fs = std::filesystem;

struct Args {
  std::string dir = "/tmp/sessiondb-server-bench";
  int clients = 64;
  double seconds = 10;
  int history = 20'000;
  int sessions = 1'000;
};

struct AppendFigures {
  int64_t messages = 0;
  double per_second = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  int64_t failures = 0;
};

std::string MessageBody(int client, int64_t i) {
  return R"({"role":"user","parts":[{"type":"text","text":"client )" + std::to_string(client) +
         " message " + std::to_string(i) + R"( asks about the retry budget of the uploader"}]})";
}

// `clients` threads, each with its own connection and session, appending for
// `seconds`. Connections are opened (and the sessions created) before the
// clock starts, so that the figures measure the appends, not the connection
// storm (the server listens with a backlog of 1024 now; cpp-httplib's was 5).
AppendFigures RunAppends(int port, int clients, double seconds, const std::string& tag) {
  std::vector<std::vector<int64_t>> latencies(clients);
  std::atomic<int64_t> failures{0};
  std::atomic<bool> stop{false};
  std::mutex print_mu;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client http("127.0.0.1", port);
      http.set_keep_alive(true);
      http.set_tcp_nodelay(true);
      http.set_read_timeout(60, 0);
      const std::string session = tag + "-" + std::to_string(c);
      for (int attempt = 0; attempt < 50; ++attempt) {
        auto r = http.Post("/v1/sessions", "{\"id\":\"" + session + "\"}", "application/json");
        if (r && (r->status == 201 || r->status == 409)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      ++ready;
      while (ready.load() < clients) std::this_thread::yield();
      const std::string path = "/v1/sessions/" + session + "/messages";
      for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const int64_t start = bench::NowNs();
        auto r = http.Post(path, MessageBody(c, i), "application/json");
        if (!r || r->status != 201) {
          if (failures++ == 0) {
            std::lock_guard lock(print_mu);
            std::cerr << "append failed: "
                      << (r ? std::to_string(r->status) + " " + r->body
                            : httplib::to_string(r.error()))

                      << "\n";
          }
          continue;
        }
        latencies[c].push_back(bench::NowNs() - start);
      }
    });
  }
  while (ready.load() < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int64_t begin = bench::NowNs();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  const double elapsed = static_cast<double>(bench::NowNs() - begin) / 1e9;
  std::vector<int64_t> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  AppendFigures f;
  f.messages = static_cast<int64_t>(all.size());
  f.per_second = static_cast<double>(all.size()) / elapsed;
  f.p50_ms = bench::PercentileUs(all, 50) / 1000;
  f.p99_ms = bench::PercentileUs(all, 99) / 1000;
  f.failures = failures.load();
  return f;
}

// Seeds the history through the library (faster than HTTP; what is measured
// is reading it back over HTTP).
void SeedHistory(Store& store, const Args& args) {
  static const char* kWords[] = {"retry",  "budget", "parser", "token",  "limit",  "upload",
                                 "schema", "cache",  "thread", "socket", "index",  "render",
                                 "deploy", "config", "branch", "commit", "review", "vector"};
  std::mt19937 rng(7);
  const int per_session = std::max(1, args.history / args.sessions);
  for (int s = 0; s < args.sessions; ++s) {
    auto session = store.CreateSession({.title = "History session " + std::to_string(s)});
    if (!session) {
      std::cerr << session.error().ToString() << "\n";
      std::exit(1);
    }
    std::vector<Message> batch;
    for (int m = 0; m < per_session; ++m) {
      std::string text;
      for (int w = 0; w < 24; ++w) text += std::string(kWords[rng() % 18]) + " ";
      if (rng() % 500 == 0) text += "kumquat ";  // a rare word: ~0.2% of messages
      Message msg;
      msg.role = m % 2 ? Role::kAssistant : Role::kUser;
      msg.parts = {Part::Text(text)};
      batch.push_back(std::move(msg));
    }
    if (!store.AppendBatch(session->id, batch)) std::exit(1);
  }
}

struct ReadFigures {
  double p50_ms = 0;
  double p99_ms = 0;
  size_t bytes = 0;
};

ReadFigures TimeGets(int port, const std::string& path, int repeats) {
  httplib::Client http("127.0.0.1", port);
  http.set_keep_alive(true);
  http.set_tcp_nodelay(true);
  http.set_read_timeout(120, 0);
  std::vector<int64_t> ns;
  ReadFigures f;
  for (int i = 0; i < repeats; ++i) {
    const int64_t start = bench::NowNs();
    auto r = http.Get(path);
    if (!r || r->status != 200) {
      std::cerr << "GET " << path << " failed: " << (r ? r->body : "no answer") << "\n";
      std::exit(1);
    }
    ns.push_back(bench::NowNs() - start);
    f.bytes = r->body.size();
  }
  f.p50_ms = bench::PercentileUs(ns, 50) / 1000;
  f.p99_ms = bench::PercentileUs(ns, 99) / 1000;
  return f;
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << flag << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (flag == "--dir")
      a.dir = next();
    else if (flag == "--clients")
      a.clients = std::stoi(next());
    else if (flag == "--seconds")
      a.seconds = std::stod(next());
    else if (flag == "--history")
      a.history = std::stoi(next());
    else if (flag == "--sessions")
      a.sessions = std::stoi(next());
    else {
      std::cerr << "usage: sessiondb_server_bench [--dir DIR] [--clients N] [--seconds S] "
                   "[--history MESSAGES] [--sessions N]\n";
      std::exit(flag == "--help" ? 0 : 2);
    }
  }
  return a;
}

void PrintAppends(const char* label, const AppendFigures& f) {
  std::printf("  %-12s %8lld messages  %8.0f msg/s  p50 %7.2f ms  p99 %7.2f ms  failures %lld\n",
              label, static_cast<long long>(f.messages), f.per_second, f.p50_ms, f.p99_ms,
              static_cast<long long>(f.failures));
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  fs::remove_all(args.dir);
  auto store = Store::Open(args.dir, {.durability = Durability::kDurable});
  if (!store) {
    std::cerr << store.error().ToString() << "\n";
    return 1;
  }
  server::ServerOptions options;
  options.port = 0;
  options.threads = args.clients + 8;
  auto http = server::HttpServer::Start(**store, args.dir, options);
  if (!http) {
    std::cerr << http.error().ToString() << "\n";
    return 1;
  }
  std::thread serving([&] { (void)(*http)->Run(); });
  const int port = (*http)->port();
  std::printf("sessiondb_server_bench: store %s, server %s, %d hardware threads\n",
              args.dir.c_str(), (*http)->url().c_str(), std::thread::hardware_concurrency());

  std::printf("\nDurable appends over HTTP (%.0f s each; every append fsynced before its 201):\n",
              args.seconds);
  const AppendFigures one = RunAppends(port, 1, args.seconds, "one");
  PrintAppends("1 client", one);
  const AppendFigures many = RunAppends(port, args.clients, args.seconds, "many");
  const std::string label = std::to_string(args.clients) + " clients";
  PrintAppends(label.c_str(), many);
  std::printf("  %d clients give %.1fx the throughput of one\n", args.clients,
              many.per_second / std::max(one.per_second, 1.0));

  std::printf("\nReads over HTTP with %d messages in %d sessions (seeding...)\n", args.history,
              args.sessions);
  SeedHistory(**store, args);
  const ReadFigures list = TimeGets(port, "/v1/sessions?limit=50", 200);
  std::printf("  list page (50 sessions)   p50 %7.2f ms  p99 %7.2f ms  (%zu bytes)\n", list.p50_ms,
              list.p99_ms, list.bytes);
  const ReadFigures keyword = TimeGets(port, "/v1/search?q=kumquat&mode=keyword", 200);
  std::printf("  search, keyword (rare)    p50 %7.2f ms  p99 %7.2f ms  (%zu bytes)\n",
              keyword.p50_ms, keyword.p99_ms, keyword.bytes);
  const ReadFigures common = TimeGets(port, "/v1/search?q=retry%20budget&mode=keyword", 100);
  std::printf("  search, keyword (common)  p50 %7.2f ms  p99 %7.2f ms  (%zu bytes)\n",
              common.p50_ms, common.p99_ms, common.bytes);
  TimeGets(port, "/v1/search?q=warm&mode=hybrid", 1);  // embeds the history once
  const ReadFigures hybrid = TimeGets(port, "/v1/search?q=kumquat%20uploader", 100);
  std::printf("  search, hybrid            p50 %7.2f ms  p99 %7.2f ms  (%zu bytes)\n",
              hybrid.p50_ms, hybrid.p99_ms, hybrid.bytes);

  (*http)->Stop();
  serving.join();
  return many.failures + one.failures > 0 ? 1 : 0;
}
