// sessiondb_import_bench: how fast, and in how much memory, a large foreign
// history imports. Generates a realistic Claude Code transcript and a Codex
// rollout of --size-mb each (user prompts, responses split into thinking /
// text / tool_use records, tool results carrying file contents, a small
// image every few hundred records), imports each with ImportPath into a
// fresh embedded store, in a child process of its own so that each peak RSS
// (VmHWM) is the import's alone, and prints one JSON object per workload:
// the import to durable (`seconds`, `mb_per_s`), then the full-text index
// caught up after it (`index_catch_up_seconds`; `searchable_over_durable`
// is the whole over the import's time, the issue 19 target is 1.5).
// With --floor it then measures the single-writer floor (import_floor.h):
// the same rows written by SQLite alone, with and without the full-text index.
//
// With --input FILE it imports FILE (of --workload's format, which must then
// be one) instead of generating one: to profile the import alone, or to
// measure a real transcript.
//
// Usage: sessiondb_import_bench [--size-mb N] [--workload claude-code|codex|all]
//                               [--dir DIR] [--keep] [--floor] [--input FILE]
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "blob/base64.h"
#include "core/iso_time.h"
#include "import_floor.h"
#include "sessiondb/interop.h"
#include "sessiondb/search.h"
#include "sessiondb/store.h"

namespace {

namespace fs = std::filesystem;

int64_t VmHwmKiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// A tiny valid PNG (1x1, grey), varied by a private chunk so blobs differ.
std::string Png(int salt) {
  auto be = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  auto crc = [](const std::string& d) {
    uint32_t c = 0xFFFFFFFFu;
    for (unsigned char ch : d) {
      c ^= ch;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
  };
  auto chunk = [&](const std::string& type, const std::string& data) {
    return be(static_cast<uint32_t>(data.size())) + type + data + be(crc(type + data));
  };
  std::string png("\x89PNG\r\n\x1a\n", 8);
  png += chunk("IHDR", be(64) + be(48) + std::string("\x08\x00\x00\x00\x00", 5));
  png += chunk("teSt", std::to_string(salt) + std::string(6000, 'p'));
  png += chunk("IDAT", std::string("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10));
  png += chunk("IEND", "");
  return png;
}

// JSON-escaped filler that reads like source code.
std::string Code(std::mt19937_64& rng, size_t bytes) {
  static const char* kLines[] = {
      "    for (size_t i = 0; i < items.size(); ++i) {\\n",
      "      if (items[i].empty()) continue;\\n",
      "      total += items[i].size() * weight;\\n",
      "    }\\n",
      "  // Returns the parsed header, or an error naming the field.\\n",
      "  auto status = reader.Next(&line);\\n",
      "  const std::string key = \\\"session\\\" + std::to_string(id);\\n",
      "\\tint main(int argc, char** argv) { return run(argc, argv); }\\n"};
  std::string out;
  while (out.size() < bytes) out += kLines[rng() % 8];
  return out;
}

std::string Uuid(uint64_t n) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%08x-%04x-4%03x-8%03x-%012llx",
                static_cast<unsigned>(n * 2654435761u), static_cast<unsigned>(n & 0xffff),
                static_cast<unsigned>((n >> 16) & 0xfff), static_cast<unsigned>((n >> 28) & 0xfff),
                static_cast<unsigned long long>(n));
  return buf;
}

std::string Time(int64_t s) {
  return sessiondb::FormatUtcTime((1748772000 + s) * 1000, sessiondb::UtcTimeForm::kIsoMillis);
}

// Writes a Claude Code transcript of about `bytes` bytes.
int64_t WriteClaudeCode(const fs::path& file, int64_t bytes) {
  std::mt19937_64 rng(42);
  std::FILE* f = std::fopen(file.c_str(), "wb");
  const std::string sid = "5c1e0000-aaaa-4bbb-8ccc-000000000001";
  const std::string common =
      "\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/dev/app\","
      "\"sessionId\":\"" +
      sid + "\",\"version\":\"1.0.80\",\"gitBranch\":\"main\"";
  int64_t written = 0, n = 0, records = 0;
  std::string parent = "null";
  auto emit = [&](const std::string& type, const std::string& message, const std::string& extra) {
    ++n;
    std::string u = Uuid(n);
    std::string line = "{\"parentUuid\":" + parent + "," + common + ",\"type\":\"" + type +
                       "\",\"message\":" + message + extra + ",\"uuid\":\"" + u +
                       "\",\"timestamp\":\"" + Time(n) + "\"}\n";
    std::fwrite(line.data(), 1, line.size(), f);
    written += static_cast<int64_t>(line.size());
    parent = "\"" + u + "\"";
    ++records;
  };
  const std::string usage =
      ",\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":300,"
      "\"cache_read_input_tokens\":42000,\"output_tokens\":250}";
  int turn = 0;
  while (written < bytes) {
    ++turn;
    std::string user = "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Turn " +
                       std::to_string(turn) +
                       ": please refactor the reader so it handles "
                       "long lines and report what changed.\"}";
    if (turn % 50 == 0) {
      user +=
          ",{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
          "\"data\":\"" +
          sessiondb::blob::Base64Encode(Png(turn)) + "\"}}";
    }
    user += "]}";
    emit("user", user, "");
    const std::string mid = "msg_" + std::to_string(turn);
    const std::string head = "{\"id\":\"" + mid +
                             "\",\"type\":\"message\",\"role\":\"assistant\","
                             "\"model\":\"claude-sonnet-4-20250514\",\"content\":[";
    emit("assistant",
         head + "{\"type\":\"thinking\",\"thinking\":\"" + Code(rng, 600) +
             "\",\"signature\":\"EqQBCkYIBxgCKkA\"}]" + usage + "}",
         ",\"requestId\":\"req_" + std::to_string(turn) + "\"");
    emit("assistant",
         head + "{\"type\":\"text\",\"text\":\"I will read the file first.\"}]" + usage + "}", "");
    emit("assistant",
         head + "{\"type\":\"tool_use\",\"id\":\"toolu_" + std::to_string(turn) +
             "\",\"name\":\"Read\",\"input\":{\"file_path\":\"/home/dev/app/src/reader.cc\"}}]" +
             usage + "}",
         "");
    emit("user",
         "{\"role\":\"user\",\"content\":[{\"tool_use_id\":\"toolu_" + std::to_string(turn) +
             "\",\"type\":\"tool_result\",\"content\":\"" + Code(rng, 2000 + rng() % 6000) +
             "\"}]}",
         ",\"toolUseResult\":{\"type\":\"text\",\"file\":{\"filePath\":\"/home/dev/app/src/"
         "reader.cc\"}}");
    emit("assistant",
         "{\"id\":\"" + mid +
             "b\",\"type\":\"message\",\"role\":\"assistant\","
             "\"model\":\"claude-sonnet-4-20250514\",\"content\":[{\"type\":\"text\",\"text\":\"" +
             Code(rng, 800) + "\"}]" + usage + "}",
         "");
  }
  std::fclose(f);
  return records;
}

// Writes a Codex rollout of about `bytes` bytes.
int64_t WriteCodex(const fs::path& file, int64_t bytes) {
  std::mt19937_64 rng(7);
  std::FILE* f = std::fopen(file.c_str(), "wb");
  int64_t written = 0, n = 0, records = 0;
  auto emit = [&](const std::string& type, const std::string& payload) {
    ++n;
    std::string line = "{\"timestamp\":\"" + Time(n) + "\",\"type\":\"" + type +
                       "\",\"payload\":" + payload + "}\n";
    std::fwrite(line.data(), 1, line.size(), f);
    written += static_cast<int64_t>(line.size());
    ++records;
  };
  emit("session_meta",
       "{\"id\":\"0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7\",\"timestamp\":\"" + Time(0) +
           "\",\"cwd\":\"/home/dev/app\",\"originator\":\"codex_cli_rs\","
           "\"cli_version\":\"0.46.0\",\"source\":\"cli\",\"model_provider\":\"openai\"}");
  int turn = 0;
  while (written < bytes) {
    ++turn;
    std::string user =
        "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
        "\"text\":\"Turn " +
        std::to_string(turn) + ": fix the failing test.\"}";
    if (turn % 50 == 0) {
      user += ",{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64," +
              sessiondb::blob::Base64Encode(Png(turn)) + "\"}";
    }
    emit("response_item", user + "]}");
    emit("turn_context",
         "{\"cwd\":\"/home/dev/app\",\"model\":\"gpt-5-codex\",\"effort\":\"high\"}");
    emit("response_item",
         "{\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"" +
             Code(rng, 400) + "\"}],\"encrypted_content\":\"gAAAAB\"}");
    emit("response_item",
         "{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":"
         "[\\\"cat\\\",\\\"src/reader.cc\\\"]}\",\"call_id\":\"call_" +
             std::to_string(turn) + "\"}");
    emit("response_item", "{\"type\":\"function_call_output\",\"call_id\":\"call_" +
                              std::to_string(turn) + "\",\"output\":\"" +
                              Code(rng, 2000 + rng() % 6000) + "\"}");
    emit("response_item",
         "{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":"
         "\"output_text\",\"text\":\"" +
             Code(rng, 800) + "\"}]}");
    emit("event_msg",
         "{\"type\":\"token_count\",\"info\":{\"last_token_usage\":{\"input_tokens\":"
         "40000,\"cached_input_tokens\":38000,\"output_tokens\":300}}}");
  }
  std::fclose(f);
  return records;
}

int RunWorkload(const std::string& workload, const fs::path& dir, int64_t size_mb, bool floor,
                const fs::path& given_input) {
  const int64_t bytes = size_mb * 1024 * 1024;
  fs::path input = given_input;
  int64_t records = 0;
  if (!input.empty()) {
    // A transcript of the caller's: nothing generated, records not counted.
  } else if (workload == "claude-code") {
    fs::create_directories(dir / "projects" / "-home-dev-app");
    input = dir / "projects" / "-home-dev-app" / "5c1e0000-aaaa-4bbb-8ccc-000000000001.jsonl";
    records = WriteClaudeCode(input, bytes);
  } else {
    fs::create_directories(dir / "sessions" / "2025" / "10" / "29");
    input = dir / "sessions" / "2025" / "10" / "29" /
            "rollout-2025-10-29T00-59-38-0199a2b3-c4d5-7e6f-8091-a2b3c4d5e6f7.jsonl";
    records = WriteCodex(input, bytes);
  }
  const int64_t input_bytes = static_cast<int64_t>(fs::file_size(input));
  const int64_t hwm_before = VmHwmKiB();
  auto store = sessiondb::Store::Open((dir / "store").string());
  if (!store) {
    std::fprintf(stderr, "open: %s\n", store.error().message().c_str());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto report = sessiondb::ImportPath(**store, input.string(),
                                      {.format = sessiondb::ParseImportFormat(workload).value()});
  // Closing is part of the import: it checkpoints what the log still holds.
  store->reset();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!report) {
    std::fprintf(stderr, "import: %s\n", report.error().message().c_str());
    return 1;
  }
  const double mb = static_cast<double>(input_bytes) / (1024.0 * 1024.0);
  const double peak_mib = VmHwmKiB() / 1024.0;
  // Searchable: the full-text index follows the log (schema v6); closing
  // the store caught up at most 50,000 documents, the rest is caught up
  // here, as the CLI's import does before it returns.
  sessiondb::SearchOptions search_options;
  search_options.embedder.from_environment = false;
  auto index = sessiondb::SearchIndex::Open((dir / "store").string(), search_options);
  if (!index) {
    std::fprintf(stderr, "open index: %s\n", index.error().message().c_str());
    return 1;
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (auto pending = (*index)->IndexPending(); !pending) {
    std::fprintf(stderr, "index: %s\n", pending.error().message().c_str());
    return 1;
  }
  index->reset();
  const double index_secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const double peak_after_index_mib = VmHwmKiB() / 1024.0;
  std::string floor_fields;
  if (floor) {
    auto f =
        sessiondb::bench::MeasureImportFloor(dir / "store" / sessiondb::kEmbeddedDatabaseFile, dir);
    if (!f) {
      std::fprintf(stderr, "floor: %s\n", f.error().message().c_str());
      return 1;
    }
    auto rate = [mb](double seconds) { return mb / seconds; };
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  ",\"search_text_mb\":%.1f,\"floor_mb_per_s\":{\"rows\":%.1f,"
                  "\"rows_and_search\":%.1f,\"if_rowid_events\":%.1f,\"with_random_ids\":%.1f}",
                  static_cast<double>(f->search_text_bytes) / (1024.0 * 1024.0), rate(f->rows),
                  rate(f->rows_and_search), rate(f->rowid_events), rate(f->random_ids));
    floor_fields = buf;
  }
  std::printf(
      "{\"workload\":\"%s\",\"input_mb\":%.1f,\"records\":%lld,\"messages\":%lld,"
      "\"images\":%lld,\"skipped\":%lld,\"seconds\":%.2f,\"mb_per_s\":%.1f,"
      "\"peak_rss_mib\":%.1f,\"rss_before_import_mib\":%.1f,\"index_catch_up_seconds\":%.2f,"
      "\"searchable_over_durable\":%.2f,\"peak_rss_after_index_mib\":%.1f%s,"
      "\"target_mb_per_s\":50,\"target_searchable_over_durable\":1.5,"
      "\"target_peak_rss_mib\":256}\n",
      workload.c_str(), mb, static_cast<long long>(records),
      static_cast<long long>(report->messages_added), static_cast<long long>(report->images_added),
      static_cast<long long>(report->records_skipped), secs, mb / secs, peak_mib,
      hwm_before / 1024.0, index_secs, (secs + index_secs) / secs, peak_after_index_mib,
      floor_fields.c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t size_mb = 1024;
  std::string workload = "all";
  fs::path dir;
  bool keep = false;
  bool floor = false;
  fs::path input;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--size-mb" && i + 1 < argc) {
      size_mb = std::stoll(argv[++i]);
    } else if (a == "--workload" && i + 1 < argc) {
      workload = argv[++i];
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--keep") {
      keep = true;
    } else if (a == "--floor") {
      floor = true;
    } else if (a == "--input" && i + 1 < argc) {
      input = fs::absolute(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--size-mb N] [--workload claude-code|codex|all] [--dir DIR] "
                   "[--keep] [--floor] [--input FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!input.empty() && workload == "all") {
    std::fprintf(stderr, "--input needs --workload claude-code or codex: the file's format\n");
    return 2;
  }
  if (dir.empty())
    dir = fs::temp_directory_path() / ("sessiondb-import-bench-" + std::to_string(getpid()));
  int rc = 0;
  for (const std::string w : {"claude-code", "codex"}) {
    if (workload != "all" && workload != w) continue;
    const fs::path wdir = dir / w;
    fs::remove_all(wdir);
    fs::create_directories(wdir);
    // A child per workload, so each VmHWM is that import's own.
    const pid_t pid = fork();
    if (pid == 0) _exit(RunWorkload(w, wdir, size_mb, floor, input));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) rc = 1;
    if (!keep) fs::remove_all(wdir);
  }
  if (!keep) fs::remove_all(dir);
  return rc;
}
