// Fuzz target: Claude Code hook events (src/memory/claude_hook), the JSON
// Claude Code writes to `sessiondb hook`'s stdin, against a real code memory
// (the write tools' inputs are recorded and searched). Properties: no crash;
// the answer on stdout is nothing or one JSON object, as the hook protocol
// requires.

#include <nlohmann/json.hpp>

#include "core/json_parse.h"
#include "fuzz_support.h"
#include "sessiondb/memory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sessiondb;
  static std::unique_ptr<CodeMemory> memory = [] {
    (void)fuzz::RecycledStore(/*runs_per_store=*/1 << 30);  // creates the store
    auto m = CodeMemory::Open(fuzz::RecycledStorePath().string());
    FUZZ_CHECK(m.has_value());
    return std::move(*m);
  }();
  const std::string_view input = fuzz::AsView(data, size);
  for (SeenKeyMode mode : {SeenKeyMode::kContent, SeenKeyMode::kFile}) {
    HookAnswer answer = HandleClaudeCodeHook(input, memory.get(), mode);
    if (!answer.stdout_text.empty()) {
      Result<nlohmann::json> out = ParseJson(answer.stdout_text);
      FUZZ_CHECK(out.has_value() && out->is_object());
    }
  }
  return 0;
}
