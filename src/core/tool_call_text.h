// How a coding agent's tool calls read as text: the rules `sessiondb show`
// and the Markdown export share (the web page has its own, in
// src/server/web/tool_calls.js, which follows the same words). An Edit is a
// line diff under its file's path, a Write the file's text with its
// language, a Bash call `$ command` and its output, a Read the file and its
// lines, an MCP call its server and tool; each call beside its result
// (ToolResultPairing finds it in a later message).
//
// Tool arguments come from outside: fields may be missing, of another type,
// or the arguments not JSON at all. Nothing here throws; a call these rules
// cannot read is described as its raw arguments.
//
// Example:
//   ToolCallText t = DescribeToolCall(call, pairing.TakeResultFor(call));
//   std::cout << t.summary << "\n";  // "Edited src/app.py: +12 −3"
//   for (const ToolTextBlock& b : t.blocks) ...
//
// Thread-safety: the functions are pure; a ToolResultPairing is one
// thread's.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sessiondb/types.h"

namespace sessiondb {

// One line of a line diff.
enum class DiffOp : char { kSame = ' ', kAdded = '+', kRemoved = '-' };
struct DiffLine {
  DiffOp op = DiffOp::kSame;
  std::string text;  // the line without its newline
  bool operator==(const DiffLine&) const = default;
};

// The lines of `text`; a final newline ends the last line and makes none.
std::vector<std::string_view> SplitLines(std::string_view text);

// The most cells (old lines × new lines, after their common head and tail)
// DiffLines compares; past it the caller shows both texts whole.
inline constexpr size_t kMaxDiffCells = 4'000'000;

// The lines of `old_text` turned into those of `new_text`, in order: kSame,
// kRemoved and kAdded lines (a longest common subsequence of lines). A final
// newline ends the last line and makes none of its own. Returns nullopt when
// the lines left after the common head and tail would take more than
// `max_cells` to compare.
std::optional<std::vector<DiffLine>> DiffLines(std::string_view old_text, std::string_view new_text,
                                               size_t max_cells = kMaxDiffCells);

// An output is long past this many lines or bytes: folded in the page, cut
// in `show`, its size written above it in the Markdown export.
inline constexpr size_t kLongOutputLines = 40;
inline constexpr size_t kLongOutputBytes = 4096;

// The number of lines of `text` (a final newline makes no line of its own).
size_t CountLines(std::string_view text);
// True when `text` has more than kLongOutputLines lines or kLongOutputBytes bytes.
bool IsLongOutput(std::string_view text);
// "312 lines, 18.1 KiB".
std::string OutputSize(std::string_view text);

// A block of a tool call read as text.
struct ToolTextBlock {
  std::string
      caption;  // a line above the block ("src/app.py", "Output, 312 lines, 18.1 KiB"), or empty
  std::string language;  // the fence's language: "diff", "console", "python", "json", or empty
  std::string text;      // the block's text, without a final newline
};

// A tool call (and its result) read as text.
struct ToolCallText {
  // What happened, one line: "Edited src/app.py: +12 −3", "Wrote src/a.py
  // (40 lines)", "$ make test", "Read src/a.py (lines 10–29)", "github ›
  // create_issue"; " (error)" after it when the result is an error. Empty
  // for a tool these rules do not know.
  std::string summary;
  // The call's blocks, then its result's.
  std::vector<ToolTextBlock> blocks;
};

// The language a fence gives a file, from its name ("src/app.py" -> "python"),
// or empty when unknown.
std::string LanguageForPath(std::string_view path);

// `call` (a kToolCall part) and `result` (its kToolResult part, or null when
// there is none to show beside it) read as text. Known tools: Claude Code's
// Edit, MultiEdit, Write, Read, Bash, Grep, Glob, NotebookEdit, TodoWrite,
// WebFetch, WebSearch; Codex's shell, local_shell, exec_command, apply_patch;
// MCP tools named mcp__<server>__<tool>. Any other tool, or arguments a rule
// cannot read, gives an empty summary and the raw arguments as a "json" block.
ToolCallText DescribeToolCall(const Part& call, const Part* result);

// A result shown without its call (its call is not in view): its output.
ToolCallText DescribeToolResult(const Part& result);

// Pairs each tool call of a transcript with the result that answers it: the
// first kToolResult part after the call, in the same or a later message, with
// the same tool_call_id. Add the messages in order, then read.
//
// The parts are held by address: the messages must outlive the pairing and
// stay where they are.
class ToolResultPairing {
 public:
  // Adds the parts of `m`, after those of the messages added before.
  void Add(const Message& m);
  // The result answering `call` (a part of an added message), or null; the
  // result is then taken: TakenWithCall says so and no other call gets it.
  const Part* TakeResultFor(const Part& call);
  // True when `result` was given to a call by TakeResultFor.
  bool TakenWithCall(const Part& result) const;

 private:
  size_t next_ = 0;
  std::map<const Part*, size_t> calls_;                                         // call -> its place
  std::map<std::string, std::vector<std::pair<size_t, const Part*>>> results_;  // id -> places
  std::set<const Part*> taken_;
};

}  // namespace sessiondb
