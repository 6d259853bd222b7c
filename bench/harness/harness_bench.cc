// sessiondb_harness_bench: what an agent harness pays (issue 4).
//   fork        ForkSession time as the parent's history grows 1k -> 100k
//               events, and reading a fork vs a plain session of the same length
//   projection  ProjectSession of a 10,000-message session compacted at 9,000
//               (and of the same session uncompacted, for comparison)
//   resume      ReadForProjection with a fixed 100-event tail after the last
//               compaction, as history grows 10x
//
// Usage: sessiondb_harness_bench [--dir DIR] [--workloads fork,projection,resume]
// Prints one JSON object per line on stdout; progress on stderr.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sessiondb/projection.h"
#include "sessiondb/store.h"
#include "stats.h"

namespace {

using namespace sessiondb;
using bench::MedianMs;
using bench::NowNs;
using nlohmann::json;
namespace fs = std::filesystem;

template <typename T>
T Check(Result<T> r, const std::string& what) {
  if (!r) {
    std::cerr << "harness_bench: " << what << ": " << r.error().ToString() << "\n";
    std::exit(1);
  }
  return std::move(*r);
}

void Progress(const std::string& line) { std::cerr << "[bench] " << line << std::endl; }

std::unique_ptr<Store> FreshStore(const fs::path& dir) {
  fs::remove_all(dir);
  return Check(Store::Open(dir.string()), "open " + dir.string());
}

// `n` messages in alternating roles, ~200 bytes of text each; every tenth
// assistant turn calls a tool and the next message returns its result.
void Fill(Store& store, const std::string& session, int64_t n) {
  std::vector<Message> batch;
  for (int64_t i = 1; i <= n; ++i) {
    Message m;
    m.role = i % 2 ? Role::kUser : Role::kAssistant;
    std::string text = "message " + std::to_string(i) + ": ";
    while (text.size() < 200) text += "lorem ipsum dolor sit amet ";
    m.parts.push_back(Part::Text(std::move(text)));
    if (i % 20 == 0) m.parts.push_back(Part::ToolCall("call" + std::to_string(i), "grep", "{}"));
    batch.push_back(std::move(m));
    if (batch.size() == 1000 || i == n) {
      Check(store.AppendBatch(session, batch), "append");
      batch.clear();
    }
  }
}

template <typename F>
std::vector<int64_t> Time(int runs, F f) {
  std::vector<int64_t> ns;
  for (int i = 0; i < runs; ++i) {
    int64_t t0 = NowNs();
    f();
    ns.push_back(NowNs() - t0);
  }
  return ns;
}

void Fork(const fs::path& root) {
  for (int64_t n : {int64_t{1'000}, int64_t{10'000}, int64_t{100'000}}) {
    Progress("fork: building a " + std::to_string(n) + "-event session");
    auto store = FreshStore(root / ("fork-" + std::to_string(n)));
    std::string parent = Check(store->CreateSession({}), "create").id;
    Fill(*store, parent, n);
    int k = 0;
    auto fork_ns =
        Time(20, [&] { Check(store->ForkSession(parent, n - (k++ % 2) * (n / 2), {}), "fork"); });
    // A fork at the end reads the whole parent history through its chain.
    std::string fork = Check(store->ForkSession(parent, n, {}), "fork").id;
    auto read_fork_ns = Time(5, [&] { Check(store->ReadMessages(fork), "read fork"); });
    auto read_plain_ns = Time(5, [&] { Check(store->ReadMessages(parent), "read parent"); });
    json j = {{"workload", "harness_fork"},
              {"history_events", n},
              {"fork_ms_median", MedianMs(fork_ns)},
              {"read_fork_ms_median", MedianMs(read_fork_ns)},
              {"read_same_length_session_ms_median", MedianMs(read_plain_ns)},
              {"durability", "fsync per fork (durable)"}};
    std::cout << j.dump() << std::endl;
  }
}

void Projection(const fs::path& root) {
  Progress("projection: building a 10,000-message session");
  auto store = FreshStore(root / "projection");
  std::string s = Check(store->CreateSession({}), "create").id;
  Fill(*store, s, 10'000);
  for (ProviderFormat format : {ProviderFormat::kOpenAiChat, ProviderFormat::kOpenAiResponses,
                                ProviderFormat::kAnthropic}) {
    auto uncompacted = Time(5, [&] { Check(ProjectSession(*store, s, {format}), "project"); });
    std::cout << json{{"workload", "harness_projection"},
                      {"format", ProviderFormatName(format)},
                      {"messages", 10'000},
                      {"compaction", "none"},
                      {"project_ms_median", MedianMs(uncompacted)}}
                     .dump()
              << std::endl;
  }
  Check(store->Compact(s, {.from_seq = 1, .to_seq = 9'000, .summary = "The first 9,000 turns."}),
        "compact");
  for (ProviderFormat format : {ProviderFormat::kOpenAiChat, ProviderFormat::kOpenAiResponses,
                                ProviderFormat::kAnthropic}) {
    size_t bytes = 0;
    auto ns =
        Time(20, [&] { bytes = Check(ProjectSession(*store, s, {format}), "project").size(); });
    std::cout << json{{"workload", "harness_projection"},
                      {"format", ProviderFormatName(format)},
                      {"messages", 10'000},
                      {"compaction", "1..9000"},
                      {"project_ms_median", MedianMs(ns)},
                      {"request_bytes", bytes}}
                     .dump()
              << std::endl;
  }
}

void Resume(const fs::path& root) {
  constexpr int64_t kTail = 100;
  for (int64_t n : {int64_t{10'000}, int64_t{100'000}}) {
    Progress("resume: building a " + std::to_string(n) + "-event session");
    auto store = FreshStore(root / ("resume-" + std::to_string(n)));
    std::string s = Check(store->CreateSession({}), "create").id;
    Fill(*store, s, n - kTail);
    Check(store->Compact(s, {.from_seq = 1, .to_seq = n - kTail, .summary = "all before"}),
          "compact");
    Fill(*store, s, kTail - 1);
    size_t events = 0;
    auto ns = Time(20, [&] { events = Check(store->ReadForProjection(s), "resume").size(); });
    auto full_ns = Time(3, [&] { Check(store->ReadEvents(s), "read all"); });
    std::cout << json{{"workload", "harness_resume"},
                      {"history_events", n},
                      {"tail_events", kTail},
                      {"events_read", events},
                      {"resume_ms_median", MedianMs(ns)},
                      {"read_whole_log_ms_median", MedianMs(full_ns)}}
                     .dump()
              << std::endl;
  }
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = "bench-data";
  std::string workloads = "fork,projection,resume";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout
          << "Usage: sessiondb_harness_bench [--dir DIR] [--workloads fork,projection,resume]\n"
             "Prints one JSON object per line (see docs/benchmarks.md).\n";
      return 0;
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--workloads" && i + 1 < argc) {
      workloads = argv[++i];
    } else {
      std::cerr << "sessiondb_harness_bench: unknown argument '" << arg << "'; see --help\n";
      return 1;
    }
  }
  fs::create_directories(dir);
  std::stringstream list(workloads);
  for (std::string w; std::getline(list, w, ',');) {
    if (w == "fork") {
      Fork(dir);
    } else if (w == "projection") {
      Projection(dir);
    } else if (w == "resume") {
      Resume(dir);
    } else {
      std::cerr << "sessiondb_harness_bench: unknown workload '" << w << "'\n";
      return 1;
    }
  }
  // The stores are scaffolding for the timings: remove them (100k-event
  // sessions are tens of MB each).
  for (const char* made :
       {"fork-1000", "fork-10000", "fork-100000", "projection", "resume-10000", "resume-100000"}) {
    fs::remove_all(dir / made);
  }
  return 0;
}
