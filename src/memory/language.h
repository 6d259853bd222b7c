// The language of a source file, by its extension, for the agents' code
// memory: it picks the function detector (memory/function_detect.h).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace sessiondb::memory {

// "python" (.py .pyi), "javascript" (.js .jsx .mjs .cjs), "typescript" (.ts
// .tsx), "go", "rust" (.rs), "c" (.c .h), "cpp" (.cc .cpp .cxx .hpp .hh
// .hxx), or "" for anything else. The extension is compared ignoring case;
// the rest of the path (directories, dots in them) does not matter.
std::string LanguageForPath(std::string_view path);

}  // namespace sessiondb::memory
