// The Claude Code hook (declared in include/sessiondb/memory.h).
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "blob/sha256.h"
#include "core/iso_time.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "memory/hook_checkpoints.h"
#include "memory/hook_file.h"
#include "memory/write_path.h"
#include "sessiondb/memory.h"

namespace sessiondb::memory {
namespace {

using Json = nlohmann::json;

std::string Str(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The writes a Write/Edit/MultiEdit call makes. `before_write`: the call has
// not run yet (PreToolUse), so the file on disk is the old version. When the
// file is not one the hook reads (hook_file.h), *refused says why and no
// write is returned.
// `already_read`, when not null, is that file as read a moment ago (by the
// checkpoint), taken instead of reading it again.
std::vector<CodeWrite> WritesOfToolCall(const std::string& tool, const Json& input,
                                        bool before_write, HookFile* already_read,
                                        std::string* refused) {
  std::vector<CodeWrite> writes;
  const std::string path = Str(input, "file_path");
  if (path.empty()) return writes;
  // The file as it is on disk now ("" when there is none yet).
  auto read_file = [&]() -> std::optional<std::string> {
    HookFile f = already_read != nullptr ? std::move(*already_read) : ReadFileForHook(path);
    if (f.kind == HookFile::Kind::kRefused) {
      *refused = std::move(f.why);
      return std::nullopt;
    }
    return std::move(f.text);
  };
  if (tool == "Write") {
    CodeWrite w{.file_path = path, .new_code = Str(input, "content"), .tool = tool};
    // After the write, the old version is gone from disk; RecordWrite then
    // compares with the last whole-file write it kept.
    if (before_write) {
      std::optional<std::string> old = read_file();
      if (!old) return {};
      w.old_code = std::move(*old);
    }
    writes.push_back(std::move(w));
    return writes;
  }
  std::vector<std::pair<std::string, std::string>> edits;
  if (tool == "Edit") {
    edits.emplace_back(Str(input, "old_string"), Str(input, "new_string"));
  } else if (tool == "MultiEdit" && input.contains("edits") && input["edits"].is_array()) {
    for (const Json& e : input["edits"]) {
      if (e.is_object()) edits.emplace_back(Str(e, "old_string"), Str(e, "new_string"));
    }
  }
  // The whole file after the edits, to find the functions they are in.
  std::optional<std::string> on_disk = read_file();
  if (!on_disk) return {};
  std::string context = std::move(*on_disk);
  if (before_write) {
    for (const auto& [from, to] : edits) context = ReplaceFirst(context, from, to);
  }
  for (auto& [from, to] : edits) {
    writes.push_back(CodeWrite{.file_path = path,
                               .old_code = std::move(from),
                               .new_code = std::move(to),
                               .whole_file = false,
                               .file_context = context,
                               .tool = tool});
  }
  return writes;
}

std::string SeenKey(SeenKeyMode mode, const std::string& session, const std::string& path,
                    const std::vector<CodeWrite>& writes) {
  switch (mode) {
    case SeenKeyMode::kFile:
      return "file\n" + path;
    case SeenKeyMode::kSessionFile:
      return "session-file\n" + session + "\n" + path;
    case SeenKeyMode::kContent:
      break;
  }
  std::string content;
  for (const CodeWrite& w : writes) content += w.old_code + '\0' + w.new_code + '\0';
  return "content\n" + path + "\n" + blob::Sha256Hex(content);
}

std::string ContextMessage(const std::string& path, const std::vector<RecalledCode>& recalled,
                           const std::vector<ChurnWarning>& warnings) {
  std::string out = "sessiondb memory, before you write " + path +
                    " (shown once: retry the same call to go ahead).\n";
  if (!recalled.empty()) {
    out += "\nSimilar code written before:\n";
    int n = 0;
    for (const RecalledCode& r : recalled) {
      out += "\n" + std::to_string(++n) + ". " + r.file_path + " (" +
             FormatUtcTime(r.time_ms, UtcTimeForm::kDate);
      if (!r.project.empty()) out += ", project " + r.project;
      out += ")\n```\n" + r.preview + "\n```\n";
    }
  }
  if (!warnings.empty()) {
    out += "\nChurn warnings:\n";
    for (const ChurnWarning& w : warnings) out += "- " + w.message + "\n";
  }
  return out;
}

bool IsWriteTool(const std::string& tool) {
  return tool == "Write" || tool == "Edit" || tool == "MultiEdit";
}

// The code checkpoint of one event (hook_checkpoints.h): the file a
// file-writing call names, before it or after it; after any other call,
// the session's files a shell command changed. Returns the log ("" when
// there is nothing to keep). *read receives the named file as read, when
// the code memory may take it: the tool input typed the path absolute and
// normal, so both mean the same file.
std::string Checkpoint(Store& store, const HookToolCall& call, bool pre, const Json& input,
                       std::optional<HookFile>* read) {
  try {
    if (IsFileWritingTool(call.tool)) {
      const std::string typed =
          Str(input, call.tool == "NotebookEdit" ? "notebook_path" : "file_path");
      if (typed.empty()) return "hook: no checkpoint: " + call.tool + " names no file";
      HookFile file;
      std::string log = RecordToolCallFile(
          store, call, typed, pre ? FileVersionPhase::kBefore : FileVersionPhase::kAfter, &file);
      if (ResolveWritePath(typed, call.cwd) == typed) read->emplace(std::move(file));
      return log;
    }
    return pre ? "" : RecordShellChanges(store, call);
  } catch (const std::exception& e) {
    return std::string("hook: checkpoint failed: ") + e.what();
  }
}

// `first` then `second`, a line each; either may be empty.
std::string JoinLogs(std::string first, const std::string& second) {
  if (first.empty()) return second;
  if (!second.empty()) first += "\n" + second;
  return first;
}

}  // namespace
}  // namespace sessiondb::memory

namespace sessiondb {
// The helpers above, by their short names.
using namespace memory;  // NOLINT(google-build-using-namespace)

Result<SeenKeyMode> ParseSeenKeyMode(std::string_view name) {
  if (name == "file") return SeenKeyMode::kFile;
  if (name == "content") return SeenKeyMode::kContent;
  if (name == "session-file") return SeenKeyMode::kSessionFile;
  return Err(Status::InvalidArgument("unknown seen-key mode '" + std::string(name) +
                                     "'; use file, content or session-file"));
}

namespace {

// The code memory's part of an event (a Write/Edit/MultiEdit call): the
// write kept after it, similar code and churn warnings before it. `read`:
// the named file as the checkpoint read it, or null.
HookAnswer AnswerWrite(const Json& event, const std::string& name, const std::string& tool,
                       CodeMemory* memory, SeenKeyMode mode, HookFile* read) {
  HookAnswer answer;
  if (!IsWriteTool(tool) || (name != "PreToolUse" && name != "PostToolUse")) {
    answer.log = "hook: " + name + " " + tool + ": nothing to do";
    return answer;
  }
  if (memory == nullptr) {
    answer.log = "hook: the store could not be opened; allowed";
    return answer;
  }
  const Json input = MemberOr(event, "tool_input", Json::object());
  const std::string session = Str(event, "session_id");
  const std::string project = Str(event, "cwd");
  std::string refused;
  std::vector<CodeWrite> writes =
      WritesOfToolCall(tool, input, name == "PreToolUse", read, &refused);
  if (!refused.empty()) {
    answer.log = "hook: " + refused + "; allowed";
    return answer;
  }
  if (writes.empty()) {
    answer.log = "hook: " + tool + " without a file_path; allowed";
    return answer;
  }
  for (CodeWrite& w : writes) {
    w.session_id = session;
    w.project = project;
  }
  const std::string path = writes[0].file_path;

  if (name == "PostToolUse") {
    int recorded = 0;
    for (const CodeWrite& w : writes) {
      if (w.new_code.empty()) continue;
      Result<RecordedWrite> r = memory->RecordWrite(w);
      if (!r) {
        answer.log = "hook: recording " + path + " failed: " + r.error().message();
        return answer;
      }
      recorded += r->recorded ? 1 : 0;
    }
    answer.log = "hook: recorded " + std::to_string(recorded) + " write(s) of " + path;
    return answer;
  }

  // PreToolUse: what is worth knowing before this write.
  std::string code;
  for (const CodeWrite& w : writes) code += w.new_code + "\n";
  Result<std::vector<RecalledCode>> recalled = memory->Recall(path, code, 3);
  if (!recalled) {
    answer.log = "hook: recall failed: " + recalled.error().message() + "; allowed";
    return answer;
  }
  std::vector<ChurnWarning> warnings;
  for (const CodeWrite& w : writes) {
    Result<std::vector<ChurnWarning>> more = memory->Warnings(w);
    if (!more) {
      answer.log = "hook: churn failed: " + more.error().message() + "; allowed";
      return answer;
    }
    for (ChurnWarning& cw : *more) {
      bool dup = false;
      for (const ChurnWarning& have : warnings) dup |= have.message == cw.message;
      if (!dup) warnings.push_back(std::move(cw));
    }
  }
  if (recalled->empty() && warnings.empty()) {
    answer.log = "hook: nothing to say about " + path + "; allowed";
    return answer;
  }
  Result<bool> first = memory->FirstSighting(SeenKey(mode, session, path, writes));
  if (!first) {
    answer.log = "hook: seen state failed: " + first.error().message() + "; allowed";
    return answer;
  }
  if (!*first) {
    answer.log = "hook: " + path + " seen before; allowed";
    return answer;
  }
  Json out = {{"hookSpecificOutput",
               {{"hookEventName", "PreToolUse"},
                {"permissionDecision", "deny"},
                {"permissionDecisionReason", ContextMessage(path, *recalled, warnings)}}}};
  answer.stdout_text = out.dump() + "\n";
  answer.log = "hook: denied " + path + " once with " + std::to_string(recalled->size()) +
               " recalled write(s) and " + std::to_string(warnings.size()) + " warning(s)";
  return answer;
}

}  // namespace

HookAnswer HandleClaudeCodeHook(std::string_view event_json, CodeMemory* memory, SeenKeyMode mode,
                                Store* checkpoints) {
  HookAnswer answer;
  std::string checkpoint_log;
  try {
    Result<Json> parsed = ParseJson(event_json);
    if (!parsed) {
      answer.log = "hook: the event is not accepted (" + parsed.error().message() + "); allowed";
      return answer;
    }
    const Json& event = *parsed;
    if (!event.is_object()) {
      answer.log = "hook: the event is not a JSON object; allowed";
      return answer;
    }
    const std::string name = Str(event, "hook_event_name");
    const std::string tool = Str(event, "tool_name");
    const bool pre = name == "PreToolUse";
    // First the checkpoint, so a call the code memory then denies has its
    // "before" kept too (its retry keeps it again: once per call and phase).
    std::optional<HookFile> read;
    if (checkpoints != nullptr && (pre || name == "PostToolUse")) {
      const HookToolCall call{.agent_session = Str(event, "session_id"),
                              .tool_use_id = Str(event, "tool_use_id"),
                              .tool = tool,
                              .cwd = Str(event, "cwd")};
      checkpoint_log =
          Checkpoint(*checkpoints, call, pre, MemberOr(event, "tool_input", Json::object()), &read);
    }
    answer = AnswerWrite(event, name, tool, memory, mode, read ? &*read : nullptr);
    // A tool the code memory leaves alone: the checkpoint's line says it all.
    if (!checkpoint_log.empty() && !IsWriteTool(tool)) answer.log.clear();
    answer.log = JoinLogs(std::move(checkpoint_log), answer.log);
    return answer;
  } catch (const std::exception& e) {
    answer.stdout_text.clear();
    answer.log =
        JoinLogs(std::move(checkpoint_log), std::string("hook: ") + e.what() + "; allowed");
    return answer;
  }
}

std::optional<std::string> ReadHookEvent(std::istream& in, std::string* why) {
  std::string event;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    if (event.size() + n > kMaxHookEventBytes) {
      *why = "the event is larger than " + std::to_string(kMaxHookEventBytes) +
             " bytes, the limit for one hook event";
      return std::nullopt;
    }
    event.append(buf, n);
  }
  return event;
}

std::string ClaudeCodeHookSettings(std::string_view command, bool resident) {
  const std::string cmd =
      std::string(command) + " hook claude-code" + (resident ? " --resident" : "");
  Json hook = {{"type", "command"}, {"command", cmd}, {"timeout", 10}};
  // The file tools before and after they run (code memory, checkpoints);
  // after a Bash call too, for the files a shell command changed. Not every
  // tool: each other one would pay for a shell check.
  Json before = {{"matcher", "Write|Edit|MultiEdit|NotebookEdit"}, {"hooks", Json::array({hook})}};
  Json after = {{"matcher", "Write|Edit|MultiEdit|NotebookEdit|Bash"},
                {"hooks", Json::array({hook})}};
  Json settings = {
      {"hooks", {{"PreToolUse", Json::array({before})}, {"PostToolUse", Json::array({after})}}}};
  return settings.dump(2) + "\n";
}

}  // namespace sessiondb
