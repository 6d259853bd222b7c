#include "encryption_workload.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "blob/data_uri.h"
#include "sessiondb/encryption.h"
#include "sessiondb/forget.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "stats.h"
#include "workload_data.h"

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "sessiondb_bench: encryption: " << what << "\n";
  std::exit(1);
}

template <typename T>
T Check(Result<T> r, const std::string& what) {
  if (!r) Die(what + ": " + r.error().ToString());
  return std::move(*r);
}

void Progress(const std::string& line) { std::cerr << "[bench] " << line << std::endl; }

Message ToMessage(const WorkloadMessage& w) {
  Message m;
  m.role = w.role == "user" ? Role::kUser : Role::kAssistant;
  m.parts.push_back(Part::Text(w.text));
  return m;
}

// One side of every pair: stores with or without a key, each a folder under
// `dir` or, on PostgreSQL, a namespace of `pg_uri`.
struct Side {
  std::string name;  // "plain" or "encrypted"
  fs::path dir;
  std::string key_file;  // empty: plaintext
  std::string pg_uri;    // empty: embedded stores
  // PostgreSQL: how many times each store was started afresh (its namespace's suffix).
  std::map<std::string, int> fresh;

  // Where store `store` lives, and the namespace the CLI must be told.
  std::string Location(const std::string& store) const {
    return pg_uri.empty() ? (dir / store).string() : pg_uri;
  }
  std::string Namespace(const std::string& store) const {
    if (pg_uri.empty()) return "";
    auto it = fresh.find(store);
    // The process id keeps two runs against one server apart.
    return "enc-" + std::to_string(::getpid()) + "-" + name + "-" + store + "-" +
           std::to_string(it == fresh.end() ? 0 : it->second);
  }
  // An empty store from now on: the folder removed, or on PostgreSQL a
  // namespace not used yet, the last one erased first: blobs are shared by
  // plaintext namespaces, so a plaintext side would otherwise find the
  // images of its earlier rounds stored and write none of them (an
  // encrypted namespace names its blobs by its own key and writes them all).
  void Reset(const std::string& store) {
    if (pg_uri.empty()) {
      fs::remove_all(dir / store);
      return;
    }
    if (fresh.contains(store)) {
      Check(Open(store)->Erase({.everything = true, .reason = "bench round"}), "erasing " + store);
    }
    ++fresh[store];
  }
  bool Exists(const std::string& store) const {
    return pg_uri.empty() ? fs::exists(dir / store) : fresh.contains(store);
  }

  std::unique_ptr<Store> Open(const std::string& store) const {
    StoreOptions o;
    o.key_file = key_file;
    o.namespace_name = Namespace(store);
    return Check(Store::Open(Location(store), o), "opening " + store + " " + name);
  }
};

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// W1: 10,000 durable appends to one session; appends per second.
double W1(Side& side) {
  side.Reset("w1");
  auto store = side.Open("w1");
  Check(store->CreateSession({.id = "w1-s0"}), "create");
  std::vector<Message> messages;
  for (const auto& w : W1Messages()) messages.push_back(ToMessage(w));
  const int64_t start = NowNs();
  for (const Message& m : messages) Check(store->Append("w1-s0", m), "W1 append");
  return static_cast<double>(messages.size()) / Seconds(NowNs() - start);
}

// W3: the 10,000 messages of W1's store loaded 20 times; the median in ms.
double W3(const Side& side) {
  auto store = side.Open("w1");
  std::vector<int64_t> ns;
  for (int i = 0; i < 20; ++i) {
    const int64_t t = NowNs();
    auto messages = Check(store->ReadMessages("w1-s0"), "W3 load");
    ns.push_back(NowNs() - t);
    if (messages.size() != 10000) Die("W3 loaded " + std::to_string(messages.size()));
  }
  return MedianMs(ns);
}

// 100,000 messages, 1,000 per durable AppendBatch over 100 sessions, then
// the full-text index caught up; messages per second of the two together.
double Batch(Side& side) {
  side.Reset("batch");
  auto store = side.Open("batch");
  const auto data = W1Messages();
  for (int s = 0; s < 100; ++s) Check(store->CreateSession({.id = "b" + std::to_string(s)}), "c");
  const int64_t start = NowNs();
  for (int b = 0; b < 100; ++b) {
    std::vector<Message> one;
    for (int i = 0; i < 1000; ++i) {
      one.push_back(ToMessage(data[static_cast<size_t>((b * 1000 + i) % 10000)]));
    }
    Check(store->AppendBatch("b" + std::to_string(b), one), "AppendBatch");
  }
  SearchOptions options;
  options.embedder.from_environment = false;
  auto index = Check(SearchIndex::Open(*store, options), "index");
  if (Check(index->IndexPending(), "catch-up") != 0) Die("the index did not catch up");
  return 100000.0 / Seconds(NowNs() - start);
}

// Keyword search over the batch store: 10 queries x 10; the median in ms.
double Search(const Side& side) {
  auto store = side.Open("batch");
  SearchOptions options;
  options.embedder.from_environment = false;
  auto index = Check(SearchIndex::Open(*store, options), "index");
  const std::vector<std::string> queries = {"token limit", "error",   "database", "the file",
                                            "function",    "request", "cache",    "memory",
                                            "test",        "config"};
  std::vector<int64_t> ns;
  for (int round = 0; round < 10; ++round) {
    for (const std::string& q : queries) {
      const int64_t t = NowNs();
      auto r = Check(index->Search({.query = q, .mode = SearchMode::kKeyword, .limit = 10}), q);
      ns.push_back(NowNs() - t);
    }
  }
  return MedianMs(ns);
}

// W5: 200 appends of text and a 1 MiB PNG data URI, then all reloaded as
// data URIs; MiB/s written (the reload's MiB/s in *read_mibps).
double W5(Side& side, double* read_mibps) {
  side.Reset("w5");
  auto texts = W5Messages();
  std::vector<Message> messages;
  for (int i = 0; i < kW5Images; ++i) {
    Message m = ToMessage(texts[static_cast<size_t>(i)]);
    m.parts.push_back(
        Part::ImageFromDataUri(blob::MakeDataUri("image/png", W5Image(static_cast<uint32_t>(i)))));
    messages.push_back(std::move(m));
  }
  auto store = side.Open("w5");
  Check(store->CreateSession({.id = "w5-s0"}), "create");
  const double mib = static_cast<double>(kW5Images) * kW5ImageBytes / (1024.0 * 1024.0);
  int64_t start = NowNs();
  for (const Message& m : messages) Check(store->Append("w5-s0", m), "W5 append");
  const double write = mib / Seconds(NowNs() - start);
  store.reset();
  start = NowNs();
  store = side.Open("w5");
  for (const Message& m : Check(store->ReadMessages("w5-s0"), "W5 load")) {
    for (const Part& p : m.parts) {
      if (p.type == PartType::kImage) Check(store->ReadDataUri(*p.resource), "W5 data URI");
    }
  }
  *read_mibps = mib / Seconds(NowNs() - start);
  return write;
}

// A store of 2,000 code writes for the hook to recall from.
void PrepareHookStore(Side& side) {
  side.Reset("hook");
  auto store = side.Open("hook");
  MemoryOptions options;
  options.search.embedder.from_environment = false;
  auto memory = Check(CodeMemory::Open(*store, options), "memory");
  for (int i = 0; i < 2000; ++i) {
    const std::string name = "handler_" + std::to_string(i % 400);
    Check(memory->RecordWrite(
              {.file_path = "/bench/project/m" + std::to_string(i) + ".py",
               .new_code = "def " + name + "(request):\n    return " + std::to_string(i) + "\n",
               .session_id = "hook-bench",
               .project = "/bench/project"}),
          "record");
  }
}

// The hook process (PreToolUse on a Write), 30 runs; the median wall ms.
double Hook(const Side& side, const std::string& cli) {
  const std::string input = (side.dir / "hook-in.json").string();
  json e = {{"session_id", "hook-bench"},
            {"cwd", "/bench/project"},
            {"hook_event_name", "PreToolUse"},
            {"tool_name", "Write"},
            {"tool_input",
             {{"file_path", "/bench/project/new.py"},
              {"content", "def handler_7(request):\n    return 1\n"}}}};
  std::ofstream(input) << e.dump();
  const std::string store = side.Location("hook");
  const std::string name_space = side.Namespace("hook");
  std::vector<int64_t> ns;
  for (int i = 0; i < 30; ++i) {
    const int64_t t = NowNs();
    const pid_t pid = fork();
    if (pid == 0) {
      const int in = open(input.c_str(), O_RDONLY);
      const int null_fd = open("/dev/null", O_WRONLY);
      dup2(in, STDIN_FILENO);
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
      if (side.key_file.empty()) {
        unsetenv("SESSIONDB_KEY_FILE");
      } else {
        setenv("SESSIONDB_KEY_FILE", side.key_file.c_str(), 1);
      }
      if (name_space.empty()) {
        execl(cli.c_str(), cli.c_str(), "--store", store.c_str(), "hook", "claude-code", nullptr);
      } else {
        execl(cli.c_str(), cli.c_str(), "--store", store.c_str(), "--namespace", name_space.c_str(),
              "hook", "claude-code", nullptr);
      }
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ns.push_back(NowNs() - t);
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 2)) {
      Die("the hook exited with " + std::to_string(status));
    }
  }
  return MedianMs(ns);
}

void EmitPair(const std::string& name, const std::string& unit, bool higher_is_better,
              const std::vector<double>& plain, const std::vector<double>& encrypted,
              double load_before, double load_after, const std::string& backend) {
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  const double p = median(plain);
  const double e = median(encrypted);
  // Slowdown: how much longer the encrypted side takes for the same work.
  const double slowdown = higher_is_better ? p / e - 1.0 : e / p - 1.0;
  std::cout << json{{"peer", "sessiondb"},
                    {"workload", "encryption"},
                    {"backend", backend},
                    {"name", name},
                    {"unit", unit},
                    {"plain", p},
                    {"encrypted", e},
                    {"plain_runs", plain},
                    {"encrypted_runs", encrypted},
                    {"encrypted_slowdown", slowdown},
                    {"load_before", load_before},
                    {"load_after", load_after}}
                   .dump()
            << std::endl;
}

}  // namespace

void RunEncryptionWorkload(const fs::path& root, const std::string& cli,
                           const std::string& pg_uri) {
  const fs::path base = root / "encryption";
  fs::remove_all(base);
  Side plain{"plain", base / "plain", "", pg_uri, {}};
  Side sealed{"encrypted", base / "encrypted", (base / "key").string(), pg_uri, {}};
  fs::create_directories(plain.dir);
  fs::create_directories(sealed.dir);
  if (Status s = NewKeyFile(sealed.key_file); !s.ok()) Die(s.ToString());
  // Six rounds: even ones run plain first, odd ones encrypted first;
  // each figure is the median of its side's rounds.
  const std::vector<std::vector<Side*>> rounds = {{&plain, &sealed}, {&sealed, &plain},
                                                  {&plain, &sealed}, {&sealed, &plain},
                                                  {&plain, &sealed}, {&sealed, &plain}};
  const double load_before = LoadAverage1m();
  std::map<std::string, std::map<std::string, std::vector<double>>> got;
  for (const auto& order : rounds) {
    for (Side* side : order) {
      Progress("encryption: W1 and W3, " + side->name);
      got["W1_appends_per_s"][side->name].push_back(W1(*side));
      got["W3_load_median_ms"][side->name].push_back(W3(*side));
      Progress("encryption: batched append and keyword search at 100,000, " + side->name);
      got["batch_append_indexed_per_s"][side->name].push_back(Batch(*side));
      got["keyword_search_100k_median_ms"][side->name].push_back(Search(*side));
      Progress("encryption: W5, " + side->name);
      double read = 0;
      got["W5_write_MiBps"][side->name].push_back(W5(*side, &read));
      got["W5_read_MiBps"][side->name].push_back(read);
      Progress("encryption: the hook, " + side->name);
      if (!side->Exists("hook")) PrepareHookStore(*side);
      got["hook_median_ms"][side->name].push_back(Hook(*side, cli));
    }
  }
  const double load_after = LoadAverage1m();
  for (const auto& [name, sides] : got) {
    const bool higher = name.ends_with("per_s") || name.ends_with("MiBps");
    EmitPair(name, higher ? "higher is better" : "ms, lower is better", higher, sides.at("plain"),
             sides.at("encrypted"), load_before, load_after,
             pg_uri.empty() ? "embedded" : "postgres");
  }
  fs::remove_all(base);
}

}  // namespace sessiondb::bench
