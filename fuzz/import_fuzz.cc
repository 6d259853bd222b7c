// Fuzz target: one import format's reader, chosen when the target is built
// (SESSIONDB_FUZZ_FORMAT: "claude-code", "codex", "chatgpt", "claude-ai",
// "ac-dc", "pixir", "agents-kt", "extremis", "snapshot"). The formats read
// files, not bytes, so each run writes the input where the format looks for
// it, in a fresh folder, and imports it with ImportPath into a store shared
// by the runs (a re-import then meets sessions already there, as it does in
// use). Properties: no crash, no exception out of the importer, and a
// failed import is a Status with a message.
//
// Input layout, per format (docs/fuzzing.md):
//   claude-code  project/<uuid>.jsonl        codex   rollout-<time>-<uuid>.jsonl
//   chatgpt, claude-ai  conversations.json, or export.zip when the input
//                starts with "PK" (the archive reader runs too)
//   ac-dc  .ac-dc/history.jsonl               pixir   .pixir/sessions/<id>.ndjson
//   agents-kt  session.json                   snapshot  snapshot.json
//   extremis  sessions/index.json, then after a line "--8<--" the session
//             file sessions/<uuid>.json (the uuid the seeds' index lists)

#include <string>

#include "fuzz_support.h"
#include "sessiondb/interop.h"

#ifndef SESSIONDB_FUZZ_FORMAT
#error "build with -DSESSIONDB_FUZZ_FORMAT=\"<format>\""
#endif

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFormat = SESSIONDB_FUZZ_FORMAT;
constexpr std::string_view kUuid = "0b5e3c8e-6a4f-4c1e-9a4e-2f1d7c9b8a01";
constexpr std::string_view kExtremisUuid = "5F2B6C1E-3A4D-4E8F-9B0C-1D2E3F4A5B6C";

// Writes `input` as the format's files under `dir`; returns what to import.
fs::path Lay(const fs::path& dir, std::string_view input) {
  using sessiondb::fuzz::WriteFileOrDie;
  const bool zip = input.substr(0, 2) == "PK";
  if (kFormat == "claude-code") {
    WriteFileOrDie(dir / "project" / (std::string(kUuid) + ".jsonl"), input);
    return dir / "project";
  }
  if (kFormat == "codex") {
    const fs::path file = dir / ("rollout-2025-06-01T12-00-00-" + std::string(kUuid) + ".jsonl");
    WriteFileOrDie(file, input);
    return file;
  }
  if (kFormat == "chatgpt" || kFormat == "claude-ai") {
    const fs::path file = dir / (zip ? "export.zip" : "conversations.json");
    WriteFileOrDie(file, input);
    return file;
  }
  if (kFormat == "ac-dc") {
    WriteFileOrDie(dir / ".ac-dc" / "history.jsonl", input);
    return dir / ".ac-dc";
  }
  if (kFormat == "pixir") {
    WriteFileOrDie(dir / ".pixir" / "sessions" / (std::string(kUuid) + ".ndjson"), input);
    return dir / ".pixir";
  }
  if (kFormat == "agents-kt") {
    WriteFileOrDie(dir / "session.json", input);
    return dir / "session.json";
  }
  if (kFormat == "extremis") {
    constexpr std::string_view kCut = "\n--8<--\n";
    const size_t cut = input.find(kCut);
    WriteFileOrDie(dir / "sessions" / "index.json", input.substr(0, cut));
    if (cut != std::string_view::npos) {
      WriteFileOrDie(dir / "sessions" / (std::string(kExtremisUuid) + ".json"),
                     input.substr(cut + kCut.size()));
    }
    return dir / "sessions";
  }
  WriteFileOrDie(dir / "snapshot.json", input);
  return dir / "snapshot.json";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  const fs::path dir = fuzz::FreshRunFolder();
  const fs::path path = Lay(dir, fuzz::AsView(data, size));
  Store& store = fuzz::RecycledStore();
  static const ImportFormat format = ParseImportFormat(kFormat).value();
  Result<ImportReport> report = ImportPath(store, path.string(), {.format = format});
  if (report) {
    FUZZ_CHECK(report->records_skipped >= static_cast<int64_t>(report->skipped.size()));
  } else {
    FUZZ_CHECK(!report.error().message().empty());
  }
  return 0;
}
