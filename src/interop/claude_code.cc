// The claude-code format (being written: import reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec ClaudeCodeImport() {
  return {"claude-code", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing claude-code is not written yet");
          }};
}

}  // namespace sessiondb::interop
