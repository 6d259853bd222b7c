// The claude-ai format (being written: import reports kInternal).
#include "interop/formats.h"

namespace sessiondb::interop {

ImportFormatSpec ClaudeAiImport() {
  return {"claude-ai", [](const std::filesystem::path&) { return 0; },
          [](const std::filesystem::path&, ImportSink&) {
            return Status::Internal("importing claude-ai is not written yet");
          }};
}

}  // namespace sessiondb::interop
