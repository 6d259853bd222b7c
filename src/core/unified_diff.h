// A unified diff of two texts (`diff -u`'s form), for people reading what a
// file version changed: `sessiondb rewind --dry-run`, `file-history` and
// `restore --dry-run` print it. Built on DiffLines (core/tool_call_text.h),
// so the page, `show` and these commands compare lines by one rule.
//
// Inputs are file contents from outside: a pair too large to compare
// (DiffLines' cell cap) is shown as all removed then all added, binary
// content (a NUL byte) as one line saying so, and the output is cut after
// `max_lines` lines with "... N more lines".
//
// Example:
//   UnifiedDiff("a\nb\n", "a\nc\n", {.old_label = "a/x.py", .new_label = "b/x.py"})
//   // "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sessiondb {

struct UnifiedDiffOptions {
  std::string old_label = "a";  // the "---" line's name ("/dev/null" for no file)
  std::string new_label = "b";  // the "+++" line's name
  size_t context = 3;           // unchanged lines shown around each change
  size_t max_lines = 400;       // lines of output past the two labels; then "... N more lines"
};

// The unified diff turning `old_text` into `new_text`; empty when they are
// equal. Texts that differ only in their final newline give the labels and
// the line "\ only the final newline differs" (the line diff does not see it).
std::string UnifiedDiff(std::string_view old_text, std::string_view new_text,
                        const UnifiedDiffOptions& options = {});

}  // namespace sessiondb
