// The snapshot format (being written: import and export report kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec SnapshotImport() {
  return {"snapshot", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing snapshot is not written yet");
          }};
}

ExportFormatSpec SnapshotExport() {
  return {"snapshot", [](Store&, std::span<const Session>, const std::filesystem::path&,
                      ExportReport*) { return Status::Internal("exporting snapshot is not written yet"); }};
}

}  // namespace sessiondb::interop
