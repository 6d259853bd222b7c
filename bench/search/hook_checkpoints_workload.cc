#include "hook_checkpoints_workload.h"

#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include "blob/sha256.h"
#include "sessiondb/store.h"
#include "stats.h"

namespace sessiondb::bench {
// Named, not anonymous: the bench is a unity build, and its other files
// have helpers of these names.
namespace checkpoint_workload {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr int kFiles = 50;
constexpr size_t kFileBytes = 8 * 1024;
constexpr char kAgent[] = "bench-checkpoints";

[[noreturn]] void Fail(const std::string& what) {
  std::cerr << "checkpoint bench: " << what << "\n";
  std::exit(1);
}

// A source file of about kFileBytes, its lines numbered from `salt`.
std::string SourceFile(int salt) {
  std::string text;
  for (int n = 0; text.size() < kFileBytes; ++n) {
    text += "def handler_" + std::to_string(salt) + "_" + std::to_string(n) +
            "(request):\n    return render(request, status=" + std::to_string(200 + n) + ")\n";
  }
  return text;
}

// `text` with its line `line` (mod the line count) replaced by `with`.
std::string ReplaceLine(const std::string& text, size_t line, const std::string& with) {
  std::vector<size_t> starts = {0};
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  const size_t at = starts[line % starts.size()];
  const size_t end = text.find('\n', at);
  return text.substr(0, at) + with + (end == std::string::npos ? "" : text.substr(end));
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) Fail("cannot write " + path.string());
}

double P50Ms(const std::vector<ProcessCost>& runs, int64_t ProcessCost::*field) {
  std::vector<int64_t> ns;
  for (const ProcessCost& r : runs) ns.push_back(r.*field);
  return PercentileUs(ns, 50) / 1000.0;
}

std::string Event(const std::string& name, const std::string& tool, const std::string& call,
                  const fs::path& cwd, const json& input) {
  json e = {{"session_id", kAgent}, {"transcript_path", (cwd / "transcript.jsonl").string()},
            {"cwd", cwd.string()},  {"hook_event_name", name},
            {"tool_name", tool},    {"tool_input", input},
            {"tool_use_id", call}};
  if (name == "PostToolUse") e["tool_response"] = {{"stdout", ""}, {"stderr", ""}};
  return e.dump();
}

}  // namespace checkpoint_workload

std::vector<nlohmann::json> MeasureCheckpointHook(const CheckpointHookBench& bench,
                                                  const ProcessRunner& run) {
  using namespace checkpoint_workload;  // NOLINT(google-build-using-namespace)
  const fs::path project = bench.dir / "checkpoint-project";
  fs::remove_all(project);
  fs::create_directories(project);
  std::vector<std::string> texts;
  std::vector<fs::path> paths;
  for (int f = 0; f < kFiles; ++f) {
    texts.push_back(SourceFile(f));
    paths.push_back(project / ("module_" + std::to_string(f) + ".py"));
    WriteText(paths.back(), texts.back());
  }
  // The session has seen every file: the shell check reads all 50.
  {
    StoreOptions options;
    options.durability = Durability::kProcessCrashSafe;
    auto store = Store::Open(bench.store, options);
    if (!store) Fail("open " + bench.store + ": " + store.error().message());
    for (int f = 0; f < kFiles; ++f) {
      FileVersion v{.agent_session = kAgent,
                    .tool_use_id = "seed-" + std::to_string(f),
                    .file_path = paths[static_cast<size_t>(f)].string(),
                    .phase = FileVersionPhase::kAfter,
                    .tool = "Write",
                    .source = "hook",
                    .project = project.string()};
      auto kept = (*store)->RecordFileVersion(v, texts[static_cast<size_t>(f)]);
      if (!kept) Fail("record a version: " + kept.error().message());
    }
  }
  const fs::path in = bench.dir / "checkpoint-event.json";
  const fs::path empty_in = bench.dir / "checkpoint-empty.json";
  WriteText(empty_in, "");
  const int64_t salt = NowNs() / 1000;  // call ids never seen before, run after run
  auto hook = [&](const std::string& event, bool checkpoints) {
    WriteText(in, event);
    std::vector<std::string> args = {bench.cli, "--store", bench.store, "hook", "claude-code"};
    if (!checkpoints) args.push_back("--no-checkpoints");
    return run(args, in.string());
  };
  std::vector<ProcessCost> edit_on, edit_off, bash_on, bash_off, bin_true, linkage;
  for (int i = 0; i < bench.runs; ++i) {
    bin_true.push_back(run({"/bin/true"}, empty_in.string()));
    linkage.push_back(run({bench.empty_process}, empty_in.string()));
    // The file changed since its last version, as between two edits.
    const size_t f = static_cast<size_t>(i % kFiles);
    texts[f] = ReplaceLine(texts[f], static_cast<size_t>(i), "    return " + std::to_string(i));
    WriteText(paths[f], texts[f]);
    const json edit = {{"file_path", paths[f].string()},
                       {"old_string", "return " + std::to_string(i)},
                       {"new_string", "return " + std::to_string(i + 1)}};
    const json bash = {{"command", "pytest -q"}, {"description", "run the tests"}};
    const std::string id = std::to_string(salt) + "-" + std::to_string(i);
    // Which goes first alternates, so neither always finds the caches warm.
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == (i % 2 == 0)) {
        edit_on.push_back(hook(Event("PreToolUse", "Edit", "edit-on-" + id, project, edit), true));
        bash_on.push_back(hook(Event("PostToolUse", "Bash", "bash-on-" + id, project, bash), true));
      } else {
        edit_off.push_back(
            hook(Event("PreToolUse", "Edit", "edit-off-" + id, project, edit), false));
        bash_off.push_back(
            hook(Event("PostToolUse", "Bash", "bash-off-" + id, project, bash), false));
      }
    }
  }
  std::vector<json> out;
  auto pair = [&](const std::string& kind, const std::vector<ProcessCost>& on,
                  const std::vector<ProcessCost>& off) {
    json j = {{"measure", "hook_checkpoints_" + kind},
              {"runs", bench.runs},
              {"seen_files", kFiles},
              {"file_bytes", kFileBytes},
              {"on_p50_ms", P50Ms(on, &ProcessCost::wall_ns)},
              {"off_p50_ms", P50Ms(off, &ProcessCost::wall_ns)},
              {"on_cpu_p50_ms", P50Ms(on, &ProcessCost::cpu_ns)},
              {"off_cpu_p50_ms", P50Ms(off, &ProcessCost::cpu_ns)},
              {"floor_bin_true_p50_ms", P50Ms(bin_true, &ProcessCost::wall_ns)},
              {"floor_same_linkage_p50_ms", P50Ms(linkage, &ProcessCost::wall_ns)},
              {"floor_same_linkage_cpu_p50_ms", P50Ms(linkage, &ProcessCost::cpu_ns)}};
    j["added_p50_ms"] = j["on_p50_ms"].get<double>() - j["off_p50_ms"].get<double>();
    j["added_cpu_p50_ms"] = j["on_cpu_p50_ms"].get<double>() - j["off_cpu_p50_ms"].get<double>();
    out.push_back(std::move(j));
  };
  pair("pre_edit", edit_on, edit_off);
  pair("post_bash", bash_on, bash_off);
  fs::remove_all(project);
  return out;
}

nlohmann::json MeasureCheckpointStorage(const std::filesystem::path& dir) {
  using namespace checkpoint_workload;  // NOLINT(google-build-using-namespace)
  const fs::path location = dir / "checkpoint-storage";
  fs::remove_all(location);
  StoreOptions options;
  options.durability = Durability::kProcessCrashSafe;
  // The database file of the empty store, closed (its WAL checkpointed):
  // what the versions' rows add is measured against it.
  const fs::path database = location / std::string(kEmbeddedDatabaseFile);
  int64_t empty_database_bytes = 0;
  {
    auto empty = Store::Open(location.string(), options);
    if (!empty) Fail("open " + location.string() + ": " + empty.error().message());
  }
  empty_database_bytes = static_cast<int64_t>(fs::file_size(database));
  auto opened = Store::Open(location.string(), options);
  if (!opened) Fail("open " + location.string() + ": " + opened.error().message());
  Store& store = **opened;
  std::vector<std::string> texts;
  for (int f = 0; f < kFiles; ++f) texts.push_back(SourceFile(f));
  std::map<std::string, int64_t> distinct;  // digest -> bytes
  std::mt19937 rng(39);
  constexpr int kEdits = 1000;
  const int64_t t0 = NowNs();
  for (int e = 0; e < kEdits; ++e) {
    const size_t f = rng() % kFiles;
    const std::string path = "/bench/project/module_" + std::to_string(f) + ".py";
    FileVersion v{.agent_session = kAgent,
                  .tool_use_id = "edit-" + std::to_string(e),
                  .file_path = path,
                  .phase = FileVersionPhase::kBefore,
                  .tool = "Edit",
                  .source = "hook",
                  .project = "/bench/project"};
    for (const FileVersionPhase phase : {FileVersionPhase::kBefore, FileVersionPhase::kAfter}) {
      if (phase == FileVersionPhase::kAfter) {
        texts[f] = ReplaceLine(texts[f], rng(),
                               "    return render(request, status=" + std::to_string(e) + ")");
      }
      v.phase = phase;
      auto kept = store.RecordFileVersion(v, texts[f]);
      if (!kept) Fail("record a version: " + kept.error().message());
      distinct[kept->sha256] = kept->size;
    }
  }
  const double seconds = static_cast<double>(NowNs() - t0) / 1e9;
  auto stats = store.Stats();
  if (!stats) Fail("stats: " + stats.error().message());
  int64_t distinct_bytes = 0;
  for (const auto& [digest, bytes] : distinct) distinct_bytes += bytes;
  const double ratio = static_cast<double>(stats->blob_bytes) / static_cast<double>(distinct_bytes);
  FileVersionQuery all;
  all.limit = kMaxFileVersionsListed;
  auto kept_rows = store.ListFileVersions(all);
  if (!kept_rows) Fail("list versions: " + kept_rows.error().message());
  json j = {{"measure", "checkpoint_storage"},
            {"edits", kEdits},
            {"files", kFiles},
            {"versions_recorded", 2 * kEdits},
            {"versions_kept", kept_rows->size()},
            {"distinct_contents", distinct.size()},
            {"distinct_bytes", distinct_bytes},
            {"blobs", stats->blobs},
            {"blob_bytes", stats->blob_bytes},
            {"blob_over_distinct", ratio},
            {"library_us_per_version", seconds * 1e6 / (2 * kEdits)},
            {"note",
             "each edit recorded before and after; a before equal to the previous after is "
             "not kept again"}};
  opened->reset();
  // Closed, so the WAL is in the file: the rows' own bytes, and everything
  // stored (blobs and rows) over the distinct contents.
  const int64_t rows_bytes = static_cast<int64_t>(fs::file_size(database)) - empty_database_bytes;
  j["database_growth_bytes"] = rows_bytes;
  const double stored =
      static_cast<double>(stats->blob_bytes + rows_bytes) / static_cast<double>(distinct_bytes);
  j["stored_over_distinct"] = stored;
  j["target"] = 1.1;
  j["met"] = stored <= 1.1;
  fs::remove_all(location);
  return j;
}

}  // namespace sessiondb::bench
