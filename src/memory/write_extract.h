// The code writes in an agent's tool calls: what the code memory records
// from a Part::ToolCall (its tool_name and arguments_json, as the store and
// the claude-code and codex importers keep them).
//
// Understood:
//   Claude Code  Write {file_path, content}               one whole-file write
//                Edit {file_path, old_string, new_string}  one snippet write
//                MultiEdit {file_path, edits: [{old_string, new_string}]}
//                                                          one snippet write per edit
//   Codex        apply_patch: the patch text itself, or {"input": patch} (how
//                the codex importer stores a custom_tool_call, and a
//                function_call whose arguments are not JSON), or {"patch": ...}
//                shell / container.exec / local_shell / exec_command whose
//                command ({"command": [...] or "..."}, {"cmd": ...}) runs
//                apply_patch: `apply_patch <<'EOF' ... EOF` in a shell script,
//                or ["apply_patch", patch]
// Patch grammar (Codex): "*** Begin Patch", then per file
//   "*** Add File: P" + lines "+text"        -> whole-file write of P
//   "*** Update File: P" ["*** Move to: Q"]  -> one snippet write per "@@" hunk,
//       hunk lines " ctx", "-old", "+new"       to Q when moved; old_code is the
//                                               context and '-' lines, new_code
//                                               the context and '+' lines
//   "*** Delete File: P"                     -> nothing
// and "*** End Patch". A patch that is not well formed (no end, an unknown
// line) gives nothing, as Codex would refuse to apply it. Paths are as
// written: Codex's are usually relative to the session's working directory
// (or to a shell call's `workdir`, `working_directory` or `cwd`, which
// ExtractedWrite::workdir carries); memory/write_path.h resolves them.
//
// Thread-safety: pure functions. Never throws.
//
// Example:
//   for (const Part& p : message.parts) {
//     if (p.type != PartType::kToolCall) continue;
//     for (ExtractedWrite& w : ExtractWrites(p.tool_name, p.arguments_json)) Remember(w);
//   }
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sessiondb::memory {

struct ExtractedWrite {
  std::string file_path;
  std::string old_code;  // the replaced fragment; empty for whole-file writes
  std::string new_code;  // the whole new file, or the replacing fragment
  bool whole_file = false;
  std::string tool;  // the tool name it came from ("Write", "apply_patch", "shell"...)
  // The folder the call ran in when it says so (a shell call's workdir),
  // against which a relative file_path is meant; empty otherwise.
  std::string workdir;
};

// The writes of one tool call, in order; empty for any other tool, and for
// arguments that are malformed or lack a field the tool requires.
std::vector<ExtractedWrite> ExtractWrites(std::string_view tool_name,
                                          std::string_view arguments_json);

// The writes of an apply_patch patch text (the grammar above), as
// ExtractWrites reports them with `tool`; empty unless the patch is well formed.
std::vector<ExtractedWrite> ParseApplyPatch(std::string_view patch, std::string_view tool);

}  // namespace sessiondb::memory
