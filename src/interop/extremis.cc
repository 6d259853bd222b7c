// The extremis format (being written: import reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec ExtremisImport() {
  return {"extremis", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing extremis is not written yet");
          }};
}

}  // namespace sessiondb::interop
