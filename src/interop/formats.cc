#include "interop/formats.h"

namespace sessiondb::interop {

const std::vector<ImportFormatSpec>& ImportRegistry() {
  static const std::vector<ImportFormatSpec> kFormats = {
      SnapshotImport(),   AcdcImport(),  ExtremisImport(), AgentsKtImport(), PixirImport(),
      ClaudeCodeImport(), CodexImport(), ChatGptImport(),  ClaudeAiImport(),
  };
  return kFormats;
}

const std::vector<ExportFormatSpec>& ExportRegistry() {
  static const std::vector<ExportFormatSpec> kFormats = {
      SnapshotExport(), AcdcExport(), AgentsKtExport(), MarkdownExport(), JsonlExport(),
  };
  return kFormats;
}

}  // namespace sessiondb::interop
