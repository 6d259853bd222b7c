// The ac-dc format (being written: import and export report kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec AcdcImport() {
  return {"ac-dc", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing ac-dc is not written yet");
          }};
}

ExportFormatSpec AcdcExport() {
  return {"ac-dc", [](Store&, std::span<const Session>, const std::filesystem::path&,
                      ExportReport*) { return Status::Internal("exporting ac-dc is not written yet"); }};
}

}  // namespace sessiondb::interop
