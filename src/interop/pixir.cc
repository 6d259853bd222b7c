// The pixir format (being written: import reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec PixirImport() {
  return {"pixir", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing pixir is not written yet");
          }};
}

}  // namespace sessiondb::interop
