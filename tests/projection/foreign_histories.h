// Histories in every format sessiondb imports, written the way their tools
// write them, with the shapes that make a history hard to replay to another
// provider: parallel tool calls written a record per call and per result
// (Claude Code, Codex), results whose call is missing or answered twice
// (ChatGPT, Pixir), tool calls inside an assistant message followed by their
// results in the same message (Claude.ai), ids no provider accepts (Pixir's
// "functions.Bash:0", Codex's long MCP ids), server-side tool calls with no
// result, thinking with its signature and encrypted reasoning, compactions,
// branches, and text that is only whitespace or ends with it.
//
// Each history marks the reasoning it holds with kReasoningMarker
// (window_checks.h), so a test can check that no projection turned
// reasoning into text.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sessiondb::testing {

struct ForeignHistory {
  std::string format;  // as ImportOptions::format names it
  std::string name;    // what the history shows, for failure messages
  std::filesystem::path path;
};

// Writes every history under `dir` and returns them.
std::vector<ForeignHistory> WriteForeignHistories(const std::filesystem::path& dir);

}  // namespace sessiondb::testing
