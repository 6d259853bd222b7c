// sessiondb_secrets_bench: what "secrets never stored" (docs/retention.md)
// costs and how often it is wrong.
//
//   false_positives  the detector over a large corpus of code and prose
//                    that holds no real secret (by default /usr/include,
//                    /usr/share/doc and /usr/share/man, gzip files read
//                    through `gzip -dc`, and this source tree): MB scanned,
//                    MB/s, findings per kind and per MB.
//   append           W1 (10,000 durable appends to one session) and the
//                    batched append (AppendBatch of 1,000, 50 batches) with
//                    redaction off and on in the same run, alternating, and
//                    the ratio on/off of their medians.
//
// Usage: sessiondb_secrets_bench [--dir DIR] [--corpus PATH]... [--rounds N]
//                                [--only false_positives|append]
// Prints one JSON object per line on stdout; progress on stderr.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/secret_scan.h"
#include "nlohmann/json.hpp"
#include "sessiondb/store.h"
#include "stats.h"
#include "workload_data.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace sessiondb::bench {
namespace {

void Progress(const std::string& line) { std::cerr << "[secrets] " << line << std::endl; }

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "sessiondb_secrets_bench: " << what << "\n";
  std::exit(1);
}

template <typename T>
T Check(Result<T> r, const std::string& what) {
  if (!r) Die(what + ": " + r.error().ToString());
  return std::move(*r);
}

std::string ReadFile(const fs::path& path) {
  if (path.extension() == ".gz") {
    std::string out;
    const std::string cmd = "gzip -dc '" + path.string() + "' 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
  }
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void FalsePositives(const std::vector<std::string>& roots) {
  Progress("false_positives: the detector over code and prose");
  int64_t bytes = 0;
  int64_t files = 0;
  int64_t scan_ns = 0;
  std::map<std::string, int64_t> per_kind;
  std::vector<json> samples;
  for (const std::string& root : roots) {
    std::error_code ec;
    if (!fs::exists(root, ec)) continue;
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         it != end; it.increment(ec)) {
      if (ec || !it->is_regular_file(ec) || it->is_symlink(ec)) continue;
      if (it->file_size(ec) > (64u << 20)) continue;
      const std::string text = ReadFile(it->path());
      const int64_t t = NowNs();
      const std::vector<SecretFinding> found = FindSecrets(text);
      scan_ns += NowNs() - t;
      bytes += static_cast<int64_t>(text.size());
      ++files;
      for (const SecretFinding& f : found) {
        ++per_kind[std::string(f.kind)];
        if (samples.size() < 40) {
          // Where, and the first characters only: enough to judge it.
          samples.push_back({{"file", it->path().string()},
                             {"offset", f.offset},
                             {"kind", f.kind},
                             {"starts", text.substr(f.offset, std::min<size_t>(f.length, 12))}});
        }
      }
    }
  }
  int64_t total = 0;
  for (const auto& [kind, n] : per_kind) total += n;
  const double mb = static_cast<double>(bytes) / 1e6;
  json out = {{"workload", "secrets"},
              {"name", "false_positives"},
              {"files", files},
              {"mb_scanned", mb},
              {"scan_mb_per_s", mb / (static_cast<double>(scan_ns) / 1e9)},
              {"findings", total},
              {"findings_per_mb", mb > 0 ? static_cast<double>(total) / mb : 0.0},
              {"findings_per_10mb", mb > 0 ? 10.0 * static_cast<double>(total) / mb : 0.0},
              {"target_per_10mb", 1.0},
              {"per_kind", per_kind},
              {"samples", samples},
              {"roots", roots}};
  std::cout << out.dump() << std::endl;
}

Message ToMessage(const WorkloadMessage& w) {
  Message m;
  m.role = w.role == "user" ? Role::kUser : Role::kAssistant;
  m.parts.push_back(Part::Text(w.text));
  return m;
}

std::unique_ptr<Store> Fresh(const fs::path& dir, bool redact) {
  fs::remove_all(dir);
  StoreOptions o;
  o.redact_secrets = redact;
  return Check(Store::Open(dir.string(), o), "opening " + dir.string());
}

// W1: the seconds of 10,000 durable appends and their per-call times.
double W1(const fs::path& dir, bool redact, const std::vector<Message>& messages,
          std::vector<int64_t>* ns) {
  auto store = Fresh(dir, redact);
  Check(store->CreateSession({.id = "w1-s0"}), "create w1-s0");
  const int64_t start = NowNs();
  for (const Message& m : messages) {
    const int64_t t = NowNs();
    Check(store->Append("w1-s0", m), "W1 append");
    ns->push_back(NowNs() - t);
  }
  return static_cast<double>(NowNs() - start) / 1e9;
}

// The batched append: 50 AppendBatch calls of 1,000 messages.
double Batched(const fs::path& dir, bool redact, const std::vector<Message>& messages) {
  auto store = Fresh(dir, redact);
  for (int s = 0; s < 10; ++s) {
    Check(store->CreateSession({.id = "b-" + std::to_string(s)}), "create");
  }
  const int64_t start = NowNs();
  for (int b = 0; b < 50; ++b) {
    std::span<const Message> batch(messages.data() + (b % 10) * 1000, 1000);
    Check(store->AppendBatch("b-" + std::to_string(b % 10), batch), "AppendBatch");
  }
  return static_cast<double>(NowNs() - start) / 1e9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Append(const fs::path& root, int rounds) {
  std::vector<Message> messages;
  for (const WorkloadMessage& w : W1Messages()) messages.push_back(ToMessage(w));
  for (const char* name : {"W1", "batched"}) {
    std::vector<double> off, on;
    std::vector<int64_t> off_ns, on_ns;
    for (int r = 0; r < rounds; ++r) {
      for (bool redact : {r % 2 == 1, r % 2 == 0}) {  // alternate which goes first
        Progress(std::string(name) + " round " + std::to_string(r + 1) + " redaction " +
                 (redact ? "on" : "off"));
        const fs::path dir = root / (redact ? "on" : "off");
        const double s = std::string(name) == "W1"
                             ? W1(dir, redact, messages, redact ? &on_ns : &off_ns)
                             : Batched(dir, redact, messages);
        (redact ? on : off).push_back(s);
      }
    }
    json out = {{"workload", "secrets"},     {"name", std::string("append_") + name},
                {"rounds", rounds},          {"seconds_off", off},
                {"seconds_on", on},          {"median_s_off", Median(off)},
                {"median_s_on", Median(on)}, {"ratio_on_off", Median(on) / Median(off)},
                {"target_ratio", 1.10}};
    if (!off_ns.empty()) {
      out["p50_us_off"] = PercentileUs(off_ns, 50);
      out["p50_us_on"] = PercentileUs(on_ns, 50);
    }
    std::cout << out.dump() << std::endl;
  }
  fs::remove_all(root / "on");
  fs::remove_all(root / "off");
}

}  // namespace
}  // namespace sessiondb::bench

int main(int argc, char** argv) {
  using namespace sessiondb::bench;
  std::string dir = "bench-data/secrets";
  std::vector<std::string> corpus;
  std::string only;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--corpus" && i + 1 < argc) {
      corpus.emplace_back(argv[++i]);
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::cerr << "usage: sessiondb_secrets_bench [--dir DIR] [--corpus PATH]... [--rounds N] "
                   "[--only false_positives|append]\n";
      return 2;
    }
  }
  if (corpus.empty()) {
    corpus = {"/usr/include", "/usr/share/doc", "/usr/share/man", SESSIONDB_SOURCE_DIR "/src"};
  }
  fs::create_directories(dir);
  if (only.empty() || only == "false_positives") FalsePositives(corpus);
  if (only.empty() || only == "append") Append(dir, rounds);
  return 0;
}
