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

// True for a reserved word of one of those languages (`def`, `return`,
// `function`, `const`, `struct`, ...; `word` in lower case, as the index
// splits it). Recall leaves them out of its query: they are in nearly every
// write, so they say nothing about which past write is alike, and each one
// costs the query a walk over nearly every write's entry in the full-text
// index (on 100,000 writes, most of a hook call's time).
bool IsReservedWord(std::string_view word);

}  // namespace sessiondb::memory
