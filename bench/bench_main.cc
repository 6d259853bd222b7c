// sessiondb_bench: the standard workloads W1-W6 (shared/bench/WORKLOADS.md)
// and the targets of the embedded-engine issue, with raw floors measured in
// the same run. One JSON object per line on stdout; progress on stderr.
//
//   sessiondb_bench [--dir DIR] [--workloads W1,W2,...|all] [--rounds N] [--regress]
//                   [--check-data]
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "blob/data_uri.h"
#include "blob/sha256.h"
#include "encryption_workload.h"
#include "floors.h"
#include "ingest_pipeline_floor.h"
#include "log_layout_floors.h"
#include "read_floor.h"
#include "retention_workload.h"
#include "rounds.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "stats.h"
#include "workload_data.h"

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kPeer = "sessiondb";
constexpr const char* kDurability = "fsync per append (SQLite WAL, synchronous=FULL)";
// The event log's layout in the store (schema v6), among the batch floor's.
constexpr const char* kStoreLogLayout = "text_key_batch_docs";

struct Expected {
  const char* name;
  const char* sha256;
};
constexpr Expected kDigests[] = {
    {"w1", "e76fc1ce1f1f05e03e790a039e8668b9729db632e95d3a6087a9b6f18b9bd95a"},
    {"w2", "8be7805d0101b06bfdeea63e03ee3a6c141ed5abe9eb7d1ab7f77fce541b2128"},
    {"w5_text", "b358677bbdee6484d6deead38f30c0806c0a601969c68a1b914c4d4b218d92b9"},
    {"w5_images", "37a68bee502b5232dd0843241b481e68803131a40787ab3d9d8841a9bfdf741f"},
    {"image0", "e1cb7a7758a6f8fe3646b6ea8d5dfba6e81b836d31c70172795f0f0954d41f59"},
};

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "sessiondb_bench: " << what << "\n";
  std::exit(1);
}

template <typename T>
T Check(Result<T> r, const std::string& what) {
  if (!r) Die(what + ": " + r.error().ToString());
  return std::move(*r);
}

void Check(const Status& status, const std::string& what) {
  if (!status.ok()) Die(what + ": " + status.ToString());
}

void Progress(const std::string& line) { std::cerr << "[bench] " << line << std::endl; }

// The round being run (1-based) when --rounds asks for more than one, else 0.
int g_round = 0;

// Every figure carries the load it was measured under, and its round.
void Emit(const json& j) {
  json out = j;
  if (!out.contains("load_1m")) out["load_1m"] = LoadAverage1m();  // the rounds' own is kept
  if (g_round > 0) out["round"] = g_round;
  std::cout << out.dump() << std::endl;
}

int64_t BytesOnDisk(const fs::path& dir) {
  int64_t total = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += static_cast<int64_t>(e.file_size());
  }
  return total;
}

fs::path FreshDir(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::unique_ptr<Store> OpenStore(const fs::path& dir,
                                 Durability durability = Durability::kDurable) {
  StoreOptions o;
  o.durability = durability;
  return Check(Store::Open(dir.string(), o), "opening " + dir.string());
}

Message ToMessage(const WorkloadMessage& w) {
  Message m;
  m.role = w.role == "user" ? Role::kUser : Role::kAssistant;
  m.parts.push_back(Part::Text(w.text));
  return m;
}

json LatencyFields(const std::vector<int64_t>& ns, double seconds) {
  return {{"n", ns.size()},
          {"seconds", seconds},
          {"ops_per_s", static_cast<double>(ns.size()) / seconds},
          {"p50_us", PercentileUs(ns, 50)},
          {"p99_us", PercentileUs(ns, 99)},
          {"median_ms", MedianMs(ns)}};
}

json Header(const char* workload, const char* name) {
  return {{"peer", kPeer}, {"workload", workload}, {"name", name}};
}

class Runner {
 public:
  explicit Runner(fs::path root) : root_(std::move(root)) {}

  bool CheckData() {
    std::map<std::string, std::string> got;
    got["w1"] = TextDigest(W1Messages());
    got["w2"] = TextDigest(W2Messages());
    got["w5_text"] = TextDigest(W5Messages());
    std::string all;
    for (int i = 0; i < kW5Images; ++i) all += W5Image(static_cast<uint32_t>(i));
    got["w5_images"] = blob::Sha256Hex(all);
    got["image0"] = blob::Sha256Hex(W5Image(0));
    bool ok = true;
    for (const Expected& e : kDigests) {
      bool match = got[e.name] == e.sha256;
      ok = ok && match;
      Emit({{"check", e.name}, {"sha256", got[e.name]}, {"matches_reference", match}});
    }
    return ok;
  }

  void W1() {
    Progress("W1 append_durable: 10,000 durable appends to one session");
    auto data = W1Messages();
    std::vector<Message> messages;
    for (const auto& w : data) messages.push_back(ToMessage(w));
    fs::path dir = FreshDir(root_ / kPeer / "w1");
    auto store = OpenStore(dir);
    Check(store->CreateSession({.id = "w1-s0"}), "create w1-s0");
    std::vector<int64_t> ns, cpu;
    int64_t start = NowNs();
    for (const Message& m : messages) {
      int64_t t = NowNs();
      int64_t c = ThreadCpuNs();
      Check(store->Append("w1-s0", m), "W1 append");
      cpu.push_back(ThreadCpuNs() - c);
      ns.push_back(NowNs() - t);
    }
    double seconds = static_cast<double>(NowNs() - start) / 1e9;
    store.reset();
    json out = Header("W1", "append_durable");
    out.update(LatencyFields(ns, seconds));
    // The appending thread's CPU per call: the engine's own cost, which the
    // disk's flush does not move.
    out["cpu_p50_us"] = PercentileUs(cpu, 50);
    out["bytes_on_disk"] = BytesOnDisk(dir);
    out["durability"] = kDurability;
    w1_p50_us_ = out["p50_us"];
    w1_p99_us_ = out["p99_us"];
    w1_done_ = true;
    Emit(out);
  }

  void W2() {
    Progress("W2 append_many_sessions: 1,000 sessions x 20 appends");
    auto data = W2Messages();
    std::vector<Message> messages;
    for (const auto& w : data) messages.push_back(ToMessage(w));
    fs::path dir = FreshDir(root_ / kPeer / "w2");
    auto store = OpenStore(dir);
    std::vector<int64_t> ns;
    std::string current;
    int64_t start = NowNs();
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i].session_id != current) {
        // Not in the per-call latencies: the peers open a session handle here.
        current = data[i].session_id;
        Check(store->CreateSession({.id = current}), "create " + current);
      }
      int64_t t = NowNs();
      Check(store->Append(current, messages[i]), "W2 append");
      ns.push_back(NowNs() - t);
    }
    double seconds = static_cast<double>(NowNs() - start) / 1e9;
    store.reset();
    json out = Header("W2", "append_many_sessions");
    out.update(LatencyFields(ns, seconds));
    out["bytes_on_disk"] = BytesOnDisk(dir);
    out["durability"] = kDurability;
    out["sessions"] = 1000;
    w2_done_ = true;
    Emit(out);
  }

  void W3() {
    if (!w1_done_) RebuildSilently([this] { W1(); });
    Progress("W3 load_session: load 10,000 messages x20");
    auto expected = W1Messages();
    fs::path dir = root_ / kPeer / "w1";
    auto store = OpenStore(dir);
    std::vector<int64_t> ns, cpu, visit_ns, visit_cpu;
    int64_t seconds_ns = 0;
    size_t loaded = 0;
    for (int i = 0; i < 20; ++i) {
      int64_t t = NowNs();
      int64_t c = ThreadCpuNs();
      auto messages = Check(store->ReadMessages("w1-s0"), "W3 load");
      cpu.push_back(ThreadCpuNs() - c);
      ns.push_back(NowNs() - t);
      seconds_ns += ns.back();
      if (i == 0) Verify(messages, expected);
      loaded = messages.size();
      // Interleaved: the same history read by VisitMessages, which builds no
      // Message for a message of one text part (issue 40's other W3 target).
      // The first round compares each view with the load while it is valid.
      t = NowNs();
      c = ThreadCpuNs();
      size_t visited = 0;
      size_t differ = 0;
      uint64_t sink = 0;
      Check(store->VisitMessages("w1-s0",
                                 [&](const MessageView& v) {
                                   sink += v.text.size() + static_cast<uint64_t>(v.role);
                                   if (i == 0 && (v.message != nullptr || visited >= loaded ||
                                                  v.text != messages[visited].Text())) {
                                     ++differ;
                                   }
                                   ++visited;
                                   return true;
                                 }),
            "W3 visit");
      visit_cpu.push_back(ThreadCpuNs() - c);
      visit_ns.push_back(NowNs() - t);
      if (visited != loaded || sink == 0 || differ > 0) {
        Die("W3 visited " + std::to_string(visited) + " messages, " + std::to_string(differ) +
            " not as loaded");
      }
    }
    double seconds = static_cast<double>(seconds_ns) / 1e9;
    store.reset();

    // The floor: the same rows of the same file stepped by SQLite alone, in
    // the same run.
    Progress("floors: the same 10,000 rows read by SQLite alone x20, then into Messages x20");
    const ReadFloor floor =
        MeasureMessageRowRead((dir / kEmbeddedDatabaseFile).string(), "w1-s0", 20);
    if (floor.rows != static_cast<int64_t>(loaded)) Die("W3 floor read a different row count");
    Emit({{"peer", "floor"},
          {"workload", "W3"},
          {"name", "sqlite_step_rows"},
          {"rows", floor.rows},
          {"median_ms", floor.median_ms},
          {"cpu_median_ms", floor.cpu_median_ms}});
    Emit({{"peer", "floor"},
          {"workload", "W3"},
          {"name", "build_messages"},
          {"rows", floor.rows},
          {"median_ms", floor.build_median_ms},
          {"cpu_median_ms", floor.build_cpu_median_ms}});

    json out = Header("W3", "load_session");
    out.update(LatencyFields(ns, seconds));
    out["bytes_on_disk"] = BytesOnDisk(dir);
    out["messages"] = loaded;
    // The figure beside the floor of the same run.
    out["floor_sqlite_step_median_ms"] = floor.median_ms;
    out["over_sqlite_step_floor"] = out["median_ms"].get<double>() / floor.median_ms;
    // What the public Message costs to build from those rows, and CPU time,
    // which waits for a core on a loaded machine do not inflate.
    out["floor_build_messages_median_ms"] = floor.build_median_ms;
    out["cpu_median_ms"] = MedianMs(cpu);
    out["floor_sqlite_step_cpu_median_ms"] = floor.cpu_median_ms;
    out["floor_build_messages_cpu_median_ms"] = floor.build_cpu_median_ms;
    // VisitMessages, timed beside the loads: what an application that
    // replays a history without keeping Messages pays.
    out["visit_median_ms"] = MedianMs(visit_ns);
    out["visit_cpu_median_ms"] = MedianMs(visit_cpu);
    out["visit_over_build_messages_floor"] = MedianMs(visit_ns) / floor.build_median_ms;
    out["visit_over_sqlite_step_floor"] = MedianMs(visit_ns) / floor.median_ms;
    w3_median_ms_ = out["median_ms"];
    w3_visit_median_ms_ = MedianMs(visit_ns);
    w3_build_floor_ms_ = floor.build_median_ms;
    Emit(out);
  }

  void W4() {
    if (!w2_done_) RebuildSilently([this] { W2(); });
    Progress("W4 list_sessions: first 50 of 1,000 sessions x20");
    fs::path dir = root_ / kPeer / "w2";
    auto store = OpenStore(dir);
    auto [ns, seconds, returned] = TimeList(*store, 50, 20);
    if (returned != 50) Die("W4 returned " + std::to_string(returned) + " sessions, expected 50");
    store.reset();
    json out = Header("W4", "list_sessions");
    out.update(LatencyFields(ns, seconds));
    out["bytes_on_disk"] = BytesOnDisk(dir);
    out["returned"] = returned;
    Emit(out);
  }

  void W5() {
    Progress("W5 images: 200 appends of text + a 1 MiB PNG data URI, then reload");
    auto texts = W5Messages();
    if (w5_uris_.empty()) {  // made once for every round: it takes longer than W5
      for (int i = 0; i < kW5Images; ++i) {
        w5_images_.push_back(W5Image(static_cast<uint32_t>(i)));
        w5_uris_.push_back(blob::MakeDataUri("image/png", w5_images_.back()));
      }
    }
    const std::vector<std::string>& uris = w5_uris_;
    fs::path dir = FreshDir(root_ / kPeer / "w5");
    auto store = OpenStore(dir);
    Check(store->CreateSession({.id = "w5-s0"}), "create w5-s0");
    std::vector<Message> messages;
    for (int i = 0; i < kW5Images; ++i) {
      Message m = ToMessage(texts[static_cast<size_t>(i)]);
      m.parts.push_back(Part::ImageFromDataUri(uris[static_cast<size_t>(i)]));
      messages.push_back(std::move(m));
    }
    std::vector<int64_t> ns;
    int64_t start = NowNs();
    const int64_t cpu_start = ProcessCpuNs();
    for (const Message& m : messages) {
      int64_t t = NowNs();
      Check(store->Append("w5-s0", m), "W5 append");
      ns.push_back(NowNs() - t);
    }
    double seconds = static_cast<double>(NowNs() - start) / 1e9;
    // Every thread's: the blob writers work beside the appending one.
    const double cpu_seconds = static_cast<double>(ProcessCpuNs() - cpu_start) / 1e9;
    store.reset();

    // Reopen and load once, re-inlining every image as the peers do.
    int64_t read_start = NowNs();
    store = OpenStore(dir);
    auto loaded = Check(store->ReadMessages("w5-s0"), "W5 load");
    std::vector<std::string> loaded_uris;
    for (const Message& m : loaded) {
      for (const Part& p : m.parts) {
        if (p.type == PartType::kImage)
          loaded_uris.push_back(Check(store->ReadDataUri(*p.resource), "W5 data URI"));
      }
    }
    double read_seconds = static_cast<double>(NowNs() - read_start) / 1e9;
    if (loaded.size() != texts.size() || loaded_uris != uris)
      Die("W5 read back differs from what was written");
    for (size_t i = 0; i < loaded.size(); ++i) {
      if (loaded[i].Text() != texts[i].text) Die("W5 text " + std::to_string(i) + " differs");
    }
    store.reset();

    const double mib = static_cast<double>(kW5Images) * kW5ImageBytes / (1024.0 * 1024.0);
    json out = Header("W5", "images");
    out.update(LatencyFields(ns, seconds));
    out["bytes_on_disk"] = BytesOnDisk(dir);
    out["durability"] = kDurability;
    out["write_MiBps"] = mib / seconds;
    out["cpu_seconds"] = cpu_seconds;
    out["read_seconds"] = read_seconds;
    out["read_MiBps"] = mib / read_seconds;
    out["raw_image_bytes"] = static_cast<int64_t>(kW5Images) * static_cast<int64_t>(kW5ImageBytes);
    out["disk_over_raw"] = static_cast<double>(out["bytes_on_disk"].get<int64_t>()) /
                           static_cast<double>(out["raw_image_bytes"].get<int64_t>());
    w5_write_MiBps_ = out["write_MiBps"];
    w5_disk_over_raw_ = out["disk_over_raw"];
    Emit(out);

    // Not a workload of WORKLOADS.md: the same 200 images, four to a message,
    // whose blobs are written and synced together (FileBlobStore::PutAll).
    Progress("W5 variant: the same 200 images in 50 appends of four");
    fs::path dir4 = FreshDir(root_ / kPeer / "w5x4");
    store = OpenStore(dir4);
    Check(store->CreateSession({.id = "w5-s0"}), "create w5-s0");
    std::vector<Message> grouped;
    for (int i = 0; i < kW5Images; i += 4) {
      Message m = ToMessage(texts[static_cast<size_t>(i)]);
      for (int k = i; k < i + 4; ++k) {
        m.parts.push_back(Part::ImageFromDataUri(uris[static_cast<size_t>(k)]));
      }
      grouped.push_back(std::move(m));
    }
    std::vector<int64_t> ns4;
    start = NowNs();
    for (const Message& m : grouped) {
      int64_t t = NowNs();
      Check(store->Append("w5-s0", m), "W5 x4 append");
      ns4.push_back(NowNs() - t);
    }
    const double seconds4 = static_cast<double>(NowNs() - start) / 1e9;
    store.reset();
    json out4 = Header("W5x4", "images_four_per_message");
    out4.update(LatencyFields(ns4, seconds4));
    out4["write_MiBps"] = mib / seconds4;
    out4["bytes_on_disk"] = BytesOnDisk(dir4);

    Progress("floor: base64 decode + SHA-256 of the same 200 data URIs");
    hash_decode_MiBps_ = MeasureHashDecodeMiBps(uris);
    Emit({{"peer", "floor"},
          {"workload", "sha256_base64_decode"},
          {"name", "sha256_base64_decode"},
          {"n", kW5Images},
          {"MiBps", hash_decode_MiBps_}});
    // The disk's share: what writing the same bytes durably, one per commit,
    // costs with nothing else around it (the hash+decode floor is CPU only).
    const std::vector<std::string>& images = w5_images_;
    Progress("floor: 200 x (1 MiB file + fdatasync + 4 KiB log fdatasync)");
    const DurableWriteFloor plain = MeasureDurableBlobWrites(root_.string(), images, false);
    Progress("floor: the same with a temp file renamed into place + directory fsync");
    const DurableWriteFloor renamed = MeasureDurableBlobWrites(root_.string(), images, true);
    auto emit_floor = [](const char* name, const DurableWriteFloor& f) {
      Emit({{"peer", "floor"},
            {"workload", name},
            {"name", name},
            {"n", f.latency.n},
            {"MiBps", f.mib_per_s},
            {"p50_us", f.latency.p50_us},
            {"p99_us", f.latency.p99_us}});
    };
    Progress("floor: the same rule's I/O overlapped with decoding and hashing the URIs");
    const DurableWriteFloor pipelined = MeasurePipelinedImageIngest(root_.string(), uris);
    emit_floor("durable_blob_write", plain);
    emit_floor("durable_blob_write_rename", renamed);
    emit_floor("pipelined_image_ingest", pipelined);

    // Each figure beside the floors of the same run.
    auto ratios = [&](json& out, double mibps) {
      out["over_hash_decode_floor"] = mibps / hash_decode_MiBps_;
      out["over_durable_write_floor"] = mibps / plain.mib_per_s;
      out["over_durable_write_rename_floor"] = mibps / renamed.mib_per_s;
      out["over_pipelined_ingest_floor"] = mibps / pipelined.mib_per_s;
    };
    ratios(out4, out4["write_MiBps"].get<double>());
    Emit(out4);
    json ingest = {{"peer", kPeer},
                   {"workload", "W5"},
                   {"name", "image_ingest_over_floor"},
                   {"write_MiBps", w5_write_MiBps_},
                   {"floor_MiBps", hash_decode_MiBps_},
                   {"durable_write_floor_MiBps", plain.mib_per_s},
                   {"durable_write_rename_floor_MiBps", renamed.mib_per_s},
                   {"pipelined_ingest_floor_MiBps", pipelined.mib_per_s}};
    ratios(ingest, w5_write_MiBps_);
    // The durability rule's own I/O (blob synced, renamed, its folder synced,
    // then a commit's sync) with no CPU work at all, over the CPU floor: the
    // most W5's ratio could be on this disk in this run.
    w5_rename_floor_MiBps_ = renamed.mib_per_s;
    ingest["io_floor_over_hash_decode_floor"] = renamed.mib_per_s / hash_decode_MiBps_;
    // The same I/O with the CPU work overlapped as two threads can, nothing
    // else: the ratio's ceiling for any engine keeping the rule here.
    w5_pipelined_floor_MiBps_ = pipelined.mib_per_s;
    ingest["pipelined_floor_over_hash_decode_floor"] = pipelined.mib_per_s / hash_decode_MiBps_;
    W5Interleaved(messages, uris, &ingest);
    Emit(ingest);
  }

  // The same 200 appends alternated image by image with the pipelined floor
  // (which of the two goes first alternating too), into a fresh store and a
  // fresh floor scene: W5's ratio as above compares runs a minute apart, the
  // floor's after 800 MiB more of writes, on a disk whose fdatasync moves
  // fourfold from minute to minute; here each image meets the same disk
  // twice within milliseconds. Sets `interleaved_over_pipelined_floor`: the
  // floor's time over the engine's, both summed over the 200 images.
  void W5Interleaved(const std::vector<Message>& messages, const std::vector<std::string>& uris,
                     json* ingest) {
    Progress("W5 interleaved: each append beside the pipelined floor's same image");
    const fs::path dir = FreshDir(root_ / kPeer / "w5i");
    auto store = OpenStore(dir);
    Check(store->CreateSession({.id = "w5-s0"}), "create w5-s0");
    const fs::path floor_dir = FreshDir(root_ / "w5i-floor");
    PipelinedIngestFloor floor(floor_dir.string(), uris.size());
    int64_t engine_ns = 0, floor_ns = 0;
    for (size_t i = 0; i < messages.size(); ++i) {
      auto append = [&] {
        const int64_t t = NowNs();
        Check(store->Append("w5-s0", messages[i]), "W5 interleaved append");
        engine_ns += NowNs() - t;
      };
      if (i % 2 == 0) append();
      floor_ns += floor.Ingest(uris[i]);
      if (i % 2 == 1) append();
    }
    floor.CheckStored();
    store.reset();
    (*ingest)["interleaved_engine_ms"] = static_cast<double>(engine_ns) / 1e6;
    (*ingest)["interleaved_floor_ms"] = static_cast<double>(floor_ns) / 1e6;
    w5_interleaved_ratio_ = static_cast<double>(floor_ns) / static_cast<double>(engine_ns);
    (*ingest)["interleaved_over_pipelined_floor"] = w5_interleaved_ratio_;
  }

  // W6: "token limit" over the W2 store. ac-dc matches a case-insensitive
  // substring; sessiondb's full-text search matches words, so the phrase
  // query "token limit" is the closest (it does not match "tokens limit" or
  // "token limits"). Both hit counts are reported.
  void W6() {
    if (!w2_done_) RebuildSilently([this] { W2(); });
    Progress("W6 search: \"token limit\" over the W2 store x20");
    int64_t substring_hits = 0;
    for (const auto& w : W2Messages()) {
      std::string lower = w.text;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find("token limit") != std::string::npos) ++substring_hits;
    }
    fs::path dir = root_ / kPeer / "w2";
    SearchOptions options;
    options.embedder.from_environment = false;
    auto index = Check(SearchIndex::Open(dir.string(), options), "W6 open");
    const SearchRequest request{
        .query = "\"token limit\"", .mode = SearchMode::kKeyword, .limit = 1000};
    std::vector<int64_t> ns;
    int64_t start = NowNs();
    size_t hits = 0;
    for (int i = 0; i < 20; ++i) {
      int64_t t = NowNs();
      auto results = Check(index->Search(request), "W6 search");
      ns.push_back(NowNs() - t);
      hits = results.hits.size();
    }
    double seconds = static_cast<double>(NowNs() - start) / 1e9;
    index.reset();
    json out = Header("W6", "search");
    out.update(LatencyFields(ns, seconds));
    out["bytes_on_disk"] = BytesOnDisk(dir);
    out["query"] = "token limit";
    out["hits"] = hits;
    out["matches"] = "the phrase \"token limit\" as words (FTS5, BM25-ranked, snippets)";
    out["substring_hits"] = substring_hits;
    w6_median_ms_ = out["median_ms"];
    Emit(out);
  }

  void BatchImport() {
    Progress("batch_import: 200,000 messages via AppendBatch (1,000 per batch, 100 sessions)");
    auto data = W1Messages();
    std::vector<std::vector<Message>> batches;
    for (int b = 0; b < 200; ++b) {
      std::vector<Message> one;
      for (int i = 0; i < 1000; ++i)
        one.push_back(ToMessage(data[static_cast<size_t>((b * 1000 + i) % 10000)]));
      batches.push_back(std::move(one));
    }
    fs::path dir = FreshDir(root_ / kPeer / "batch");
    auto store = OpenStore(dir);
    for (int s = 0; s < 100; ++s)
      Check(store->CreateSession({.id = "import-" + std::to_string(s)}), "create");
    std::vector<int64_t> ns;
    int64_t start = NowNs();
    const int64_t cpu_start = ProcessCpuNs();
    for (int b = 0; b < 200; ++b) {
      int64_t t = NowNs();
      Check(
          store->AppendBatch("import-" + std::to_string(b % 100), batches[static_cast<size_t>(b)]),
          "AppendBatch");
      ns.push_back(NowNs() - t);
    }
    double seconds = static_cast<double>(NowNs() - start) / 1e9;
    const double cpu_seconds = static_cast<double>(ProcessCpuNs() - cpu_start) / 1e9;
    // The index follows the log: the appends above only recorded their
    // documents. Catching the full-text index up is the rest of the work
    // before all 200,000 are searchable.
    SearchOptions search_options;
    search_options.embedder.from_environment = false;
    auto index = Check(SearchIndex::Open(*store, search_options), "batch index open");
    const int64_t index_start = NowNs();
    const int64_t left = Check(index->IndexPending(), "batch index catch-up");
    const double index_seconds = static_cast<double>(NowNs() - index_start) / 1e9;
    if (left != 0) Die("batch_import: the index did not catch up");
    auto found =
        Check(index->Search(
                  {.query = "the", .mode = SearchMode::kKeyword, .limit = 1, .catch_up_limit = 0}),
              "batch search");
    index.reset();
    store.reset();
    json out = Header("batch_import", "append_batch_durable");
    out["index_catch_up_seconds"] = index_seconds;
    out["index_catch_up_over_append"] = index_seconds / seconds;
    out["searchable_ops_per_s"] = 200000.0 / (seconds + index_seconds);
    out["keyword_matches_after"] = found.keyword_matches;
    out["n"] = 200000;
    out["batches"] = 200;
    out["seconds"] = seconds;
    out["cpu_seconds"] = cpu_seconds;
    out["ops_per_s"] = 200000.0 / seconds;
    out["batch_p50_us"] = PercentileUs(ns, 50);
    out["bytes_on_disk"] = BytesOnDisk(dir);
    out["durability"] = "fsync per batch";
    batch_ops_per_s_ = out["ops_per_s"];
    batch_index_over_append_ = out["index_catch_up_over_append"];
    Emit(out);
    fs::remove_all(dir);

    // The same 200,000 texts, 1,000 per durable transaction, with SQLite
    // alone, in each layout the log could have (log_layout_floors.h).
    Progress("floor: the same rows with SQLite alone, per event-log layout");
    std::vector<std::string> texts;
    texts.reserve(200000);
    for (int i = 0; i < 200000; ++i) texts.push_back(data[static_cast<size_t>(i % 10000)].text);
    fs::path floor_dir = FreshDir(root_ / "floor" / "log_layouts");
    // Regression runs measure the layout the store has, not the others.
    const std::string only = same_layout_floor_only_ ? kStoreLogLayout : "";
    for (const LogLayoutFloor& f : MeasureLogLayouts(floor_dir.string(), texts, 1000, only)) {
      if (f.layout == kStoreLogLayout) batch_same_layout_ops_per_s_ = f.rows_per_s;
      Emit({{"peer", "floor"},
            {"workload", "batch_import"},
            {"name", "sqlite_rows_" + f.layout},
            {"n", 200000},
            {"ops_per_s", f.rows_per_s},
            {"over_sessiondb", f.rows_per_s / batch_ops_per_s_}});
    }
    fs::remove_all(floor_dir);
    BatchInterleaved(batches, texts);
  }

  // The same 200 batches alternated batch by batch with SQLite alone writing
  // them in the store's own layout (which of the two goes first alternating
  // too), into a fresh store and a fresh floor database: the ratio above
  // compares runs seconds apart on a disk whose flush moves from minute to
  // minute; here each batch meets the same disk twice within milliseconds.
  // Emits `batch_interleaved`: the floor's time over the engine's, both
  // summed over the 200 batches.
  void BatchInterleaved(const std::vector<std::vector<Message>>& batches,
                        const std::vector<std::string>& texts) {
    Progress("batch_import interleaved: each batch beside SQLite alone writing the same rows");
    const fs::path dir = FreshDir(root_ / kPeer / "batch-interleaved");
    auto store = OpenStore(dir);
    for (int s = 0; s < 100; ++s)
      Check(store->CreateSession({.id = "import-" + std::to_string(s)}), "create");
    const fs::path floor_dir = FreshDir(root_ / "floor" / "batch-interleaved");
    LogLayoutWriter floor((floor_dir / "log_layout.db").string(), kStoreLogLayout, texts, 1000);
    int64_t engine_ns = 0, floor_ns = 0;
    for (int b = 0; b < floor.batches(); ++b) {
      auto append = [&] {
        const int64_t t = NowNs();
        Check(store->AppendBatch("import-" + std::to_string(b % 100),
                                 batches[static_cast<size_t>(b)]),
              "AppendBatch interleaved");
        engine_ns += NowNs() - t;
      };
      if (b % 2 == 0) append();
      floor_ns += floor.WriteBatch(b);
      if (b % 2 == 1) append();
    }
    store.reset();
    fs::remove_all(dir);
    batch_interleaved_ratio_ = static_cast<double>(floor_ns) / static_cast<double>(engine_ns);
    Emit({{"peer", kPeer},
          {"workload", "batch_import"},
          {"name", "batch_interleaved"},
          {"n", 200000},
          {"engine_seconds", static_cast<double>(engine_ns) / 1e9},
          {"floor_seconds", static_cast<double>(floor_ns) / 1e9},
          {"over_sqlite_same_layout", batch_interleaved_ratio_}});
  }

  void List100k() {
    Progress("list_100k: first page of 100,000 sessions (setup takes a while)");
    fs::path dir = FreshDir(root_ / kPeer / "list100k");
    {
      auto store = OpenStore(dir, Durability::kProcessCrashSafe);
      Message m;
      m.parts.push_back(Part::Text("hello"));
      for (int s = 0; s < 100000; ++s) {
        std::string id = "l-" + std::to_string(s);
        Check(store->CreateSession({.id = id}), "create");
        Check(store->Append(id, m), "append");
        if (s % 20000 == 0) Progress("  " + std::to_string(s) + " sessions");
      }
    }
    auto store = OpenStore(dir);
    auto [ns, seconds, returned] = TimeList(*store, 50, 20);
    json out = Header("list_100k", "list_first_page_of_100k");
    out.update(LatencyFields(ns, seconds));
    out["sessions"] = 100000;
    out["returned"] = returned;
    list_median_ms_ = out["median_ms"];
    store.reset();
    Emit(out);
    fs::remove_all(dir);
  }

  void Floors() {
    Progress("floor: 1,000 x (4 KiB pwrite + fdatasync) on the same disk");
    LatencyFloor f = MeasureFdatasync4k((root_).string(), 1000);
    fdatasync_p50_us_ = f.p50_us;
    fdatasync_p99_us_ = f.p99_us;
    Emit({{"peer", "floor"},
          {"workload", "fdatasync_4k"},
          {"name", "fdatasync_4k"},
          {"n", f.n},
          {"p50_us", f.p50_us},
          {"p99_us", f.p99_us},
          {"median_ms", f.median_ms}});

    // Not the issue's floor, but the fairer one for a WAL that is recycled:
    // reported beside it so a ratio can be read both ways.
    Progress("floor: the same into a preallocated file (overwrites, no file growth)");
    LatencyFloor o = MeasureFdatasync4k((root_).string(), 1000, /*preallocated=*/true);
    fdatasync_overwrite_p50_us_ = o.p50_us;
    Emit({{"peer", "floor"},
          {"workload", "fdatasync_4k_overwrite"},
          {"name", "fdatasync_4k_overwrite"},
          {"n", o.n},
          {"p50_us", o.p50_us},
          {"p99_us", o.p99_us},
          {"median_ms", o.median_ms}});
  }

  // The round's figures, each target as {"value", "target", "met"}; emitted
  // and returned.
  json Summary() {
    json s = {{"peer", kPeer}, {"workload", "summary"}};
    auto target = [&](const char* name, double value, double limit, bool at_least) {
      if (value <= 0) return;
      s[name] = {{"value", value},
                 {"target", limit},
                 {"at_least", at_least},
                 {"met", at_least ? value >= limit : value <= limit}};
    };
    auto figure = [&](const char* name, double value) {
      if (value > 0) s[name] = value;
    };
    // What the machine and the disk did this round: every ratio below moves
    // with them.
    figure("load_1m", LoadAverage1m());
    figure("fdatasync_p50_us", fdatasync_p50_us_);
    figure("fdatasync_p99_us", fdatasync_p99_us_);
    if (w1_p50_us_ > 0 && fdatasync_p50_us_ > 0) {
      target("w1_p50_over_fdatasync_p50", w1_p50_us_ / fdatasync_p50_us_, 1.5, false);
      target("w1_p99_over_fdatasync_p99", w1_p99_us_ / fdatasync_p99_us_, 3, false);
    }
    if (w1_p50_us_ > 0 && fdatasync_overwrite_p50_us_ > 0) {
      s["w1_p50_over_fdatasync_overwrite_p50"] = w1_p50_us_ / fdatasync_overwrite_p50_us_;
    }
    figure("batch_import_ops_per_s", batch_ops_per_s_);
    // Batch by batch beside SQLite alone (BatchInterleaved): the target. The
    // ratio of the two runs one after the other is kept as a figure: on
    // 2026-12-08 it went from 0.79 to 1.04 where the interleaved one held
    // 0.90-0.95.
    target("batch_interleaved_over_sqlite_same_layout", batch_interleaved_ratio_, 0.95, true);
    if (batch_ops_per_s_ > 0 && batch_same_layout_ops_per_s_ > 0) {
      figure("batch_over_sqlite_same_layout", batch_ops_per_s_ / batch_same_layout_ops_per_s_);
    }
    target("batch_index_catch_up_over_append", batch_index_over_append_, 1.5, false);
    target("w3_median_ms", w3_median_ms_, 5, false);
    if (w3_median_ms_ > 0 && w3_build_floor_ms_ > 0) {
      // Issue 40's alternative (1.1x) asks for a read that builds no Message;
      // ReadMessages builds them, so this one is a figure, not that target.
      figure("w3_over_build_messages_floor", w3_median_ms_ / w3_build_floor_ms_);
    }
    // Issue 40: W3 within 5 ms, or within 1.1x the build floor with a read
    // that builds no Message: VisitMessages is that read.
    target("w3_visit_median_ms", w3_visit_median_ms_, 5, false);
    if (w3_visit_median_ms_ > 0 && w3_build_floor_ms_ > 0) {
      target("w3_visit_over_build_messages_floor", w3_visit_median_ms_ / w3_build_floor_ms_, 1.1,
             false);
    }
    target("list_100k_median_ms", list_median_ms_, 2, false);
    // The least an engine keeping the durability rule spends on W5, on this
    // disk (issue 40), image by image beside the engine: the target. Over the
    // rounds of 2026-12-08 the same ratio of runs a minute apart went from
    // 0.58 to 1.41, the interleaved one from 0.69 to 1.00 (W5Interleaved).
    target("w5_interleaved_over_pipelined_floor", w5_interleaved_ratio_, 0.9, true);
    if (w5_write_MiBps_ > 0 && w5_pipelined_floor_MiBps_ > 0) {
      // The hash+decode floor, once the target, measures the disk more than
      // the engine.
      figure("w5_over_pipelined_ingest_floor", w5_write_MiBps_ / w5_pipelined_floor_MiBps_);
      figure("w5_over_hash_decode_floor", w5_write_MiBps_ / hash_decode_MiBps_);
      figure("w5_io_floor_over_hash_decode_floor", w5_rename_floor_MiBps_ / hash_decode_MiBps_);
      figure("w5_pipelined_floor_over_hash_decode_floor",
             w5_pipelined_floor_MiBps_ / hash_decode_MiBps_);
    }
    target("w5_disk_over_raw", w5_disk_over_raw_, 1.01, false);
    figure("w6_median_ms", w6_median_ms_);
    Emit(s);
    return s;
  }

  // Regression runs measure only the floor a bound reads.
  void set_same_layout_floor_only(bool only) { same_layout_floor_only_ = only; }

 private:
  void Verify(const std::vector<Message>& got, const std::vector<WorkloadMessage>& want) {
    if (got.size() != want.size()) Die("W3 loaded " + std::to_string(got.size()) + " messages");
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i].Text() != want[i].text || RoleName(got[i].role) != want[i].role) {
        Die("W3 message " + std::to_string(i) + " differs from W1");
      }
    }
  }

  void RebuildSilently(const std::function<void()>& build) {
    std::stringstream sink;
    auto* old = std::cout.rdbuf(sink.rdbuf());
    build();
    std::cout.rdbuf(old);
  }

  std::tuple<std::vector<int64_t>, double, size_t> TimeList(Store& store, int limit, int repeats) {
    std::vector<int64_t> ns;
    size_t returned = 0;
    int64_t start = NowNs();
    for (int i = 0; i < repeats; ++i) {
      int64_t t = NowNs();
      auto page = Check(store.ListSessions({.limit = limit}), "list");
      ns.push_back(NowNs() - t);
      returned = page.sessions.size();
    }
    return {ns, static_cast<double>(NowNs() - start) / 1e9, returned};
  }

  fs::path root_;
  bool same_layout_floor_only_ = false;
  std::vector<std::string> w5_images_, w5_uris_;
  bool w1_done_ = false, w2_done_ = false;
  double w1_p50_us_ = 0, w1_p99_us_ = 0, fdatasync_p50_us_ = 0, fdatasync_p99_us_ = 0;
  double batch_ops_per_s_ = 0, batch_same_layout_ops_per_s_ = 0, batch_interleaved_ratio_ = 0;
  double w3_median_ms_ = 0, w3_build_floor_ms_ = 0, w3_visit_median_ms_ = 0;
  double batch_index_over_append_ = 0;
  double w6_median_ms_ = 0;
  double fdatasync_overwrite_p50_us_ = 0;
  double list_median_ms_ = 0, w5_write_MiBps_ = 0, w5_disk_over_raw_ = 0, hash_decode_MiBps_ = 0;
  double w5_rename_floor_MiBps_ = 0, w5_pipelined_floor_MiBps_ = 0, w5_interleaved_ratio_ = 0;
};

constexpr const char* kUsage = R"(sessiondb_bench: standard workloads and targets of sessiondb

Usage: sessiondb_bench [--dir DIR] [--workloads LIST] [--rounds N] [--regress]
                       [--check-data] [--retain-sessions N]

  --dir DIR         where stores are created (default ./bench-data); the same disk
                    is used for the fdatasync floor
  --workloads LIST  comma-separated: W1,W2,W3,W4,W5,W6,batch_import,list_100k,floors,
                    retain (a retention run erasing 10,000 of 100,000 sessions
                    beside DeleteSession of the same 10,000; not in "all"),
                    encryption (W1, W3, W5, batched append, keyword search at
                    100,000 and the hook, plaintext against encrypted in the
                    same run, interleaved; not in "all"),
                    or "all" (default)
  --rounds N        run the workloads N times (default 1), each round measuring
                    its floors again beside its figures, so engine and floor
                    alternate; then print each figure's median, range and the
                    rounds that met its target ({"workload":"rounds"})
  --regress         the CI's regression check: W1, W3, W5, the batched append
                    and their floors (only the store's own log layout), 3
                    rounds unless --rounds says otherwise; exit 1 when a
                    median ratio is past its bound (bench/rounds.cc)
  --retain-sessions N  sessions of the retain workload (default 100000; a tenth erased)
  --check-data      print the digests of the generated data, compare them with the
                    reference values of WORKLOADS.md, exit 1 on a mismatch

Prints one JSON object per line on stdout (see docs/benchmarks.md); progress on stderr.
)";

}  // namespace
}  // namespace sessiondb::bench

int main(int argc, char** argv) {
  using namespace sessiondb::bench;
  std::string dir = "bench-data";
  std::string workloads = "all";
  bool check_data = false;
  bool regress = false;
  int rounds = 0;
  int64_t retain_sessions = 100000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (arg == "--workloads" && i + 1 < argc) {
      workloads = argv[++i];
    } else if (arg == "--retain-sessions" && i + 1 < argc) {
      retain_sessions = std::max<int64_t>(10, std::atoll(argv[++i]));
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      if (rounds < 1 || rounds > 100) {
        std::cerr << "sessiondb_bench: --rounds takes 1 to 100\n";
        return 2;
      }
    } else if (arg == "--regress") {
      regress = true;
    } else if (arg == "--check-data") {
      check_data = true;
    } else {
      std::cerr << "sessiondb_bench: unknown argument '" << arg << "'\n" << kUsage;
      return 2;
    }
  }
  if (regress) workloads = "floors,W1,W3,W5,batch_import";
  if (rounds == 0) rounds = regress ? 3 : 1;
  std::filesystem::create_directories(dir);
  Runner runner(dir);
  runner.set_same_layout_floor_only(regress);
  if (check_data) return runner.CheckData() ? 0 : 1;

  std::set<std::string> selected;
  std::stringstream list(workloads);
  for (std::string item; std::getline(list, item, ',');) selected.insert(item);
  const bool all = selected.contains("all");
  auto want = [&](const char* name) { return all || selected.contains(name); };
  static const std::set<std::string> kKnown = {"all",       "W1",     "W2",     "W3",
                                               "W4",        "W5",     "W6",     "batch_import",
                                               "list_100k", "floors", "retain", "encryption"};
  for (const auto& item : selected) {
    if (!kKnown.contains(item)) {
      std::cerr << "sessiondb_bench: unknown workload '" << item << "'\n" << kUsage;
      return 2;
    }
  }
  std::vector<nlohmann::json> summaries;
  for (int round = 1; round <= rounds; ++round) {
    if (rounds > 1) {
      g_round = round;
      std::cerr << "[bench] round " << round << " of " << rounds << std::endl;
    }
    if (want("floors") || want("W1")) runner.Floors();
    if (want("W1")) runner.W1();
    if (want("W2")) runner.W2();
    if (want("W3")) runner.W3();
    if (want("W4")) runner.W4();
    if (want("W5")) runner.W5();
    if (want("W6")) runner.W6();
    if (want("batch_import")) runner.BatchImport();
    if (want("list_100k")) runner.List100k();
    if (selected.contains("encryption")) {
      sessiondb::bench::RunEncryptionWorkload(dir, SESSIONDB_CLI_PATH);
    }
    if (selected.contains("retain")) {
      sessiondb::bench::RunRetentionWorkload(dir, retain_sessions, retain_sessions / 10);
    }
    summaries.push_back(runner.Summary());
  }
  g_round = 0;
  if (rounds == 1 && !regress) return 0;
  const nlohmann::json summary = SummariseRounds(summaries);
  Emit(summary);
  if (!regress) return 0;
  const std::vector<std::string> misses = CheckRegressionBounds(summary);
  for (const std::string& miss : misses)
    std::cerr << "sessiondb_bench: regression: " << miss << "\n";
  if (!misses.empty()) return 1;
  std::cerr << "sessiondb_bench: every ratio within its bound over " << rounds << " rounds\n";
  return 0;
}
