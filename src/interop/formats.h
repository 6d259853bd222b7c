// The registry of import and export formats: one ImportFormatSpec or
// ExportFormatSpec per foreign format, each defined in its own file
// (acdc.cc, claude_code.cc, ...). interop.cc dispatches to them.
// Thread-safety: specs are plain values; running one is single-threaded.
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "interop/import_sink.h"
#include "sessiondb/file_system.h"
#include "sessiondb/interop.h"
#include "sessiondb/store.h"

namespace sessiondb::interop {

struct ImportFormatSpec {
  ImportFormat format;
  // How sure the format is that `path` is its own: 0 (not it) to 100
  // (certain). Cheap: it may look at names and peek at the first bytes,
  // never read the whole input.
  std::function<int(const std::filesystem::path& path)> detect;
  // Streams `path` into the sink; records it cannot use go to sink.Skip. An
  // error return means the input as a whole is unusable (or the store failed).
  std::function<Status(const std::filesystem::path& path, ImportSink& sink)> run;
};

struct ExportFormatSpec {
  ExportFormat format;
  // Writes `sessions` to `out` (a file or a folder, as the format says)
  // through `fs` (output_file.h) and counts what it wrote in `report`.
  std::function<Status(Store& store, std::span<const Session> sessions,
                       const std::filesystem::path& out, FileSystem& fs, ExportReport* report)>
      run;
};

const std::vector<ImportFormatSpec>& ImportRegistry();
const std::vector<ExportFormatSpec>& ExportRegistry();

// One per format file.
ImportFormatSpec SnapshotImport();
ImportFormatSpec AcdcImport();
ImportFormatSpec ExtremisImport();
ImportFormatSpec AgentsKtImport();
ImportFormatSpec PixirImport();
ImportFormatSpec ClaudeCodeImport();
ImportFormatSpec CodexImport();
ImportFormatSpec ChatGptImport();
ImportFormatSpec ClaudeAiImport();

ExportFormatSpec SnapshotExport();
ExportFormatSpec AcdcExport();
ExportFormatSpec AgentsKtExport();
ExportFormatSpec MarkdownExport();
ExportFormatSpec JsonlExport();

}  // namespace sessiondb::interop
