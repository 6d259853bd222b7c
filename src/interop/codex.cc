// The codex format (being written: import reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec CodexImport() {
  return {"codex", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing codex is not written yet");
          }};
}

}  // namespace sessiondb::interop
