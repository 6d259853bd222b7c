#include "memory/write_extract.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "core/json_parse.h"

namespace sessiondb::memory {
namespace {

using nlohmann::json;

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// The string field `key` of an object, or nullopt.
std::optional<std::string> StringField(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string Join(const std::vector<std::string_view>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    out += lines[i];
  }
  return out;
}

// The Claude Code tools.
std::vector<ExtractedWrite> ClaudeCodeWrites(std::string_view tool, const json& args) {
  const std::optional<std::string> path = StringField(args, "file_path");
  if (!path || path->empty()) return {};
  if (tool == "Write") {
    const std::optional<std::string> content = StringField(args, "content");
    if (!content) return {};
    return {{*path, "", *content, true, std::string(tool)}};
  }
  if (tool == "Edit") {
    const std::optional<std::string> old_code = StringField(args, "old_string");
    const std::optional<std::string> new_code = StringField(args, "new_string");
    if (!old_code || !new_code) return {};
    return {{*path, *old_code, *new_code, false, std::string(tool)}};
  }
  // MultiEdit applies all its edits or none, so one malformed edit spoils the call.
  auto edits = args.find("edits");
  if (edits == args.end() || !edits->is_array() || edits->empty()) return {};
  std::vector<ExtractedWrite> out;
  for (const json& e : *edits) {
    const std::optional<std::string> old_code = StringField(e, "old_string");
    const std::optional<std::string> new_code = StringField(e, "new_string");
    if (!old_code || !new_code) return {};
    out.push_back({*path, *old_code, *new_code, false, std::string(tool)});
  }
  return out;
}

// The patches a shell script hands to apply_patch: heredoc bodies
// (`apply_patch <<'EOF'` ... `EOF`), or a patch passed as a quoted argument.
std::vector<ExtractedWrite> ScriptWrites(std::string_view script, std::string_view tool) {
  std::vector<ExtractedWrite> out;
  size_t at = 0;
  while (true) {
    size_t call = script.find("apply_patch", at);
    const size_t alt = script.find("applypatch", at);
    if (alt < call) call = alt;
    if (call == std::string_view::npos) break;
    const size_t line_end = std::min(script.find('\n', call), script.size());
    const size_t heredoc = script.find("<<", call);
    std::string_view patch;
    size_t next = line_end;
    if (heredoc < line_end) {
      // <<EOF, <<'EOF', <<"EOF", <<-EOF: the delimiter, then the body up to a line of it alone.
      size_t k = heredoc + 2;
      const bool strip_tabs = k < script.size() && script[k] == '-';
      if (strip_tabs) ++k;
      while (k < line_end && (script[k] == ' ' || script[k] == '\t')) ++k;
      std::string_view rest = script.substr(k, line_end - k);
      std::string_view delimiter;
      if (!rest.empty() && (rest[0] == '\'' || rest[0] == '"')) {
        const size_t close = rest.find(rest[0], 1);
        if (close != std::string_view::npos) delimiter = rest.substr(1, close - 1);
      } else {
        size_t e = 0;
        while (e < rest.size() && rest[e] != ' ' && rest[e] != '\t' && rest[e] != ';' &&
               rest[e] != '&' && rest[e] != '|' && rest[e] != ')' && rest[e] != '\r') {
          ++e;
        }
        delimiter = rest.substr(0, e);
      }
      if (delimiter.empty() || line_end >= script.size()) return {};
      const size_t body = line_end + 1;
      size_t end = std::string_view::npos;
      for (size_t l = body; l <= script.size();) {
        size_t le = std::min(script.find('\n', l), script.size());
        std::string_view line = script.substr(l, le - l);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (strip_tabs) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
        if (line == delimiter) {
          end = l;
          next = le;
          break;
        }
        l = le + 1;
      }
      if (end == std::string_view::npos) return {};  // the heredoc never ends
      patch = script.substr(body, end - body);
    } else {
      const size_t begin = script.find("*** Begin Patch", call);
      if (begin == std::string_view::npos) {
        at = call + 1;
        continue;
      }
      patch = script.substr(begin);
      const size_t finish = patch.find("*** End Patch");
      next = finish == std::string_view::npos ? script.size() : begin + finish + 13;
    }
    std::vector<ExtractedWrite> writes = ParseApplyPatch(patch, tool);
    if (writes.empty()) return {};
    for (ExtractedWrite& w : writes) out.push_back(std::move(w));
    at = next;
  }
  return out;
}

// The writes of the apply_patch a shell call's command runs.
std::vector<ExtractedWrite> ShellCommandWrites(std::string_view tool, const json& args) {
  if (!args.is_object()) return {};
  auto it = args.find("command");
  if (it == args.end()) it = args.find("cmd");
  if (it == args.end()) return {};
  if (it->is_string()) return ScriptWrites(it->get<std::string>(), tool);
  if (!it->is_array() || it->empty()) return {};
  std::vector<std::string> argv;
  for (const json& a : *it) {
    if (!a.is_string()) return {};
    argv.push_back(a.get<std::string>());
  }
  if ((argv[0] == "apply_patch" || argv[0] == "applypatch") && argv.size() >= 2) {
    return ParseApplyPatch(argv[1], tool);
  }
  std::string script;
  for (const std::string& a : argv) {
    if (!script.empty()) script += ' ';
    script += a;
  }
  return ScriptWrites(script, tool);
}

// The folder a shell call says it runs in ("" when it does not).
std::string Workdir(const json& args) {
  for (const char* key : {"workdir", "working_directory", "cwd"}) {
    if (std::optional<std::string> dir = StringField(args, key)) return *dir;
  }
  return "";
}

// The same, each with the folder the call ran in.
std::vector<ExtractedWrite> ShellWrites(std::string_view tool, const json& args) {
  std::vector<ExtractedWrite> writes = ShellCommandWrites(tool, args);
  const std::string workdir = writes.empty() ? "" : Workdir(args);
  for (ExtractedWrite& w : writes) w.workdir = workdir;
  return writes;
}

std::vector<ExtractedWrite> Extract(std::string_view tool, std::string_view arguments) {
  if (tool == "Write" || tool == "Edit" || tool == "MultiEdit") {
    const json args = ParseJson(arguments).value_or(json(json::value_t::discarded));
    if (!args.is_object()) return {};
    return ClaudeCodeWrites(tool, args);
  }
  if (tool == "apply_patch") {
    const json args = ParseJson(arguments).value_or(json(json::value_t::discarded));
    if (args.is_discarded()) return ParseApplyPatch(arguments, tool);  // the raw patch
    if (args.is_string()) return ParseApplyPatch(args.get<std::string>(), tool);
    std::optional<std::string> patch = StringField(args, "input");
    if (!patch) patch = StringField(args, "patch");
    return patch ? ParseApplyPatch(*patch, tool) : std::vector<ExtractedWrite>{};
  }
  if (tool == "shell" || tool == "container.exec" || tool == "local_shell" ||
      tool == "exec_command" || tool == "shell_command") {
    const json args = ParseJson(arguments).value_or(json(json::value_t::discarded));
    return ShellWrites(tool, args);
  }
  return {};
}

}  // namespace

std::vector<ExtractedWrite> ParseApplyPatch(std::string_view patch, std::string_view tool) {
  const std::vector<std::string_view> lines = SplitLines(patch);
  size_t i = 0;
  // Blank lines, or the opening line of a heredoc, may come before the envelope.
  while (i < lines.size() && Trim(lines[i]) != "*** Begin Patch") {
    const std::string_view l = Trim(lines[i]);
    if (!l.empty() && !l.starts_with("<<")) return {};
    ++i;
  }
  if (i == lines.size()) return {};
  ++i;

  enum class State { kNone, kAdd, kUpdate, kDelete };
  State state = State::kNone;
  std::vector<ExtractedWrite> out;
  std::string path;
  std::string add_content;
  std::vector<std::string_view> old_lines;
  std::vector<std::string_view> new_lines;
  bool hunk_has_lines = false;
  bool update_started = false;  // a hunk or a line came after the Update header

  auto finish_hunk = [&] {
    if (hunk_has_lines) {
      out.push_back({path, Join(old_lines), Join(new_lines), false, std::string(tool)});
    }
    old_lines.clear();
    new_lines.clear();
    hunk_has_lines = false;
  };
  auto finish_file = [&] {
    if (state == State::kAdd) out.push_back({path, "", add_content, true, std::string(tool)});
    if (state == State::kUpdate) finish_hunk();
    state = State::kNone;
    add_content.clear();
    update_started = false;
  };
  // The path after a header, or nullopt if the line is not that header.
  auto header = [](std::string_view line, std::string_view marker) -> std::optional<std::string> {
    if (!line.starts_with(marker)) return std::nullopt;
    return std::string(Trim(line.substr(marker.size())));
  };

  for (; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::string_view trimmed = Trim(line);
    if (trimmed == "*** End Patch") {
      finish_file();
      return out;
    }
    if (line.starts_with("*** ")) {
      if (auto p = header(trimmed, "*** Add File:")) {
        finish_file();
        state = State::kAdd;
        path = *p;
      } else if (auto p = header(trimmed, "*** Update File:")) {
        finish_file();
        state = State::kUpdate;
        path = *p;
      } else if (auto p = header(trimmed, "*** Delete File:")) {
        finish_file();
        state = State::kDelete;
        path = *p;
      } else if (auto p = header(trimmed, "*** Move to:")) {
        if (state != State::kUpdate || update_started || p->empty()) return {};
        path = *p;
        continue;
      } else if (trimmed == "*** End of File" && state == State::kUpdate) {
        continue;
      } else {
        return {};
      }
      if (path.empty()) return {};
      continue;
    }
    switch (state) {
      case State::kNone:
        if (!trimmed.empty()) return {};
        break;
      case State::kDelete:
        break;
      case State::kAdd:
        if (!line.starts_with('+')) return {};
        add_content += line.substr(1);
        add_content += '\n';
        break;
      case State::kUpdate:
        update_started = true;
        if (line.starts_with("@@")) {
          finish_hunk();
        } else if (line.empty() || line[0] == ' ') {
          const std::string_view text = line.empty() ? line : line.substr(1);
          old_lines.push_back(text);
          new_lines.push_back(text);
          hunk_has_lines = true;
        } else if (line[0] == '-') {
          old_lines.push_back(line.substr(1));
          hunk_has_lines = true;
        } else if (line[0] == '+') {
          new_lines.push_back(line.substr(1));
          hunk_has_lines = true;
        } else {
          return {};
        }
        break;
    }
  }
  return {};  // no "*** End Patch"
}

std::vector<ExtractedWrite> ExtractWrites(std::string_view tool_name,
                                          std::string_view arguments_json) {
  try {
    return Extract(tool_name, arguments_json);
  } catch (...) {
    // nlohmann::json may still throw (e.g. on a type mismatch); a write we
    // cannot read is no write.
    return {};
  }
}

}  // namespace sessiondb::memory
