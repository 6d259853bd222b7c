// The chatgpt format (being written: import reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec ChatGptImport() {
  return {"chatgpt", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing chatgpt is not written yet");
          }};
}

}  // namespace sessiondb::interop
