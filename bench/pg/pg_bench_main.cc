// sessiondb_pg_bench: the PostgreSQL backend against the embedded store in the
// same run (the benchmark section of the PostgreSQL issue): append throughput
// with 1, 8 and 64 concurrent writers, each with its own Store as separate
// processes would have; listing 100,000 sessions; loading 10,000 messages.
// One JSON object per line on stdout (see docs/benchmarks.md); progress on
// stderr. Without --postgres it starts (and at exit stops) its own cluster
// through scripts/pg_cluster.sh.
//
//   sessiondb_pg_bench [--postgres URI] [--dir DIR] [--workloads LIST] [--seconds S]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "encryption_workload.h"
#include "hook_workload.h"
#include "pgbench_floor.h"
#include "sessiondb/store.h"
#include "stats.h"
#include "sync_workload.h"
#include "throwaway_cluster.h"
#include "vector_workload.h"

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kWriterCounts[] = {1, 8, 64};
constexpr int kMessageBytes = 500;
constexpr int kListSessions = 100'000;
constexpr int kListPage = 50;
constexpr int kListRepeats = 20;
// The page timed "deep in the cursor chain": sessions 49,951-50,000 by recency.
constexpr int kDeepPage = 1'000;
constexpr int kLoadMessages = 10'000;
constexpr int kLoadChunk = 1'000;
constexpr int kLoadRepeats = 30;
// Threads (and pooled connections) that create the PostgreSQL sessions of list_100k.
constexpr int kPgSetupThreads = 8;

constexpr const char* kEmbedded = "embedded";
constexpr const char* kPostgres = "postgres";
constexpr const char* kDurability =
    "durable: embedded fsync per commit (WAL, synchronous=FULL); postgres synchronous_commit=on";

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "sessiondb_pg_bench: " << what << "\n";
  std::exit(1);
}

template <typename T>
T Check(Result<T> r, const std::string& what) {
  if (!r) Die(what + ": " + r.error().ToString());
  return std::move(*r);
}

void Progress(const std::string& line) { std::cerr << "[pg_bench] " << line << std::endl; }

void Emit(const json& j) { std::cout << j.dump() << std::endl; }

double SecondsSince(int64_t start_ns) { return static_cast<double>(NowNs() - start_ns) / 1e9; }

// A ~500-byte message; the prefix makes every text distinct.
Message TextMessage(const std::string& prefix) {
  static const std::string kFiller = [] {
    std::string s;
    const char* words[] = {"session ", "append ", "durable ", "writer ", "token ", "latency "};
    for (int i = 0; s.size() < 2 * kMessageBytes; ++i) s += words[i % 6];
    return s;
  }();
  Message m;
  m.role = Role::kUser;
  std::string text = prefix + ": " + kFiller;
  text.resize(kMessageBytes);
  m.parts.push_back(Part::Text(std::move(text)));
  return m;
}

// Where one backend's store of one run lives, and how to open it.
struct Location {
  std::string backend;  // kEmbedded or kPostgres
  std::string path;     // a directory, or the PostgreSQL URI
  StoreOptions options;
  std::string label;  // for messages: the directory or "namespace X"
};

class Bench {
 public:
  Bench(fs::path root, std::string uri, double append_seconds)
      : root_(std::move(root)), uri_(std::move(uri)), append_seconds_(append_seconds) {
    // Every run of every bench gets namespaces of its own in the database.
    run_tag_ = "pgbench-" + std::to_string(getpid()) + "-" +
               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count());
  }

  const std::string& run_tag() const { return run_tag_; }
  int failures() const { return failures_; }

  // A fresh store for `run` on `backend`: an emptied directory, or a new namespace.
  Location Fresh(const std::string& backend, const std::string& run) {
    Location loc;
    loc.backend = backend;
    if (backend == kEmbedded) {
      fs::path dir = root_ / (std::string(kEmbedded) + "-" + run);
      fs::remove_all(dir);
      fs::create_directories(dir);
      loc.path = dir.string();
      loc.label = dir.string();
    } else {
      loc.path = uri_;
      loc.options.namespace_name = run_tag_ + "-" + run;
      loc.label = "namespace " + loc.options.namespace_name;
    }
    return loc;
  }

  std::unique_ptr<Store> Open(const Location& loc, const StoreOptions& options) {
    return Check(Store::Open(loc.path, options),
                 "opening the " + loc.backend + " store (" + loc.label + ")");
  }
  std::unique_ptr<Store> Open(const Location& loc) { return Open(loc, loc.options); }

  void Discard(const Location& loc) {
    if (loc.backend == kEmbedded) fs::remove_all(loc.path);
  }

  // ---- append_writers ---------------------------------------------------------

  // N writers, each with its own Store, appending for append_seconds_: to a
  // session each, or (same_session) all to one whose seqs are then checked dense.
  void AppendWriters(bool same_session) {
    const char* name = same_session ? "same_session" : "own_session";
    for (int writers : kWriterCounts) {
      for (const char* backend : {kEmbedded, kPostgres}) {
        Progress(std::string("append_writers ") + name + ": " + std::to_string(writers) +
                 " writer(s), " + backend + ", " + FormatSeconds(append_seconds_));
        RunWriters(backend, writers, same_session);
      }
      if (!same_session) WritersFloor(writers);
    }
  }

  // The server's floor beside append_writers own_session: pgbench with as
  // many clients, each a durable transaction of the statements an append
  // makes on a session of its own (lock the session row, insert a 500-byte
  // row, update the session) and nothing else. Whether 64 clients reach 8
  // clients' rate is the server's and this machine's answer before ours.
  void WritersFloor(int writers) {
    Progress("append_writers own_session: " + std::to_string(writers) +
             " pgbench client(s), the server's floor");
    const std::string run = "'" + run_tag_ + "-" + std::to_string(writers) + "'";
    const std::string setup =
        "CREATE TABLE IF NOT EXISTS pgbench_floor_sessions (run text, id int, n bigint, "
        "PRIMARY KEY (run, id));\n"
        "CREATE TABLE IF NOT EXISTS pgbench_floor_events (run text, id int, text text);\n"
        "INSERT INTO pgbench_floor_sessions SELECT " +
        run + ", g, 0 FROM generate_series(0, " + std::to_string(writers - 1) +
        ") g ON CONFLICT DO NOTHING;\n";
    const std::string where = " WHERE run = " + run + " AND id = :client_id";
    const std::string append = "BEGIN;\nSELECT n FROM pgbench_floor_sessions" + where +
                               " FOR UPDATE;\nINSERT INTO pgbench_floor_events VALUES (" + run +
                               ", :client_id, repeat('x', " + std::to_string(kMessageBytes) +
                               "));\nUPDATE pgbench_floor_sessions SET n = n + 1" + where +
                               ";\nCOMMIT;\n";
    sync();
    auto ready = RunPgbench(uri_, setup, {.clients = 1, .transactions = 1});
    auto floor = ready ? RunPgbench(uri_, append, {.clients = writers, .seconds = append_seconds_})
                       : Result<PgbenchFigure>(Err(ready.error()));
    if (!floor) {
      Emit({{"workload", "append_writers_floor"},
            {"writers", writers},
            {"error", floor.error().ToString()}});
      return;
    }
    Emit({{"backend", "postgres_floor"},
          {"workload", "append_writers_floor"},
          {"writers", writers},
          {"tool", "pgbench"},
          {"ops_per_s", floor->tps},
          {"mean_us", floor->latency_ms * 1000}});
    figures_["append_own_" + std::to_string(writers) + "_ops_per_s"]["postgres_floor"] = floor->tps;
  }

  // ---- list_100k --------------------------------------------------------------

  void List100k() {
    for (const char* backend : {kEmbedded, kPostgres}) {
      Location loc = Fresh(backend, "list100k");
      Progress(std::string("list_100k: creating 100,000 sessions in the ") + backend + " store");
      const int64_t setup_start = NowNs();
      CreateSessions(loc, kListSessions);
      const double setup_seconds = SecondsSince(setup_start);

      StoreOptions options = loc.options;
      options.max_connections = 1;
      auto store = Open(loc, options);

      // Walk the whole cursor chain once: every session exactly once, and the
      // cursor of the deep page to time below.
      Progress(std::string("list_100k: walking the cursor chain (") + backend + ")");
      std::set<std::string> seen;
      std::string cursor, deep_cursor;
      int pages = 0;
      const int64_t walk_start = NowNs();
      do {
        if (pages == kDeepPage - 1) deep_cursor = cursor;
        auto page = Check(store->ListSessions({.limit = kListPage, .cursor = cursor}),
                          "list_100k: listing page " + std::to_string(pages + 1));
        for (const Session& s : page.sessions) seen.insert(s.id);
        cursor = page.next_cursor;
        ++pages;
      } while (!cursor.empty());
      const double walk_seconds = SecondsSince(walk_start);
      if (static_cast<int>(seen.size()) != kListSessions || pages != kListSessions / kListPage) {
        Fail(backend, "list_100k: the cursor chain gave " + std::to_string(seen.size()) +
                          " distinct sessions in " + std::to_string(pages) + " pages, expected " +
                          std::to_string(kListSessions));
      }

      sync();
      auto first = TimeList(*store, "", backend);
      auto deep = TimeList(*store, deep_cursor, backend);
      json out = {{"backend", backend},
                  {"workload", "list_100k"},
                  {"sessions", kListSessions},
                  {"limit", kListPage},
                  {"repeats", kListRepeats},
                  {"first_page_median_ms", MedianMs(first)},
                  {"first_page_p99_us", PercentileUs(first, 99)},
                  {"deep_page", kDeepPage},
                  {"deep_page_median_ms", MedianMs(deep)},
                  {"deep_page_p99_us", PercentileUs(deep, 99)},
                  {"walk_all_pages_ms", walk_seconds * 1e3},
                  {"pages", pages},
                  {"setup_seconds", setup_seconds}};
      Emit(out);
      figures_["list_first_page_median_ms"][backend] = MedianMs(first);
      figures_["list_deep_page_median_ms"][backend] = MedianMs(deep);
      figures_["list_walk_all_pages_ms"][backend] = walk_seconds * 1e3;
      store.reset();
      Discard(loc);
    }
  }

  // ---- load_10k ---------------------------------------------------------------

  void Load10k() {
    // Both stores filled first, then their loads interleaved (one of each per
    // round), so a minute of a slower disk or a busier CPU moves both sides.
    struct Side {
      const char* backend;
      Location loc;
      std::unique_ptr<Store> store;
      double write_seconds = 0;
      std::vector<int64_t> ns;
    };
    std::vector<Side> sides;
    for (const char* backend : {kEmbedded, kPostgres}) {
      Progress(std::string("load_10k: 10,000 messages in one session (") + backend + ")");
      Side side{.backend = backend, .loc = Fresh(backend, "load10k")};
      side.store = Open(side.loc);
      Check(side.store->CreateSession({.id = "load"}), "load_10k: creating the session");
      std::vector<Message> chunk;
      const int64_t write_start = NowNs();
      for (int i = 0; i < kLoadMessages; ++i) {
        chunk.push_back(TextMessage("load message " + std::to_string(i + 1)));
        if (static_cast<int>(chunk.size()) == kLoadChunk) {
          Check(side.store->AppendBatch("load", chunk), "load_10k: AppendBatch");
          chunk.clear();
        }
      }
      side.write_seconds = SecondsSince(write_start);
      sides.push_back(std::move(side));
    }
    sync();
    Progress("load_10k: loaded x" + std::to_string(kLoadRepeats) + ", the backends interleaved");
    for (int r = 0; r < kLoadRepeats; ++r) {
      for (Side& side : sides) {
        const int64_t t = NowNs();
        auto messages = Check(side.store->ReadMessages("load"), "load_10k: ReadMessages");
        side.ns.push_back(NowNs() - t);
        if (r == 0) VerifyLoad(side.backend, messages);
      }
    }
    for (Side& side : sides) {
      Emit({{"backend", side.backend},
            {"workload", "load_10k"},
            {"messages", kLoadMessages},
            {"message_bytes", kMessageBytes},
            {"repeats", kLoadRepeats},
            {"median_ms", MedianMs(side.ns)},
            {"p99_us", PercentileUs(side.ns, 99)},
            {"append_batch_messages_per_s", kLoadMessages / side.write_seconds}});
      figures_["load_10k_median_ms"][side.backend] = MedianMs(side.ns);
      if (side.backend == std::string(kPostgres)) LoadFloor(side.loc);
      figures_["append_batch_messages_per_s"][side.backend] = kLoadMessages / side.write_seconds;
      side.store.reset();
      Discard(side.loc);
    }
  }

  // The server's floor beside load_10k: pgbench reads the session's rows'
  // keys in seq order through the primary key, ten times; its mean latency
  // is the least any read of those 10,000 rows costs on this server, before
  // their text is sent or anything of ours runs.
  void LoadFloor(const Location& loc) {
    json out = {{"backend", "postgres_floor"}, {"workload", "load_10k_floor"}, {"tool", "pgbench"}};
    auto floor =
        RunPgbench(uri_,
                   "SELECT seq FROM events WHERE namespace = '" + loc.options.namespace_name +
                       "' AND session_id = 'load' AND type = 'message' ORDER BY seq;\n",
                   {.clients = 1, .transactions = kLoadRepeats});
    if (!floor) {
      out["error"] = floor.error().ToString();
    } else {
      out["keys_only_mean_ms"] = floor->latency_ms;
      figures_["load_10k_median_ms"]["postgres_floor_keys_only"] = floor->latency_ms;
    }
    Emit(out);
  }

  // ---- summary ----------------------------------------------------------------

  void Summary() {
    json s = {{"workload", "summary"}, {"namespaces", run_tag_ + "-*"}};
    for (const auto& [figure, by_backend] : figures_) {
      json entry;
      for (const auto& [backend, value] : by_backend) entry[backend] = value;
      auto e = by_backend.find(kEmbedded);
      auto p = by_backend.find(kPostgres);
      if (e != by_backend.end() && p != by_backend.end() && e->second > 0) {
        entry["postgres_over_embedded"] = p->second / e->second;
      }
      s["figures"][figure] = entry;
    }
    s["checks_failed"] = failures_;
    Emit(s);
  }

 private:
  struct WriterOutcome {
    std::vector<int64_t> ns;
    std::vector<int64_t> seqs;
    std::string error;
  };

  static std::string FormatSeconds(double s) {
    std::ostringstream out;
    out << s << " s";
    return out.str();
  }

  void Fail(const std::string& backend, const std::string& what) {
    ++failures_;
    std::cerr << "sessiondb_pg_bench: CHECK FAILED (" << backend << "): " << what << "\n";
    Emit({{"backend", backend}, {"workload", "check"}, {"ok", false}, {"what", what}});
  }

  void RunWriters(const std::string& backend, int writers, bool same_session) {
    const std::string run =
        std::string(same_session ? "same" : "own") + "-" + std::to_string(writers);
    Location loc = Fresh(backend, run);
    // Each writer is a separate client: for PostgreSQL one connection each.
    loc.options.max_connections = 1;
    const auto session_of = [&](int w) {
      return same_session ? std::string("shared") : "writer-" + std::to_string(w);
    };
    {
      // Create the store (schema, directory) and the sessions before the writers open it.
      auto setup = Open(loc);
      for (int w = 0; w < (same_session ? 1 : writers); ++w) {
        Check(setup->CreateSession({.id = session_of(w)}),
              "append_writers: creating " + session_of(w));
      }
    }

    // Earlier runs' dirty pages would otherwise be written back during this one.
    sync();

    std::vector<WriterOutcome> outcomes(static_cast<size_t>(writers));
    std::latch ready(writers);
    std::latch go(1);
    std::atomic<bool> stop{false};
    int64_t deadline_ns = 0;
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, w] {
        WriterOutcome& out = outcomes[static_cast<size_t>(w)];
        std::unique_ptr<Store> store;
        if (auto opened = Store::Open(loc.path, loc.options)) {
          store = std::move(*opened);
        } else {
          out.error = "opening: " + opened.error().ToString();
        }
        ready.count_down();
        go.wait();
        if (!store) return;
        const std::string session = session_of(w);
        out.ns.reserve(100'000);
        for (int64_t i = 1; !stop.load(std::memory_order_relaxed) && NowNs() < deadline_ns; ++i) {
          Message m = TextMessage("writer " + std::to_string(w) + " message " + std::to_string(i));
          const int64_t t = NowNs();
          auto appended = store->Append(session, m);
          if (!appended) {
            out.error = "append " + std::to_string(i) + " to " + session + ": " +
                        appended.error().ToString();
            stop = true;
            return;
          }
          out.ns.push_back(NowNs() - t);
          out.seqs.push_back(appended->seq);
        }
      });
    }
    ready.wait();
    const int64_t start = NowNs();
    deadline_ns = start + static_cast<int64_t>(append_seconds_ * 1e9);
    go.count_down();  // publishes deadline_ns to the writers
    for (std::thread& t : threads) t.join();
    const double seconds = SecondsSince(start);

    std::vector<int64_t> all_ns;
    for (const WriterOutcome& o : outcomes) {
      if (!o.error.empty()) {
        Die("append_writers " + run + " (" + backend + ", " + loc.label + "): " + o.error);
      }
      all_ns.insert(all_ns.end(), o.ns.begin(), o.ns.end());
    }
    const int64_t appended = static_cast<int64_t>(all_ns.size());
    const bool dense = VerifyWriters(loc, backend, writers, same_session, outcomes, session_of);

    json out = {{"backend", backend},
                {"workload", "append_writers"},
                {"name", same_session ? "same_session" : "own_session"},
                {"writers", writers},
                {"n", appended},
                {"seconds", seconds},
                {"ops_per_s", static_cast<double>(appended) / seconds},
                {"p50_us", PercentileUs(all_ns, 50)},
                {"p99_us", PercentileUs(all_ns, 99)},
                {"message_bytes", kMessageBytes},
                {"durability", kDurability},
                {"seqs_dense", dense}};
    Emit(out);
    const std::string key =
        std::string("append_") + (same_session ? "same" : "own") + "_" + std::to_string(writers);
    figures_[key + "_ops_per_s"][backend] = out["ops_per_s"];
    figures_[key + "_p50_us"][backend] = out["p50_us"];
    figures_[key + "_p99_us"][backend] = out["p99_us"];
    Discard(loc);
  }

  // Reads the sessions back: every append is there once, and seqs are 1..count.
  template <typename SessionOf>
  bool VerifyWriters(const Location& loc, const std::string& backend, int writers,
                     bool same_session, const std::vector<WriterOutcome>& outcomes,
                     const SessionOf& session_of) {
    auto store = Open(loc);
    bool ok = true;
    for (int w = 0; w < (same_session ? 1 : writers); ++w) {
      const std::string session = session_of(w);
      int64_t expected = 0;
      std::vector<int64_t> returned;
      for (int v = 0; v < writers; ++v) {
        if (!same_session && v != w) continue;
        const auto& seqs = outcomes[static_cast<size_t>(v)].seqs;
        expected += static_cast<int64_t>(seqs.size());
        returned.insert(returned.end(), seqs.begin(), seqs.end());
      }
      auto messages = Check(store->ReadMessages(session), "reading back " + session);
      std::string problem;
      if (static_cast<int64_t>(messages.size()) != expected) {
        problem = std::to_string(messages.size()) + " messages read back, " +
                  std::to_string(expected) + " appended";
      }
      for (size_t i = 0; problem.empty() && i < messages.size(); ++i) {
        if (messages[i].seq != static_cast<int64_t>(i) + 1) {
          problem = "message " + std::to_string(i + 1) + " has seq " +
                    std::to_string(messages[i].seq) + " (a gap or a duplicate)";
        }
      }
      std::sort(returned.begin(), returned.end());
      for (size_t i = 0; problem.empty() && i < returned.size(); ++i) {
        if (returned[i] != static_cast<int64_t>(i) + 1) {
          problem = "Append returned seq " + std::to_string(returned[i]) + " where " +
                    std::to_string(i + 1) + " was due";
        }
      }
      if (!problem.empty()) {
        Fail(backend, "append_writers " + std::to_string(writers) + " writers, session " + session +
                          ": " + problem);
        ok = false;
      }
    }
    return ok;
  }

  // Creates `count` sessions in the store at `loc`, with progress on stderr.
  // Setup, not measured: embedded with one Store (it serialises writers
  // anyway), PostgreSQL with kPgSetupThreads threads over one pool. Both
  // without the per-commit flush (kProcessCrashSafe).
  void CreateSessions(const Location& loc, int count) {
    StoreOptions options = loc.options;
    options.durability = Durability::kProcessCrashSafe;
    const int threads = loc.backend == kPostgres ? kPgSetupThreads : 1;
    options.max_connections = threads;
    auto store = Open(loc, options);
    std::atomic<int> next{0};
    std::atomic<int> done{0};
    std::mutex mu;
    std::string error;  // guarded by mu
    const int64_t start = NowNs();
    auto work = [&] {
      for (int i = next++; i < count; i = next++) {
        const std::string id = "s-" + std::to_string(i);
        auto created = store->CreateSession({.id = id});
        if (!created) {
          std::lock_guard<std::mutex> lock(mu);
          if (error.empty()) error = "creating " + id + ": " + created.error().ToString();
          next = count;
          return;
        }
        const int d = ++done;
        if (d % 10'000 == 0) {
          std::ostringstream line;
          line.precision(1);
          line << std::fixed << "  " << d << " sessions, " << SecondsSince(start) << " s";
          Progress(line.str());
        }
      }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
    if (!error.empty()) Die("list_100k (" + loc.backend + ", " + loc.label + "): " + error);
  }

  std::vector<int64_t> TimeList(Store& store, const std::string& cursor,
                                const std::string& backend) {
    std::vector<int64_t> ns;
    for (int i = 0; i < kListRepeats; ++i) {
      const int64_t t = NowNs();
      auto page =
          Check(store.ListSessions({.limit = kListPage, .cursor = cursor}), "list_100k: list");
      ns.push_back(NowNs() - t);
      if (i == 0 && static_cast<int>(page.sessions.size()) != kListPage) {
        Fail(backend, "list_100k: a page returned " + std::to_string(page.sessions.size()) +
                          " sessions, expected " + std::to_string(kListPage));
      }
    }
    return ns;
  }

  void VerifyLoad(const std::string& backend, const std::vector<Message>& messages) {
    if (static_cast<int>(messages.size()) != kLoadMessages) {
      Fail(backend, "load_10k: read " + std::to_string(messages.size()) + " messages, expected " +
                        std::to_string(kLoadMessages));
      return;
    }
    for (int i = 0; i < kLoadMessages; ++i) {
      const Message& m = messages[static_cast<size_t>(i)];
      const std::string want = TextMessage("load message " + std::to_string(i + 1)).Text();
      if (m.seq != i + 1 || m.Text() != want) {
        Fail(backend, "load_10k: message " + std::to_string(i + 1) +
                          " differs from what was "
                          "appended");
        return;
      }
    }
  }

  fs::path root_;
  std::string uri_;
  double append_seconds_;
  std::string run_tag_;
  int failures_ = 0;
  // figure name -> backend -> value, for the summary line.
  std::map<std::string, std::map<std::string, double>> figures_;
};

constexpr const char* kUsage =
    R"(sessiondb_pg_bench: the PostgreSQL backend against the embedded store

Usage: sessiondb_pg_bench [--postgres URI] [--dir DIR] [--workloads LIST] [--seconds S]

  --postgres URI    the PostgreSQL server (postgresql://...); each run works in
                    namespaces of its own (pgbench-<pid>-<time>-*), left behind.
                    Default: start a throw-away cluster with scripts/pg_cluster.sh
                    in /tmp/sdb-pgbench-<pid> and stop it at the end
  --dir DIR         where the embedded stores are created (default ./bench-data-pg)
  --workloads LIST  comma-separated: append_writers (both variants), same_session
                    (only the shared-session variant), list_100k, load_10k; or "all"
                    (default, which leaves encryption out); encryption: the
                    encryption workload of sessiondb_bench on PostgreSQL, a
                    plaintext namespace against an encrypted one in the same run
                    The workloads of issue 37, run only when named:
                    hook (the Claude Code hook, `ls` and `show` as processes;
                    through PgBouncer too when $SESSIONDB_BENCH_PGBOUNCER_URI
                    names one), sync_100k (sessiondb sync of 100,000 messages
                    each way), vectors (--vectors of them, default 1,000,000:
                    the first query of a fresh process, recall@10). Keyword
                    search at a million is sessiondb_search_bench
                    --beside-postgres (docs/benchmarks.md)
  --seconds S       how long each append_writers run appends (default 3)
  --vectors N       the vectors workload's size
  --namespace NS    the vectors workload's namespace (default a new one): a
                    namespace an earlier run filled is measured again, its
                    vectors and this machine's cached graph reused

Prints one JSON object per line on stdout (see docs/benchmarks.md); progress on
stderr. Exits 1 on an error or a failed check (seqs not dense, pages wrong).
)";

}  // namespace
}  // namespace sessiondb::bench

int main(int argc, char** argv) {
  using namespace sessiondb::bench;
  std::string uri;
  std::string dir = "bench-data-pg";
  std::string workloads = "all";
  double seconds = 3;
  int64_t vectors = 1'000'000;
  std::string vectors_namespace;
  // The vectors workload's first-query child (vector_workload.h).
  if (argc == 6 && std::string(argv[1]) == "--vector-first-query") {
    return RunVectorFirstQueryChild(argv[2], argv[3], std::atoi(argv[4]), argv[5]);
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--postgres" && i + 1 < argc) {
      uri = argv[++i];
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--vectors" && i + 1 < argc) {
      vectors = std::atoll(argv[++i]);
      if (vectors < 1000) {
        std::cerr << "sessiondb_pg_bench: --vectors wants at least 1000\n";
        return 2;
      }
    } else if (arg == "--namespace" && i + 1 < argc) {
      vectors_namespace = argv[++i];
    } else if (arg == "--workloads" && i + 1 < argc) {
      workloads = argv[++i];
    } else if (arg == "--seconds" && i + 1 < argc) {
      try {
        seconds = std::stod(argv[++i]);
      } catch (const std::exception&) {
        seconds = -1;
      }
      if (!(seconds > 0 && seconds <= 3600)) {
        std::cerr << "sessiondb_pg_bench: --seconds wants a number of seconds in (0, 3600], got '"
                  << argv[i] << "'\n";
        return 2;
      }
    } else {
      std::cerr << "sessiondb_pg_bench: unknown argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  std::set<std::string> selected;
  std::stringstream list(workloads);
  for (std::string item; std::getline(list, item, ',');) selected.insert(item);
  static const std::set<std::string> kKnown = {"all",       "append_writers", "same_session",
                                               "list_100k", "load_10k",       "encryption",
                                               "hook",      "sync_100k",      "vectors"};
  for (const auto& item : selected) {
    if (!kKnown.contains(item)) {
      std::cerr << "sessiondb_pg_bench: unknown workload '" << item << "'\n" << kUsage;
      return 2;
    }
  }
  const bool all = selected.contains("all");
  auto want = [&](const char* name) { return all || selected.contains(name); };

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) Die("cannot create --dir " + dir + ": " + ec.message());

  const bool own_cluster = uri.empty();
  if (own_cluster) {
    const std::string cluster_dir = "/tmp/sdb-pgbench-" + std::to_string(getpid());
    Progress("starting a throw-away PostgreSQL cluster in " + cluster_dir);
    uri = Check(ThrowawayCluster::Start(cluster_dir), "starting PostgreSQL");
  }

  if (selected.contains("encryption")) {
    // Its own pairs and summary lines (docs/encryption.md); nothing else runs.
    RunEncryptionWorkload(dir, SESSIONDB_CLI_PATH, uri);
    if (own_cluster) ThrowawayCluster::Stop();
    return 0;
  }

  // The workloads of issue 37 print their own line each; nothing else runs.
  if (selected.contains("hook") || selected.contains("sync_100k") || selected.contains("vectors")) {
    const std::string tag =
        "pgbench-" + std::to_string(getpid()) + "-" + std::to_string(NowNs() / 1'000'000'000);
    if (selected.contains("hook")) {
      Progress("hook and CLI reads as processes, both backends");
      Emit(RunHookWorkload(SESSIONDB_CLI_PATH, uri, tag + "-hook", dir + "/hook"));
    }
    if (selected.contains("sync_100k")) {
      Progress("sync of 100,000 messages each way");
      Emit(RunSyncWorkload(uri, tag, dir + "/sync"));
    }
    if (selected.contains("vectors")) {
      Progress("vectors: " + std::to_string(vectors));
      const std::string ns = vectors_namespace.empty() ? tag + "-vectors" : vectors_namespace;
      Emit(RunVectorWorkload(uri, ns, dir + "/vectors", vectors));
    }
    if (own_cluster) ThrowawayCluster::Stop();
    return 0;
  }

  Bench bench(dir, uri, seconds);
  std::vector<std::string> run;
  if (want("append_writers")) run.push_back("append_writers (own_session, same_session)");
  if (!want("append_writers") && want("same_session")) run.push_back("same_session");
  for (const char* w : {"list_100k", "load_10k"}) {
    if (want(w)) run.push_back(w);
  }
  Emit({{"workload", "config"},
        {"workloads", run},
        {"writers", {1, 8, 64}},
        {"append_seconds", seconds},
        {"message_bytes", 500},
        {"postgres", own_cluster ? "throw-away cluster (scripts/pg_cluster.sh)" : "given URI"},
        {"namespaces", bench.run_tag() + "-*"},
        {"embedded_dir", dir},
        {"hardware_threads", std::thread::hardware_concurrency()}});

  // Fail now, not after the embedded half of the first workload, if the server is unusable.
  bench.Open(bench.Fresh("postgres", "probe")).reset();

  const int64_t start = NowNs();
  if (want("append_writers")) bench.AppendWriters(/*same_session=*/false);
  if (want("append_writers") || want("same_session")) bench.AppendWriters(/*same_session=*/true);
  if (want("list_100k")) bench.List100k();
  if (want("load_10k")) bench.Load10k();
  bench.Summary();
  Progress("done in " + std::to_string(static_cast<int>(SecondsSince(start))) + " s");
  if (own_cluster) ThrowawayCluster::Stop();
  return bench.failures() == 0 ? 0 : 1;
}
