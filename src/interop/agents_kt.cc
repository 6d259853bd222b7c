// The agents-kt format (being written: import and export report kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec AgentsKtImport() {
  return {"agents-kt", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing agents-kt is not written yet");
          }};
}

ExportFormatSpec AgentsKtExport() {
  return {"agents-kt", [](Store&, std::span<const Session>, const std::filesystem::path&,
                      ExportReport*) { return Status::Internal("exporting agents-kt is not written yet"); }};
}

}  // namespace sessiondb::interop
