#include "core/tool_call_text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/text_rules.h"

namespace sessiondb {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kMinus = "\xE2\x88\x92";    // U+2212, the minus sign
constexpr std::string_view kChevron = "\xE2\x80\xBA";  // U+203A, "server › tool"
constexpr std::string_view kEnDash = "\xE2\x80\x93";   // U+2013, "lines 10–29"
constexpr size_t kSummaryCommandChars = 100;

std::string Str(const Json& args, std::string_view key) {
  return MemberOr(args, key, std::string());
}

// An integer member, also when written as a string of digits.
std::optional<int64_t> Int(const Json& args, std::string_view key) {
  const Json& m = MemberOf(args, key);
  if (m.is_number_integer() || m.is_number_unsigned()) {
    const int64_t v = MemberOr(args, key, int64_t{-1});
    return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
  }
  if (m.is_string()) {
    const std::string s = m.get<std::string>();
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (s.empty() || s.size() > 12 || !std::all_of(s.begin(), s.end(), digit)) return std::nullopt;
    return std::stoll(s);
  }
  return std::nullopt;
}

// The first line of `command`, cut to kSummaryCommandChars characters; "…"
// when anything was left out.
std::string CommandHead(std::string_view command) {
  const size_t newline = command.find('\n');
  std::string_view head = command.substr(0, newline);
  const bool cut = newline != std::string_view::npos || head.size() > kSummaryCommandChars;
  std::string out(head.substr(0, kSummaryCommandChars));
  // Never end inside a UTF-8 character.
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
  return cut ? out + "\xE2\x80\xA6" : out;
}

// One argument of a command line, quoted for a POSIX shell when it needs it.
std::string ShellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./=:,+@%") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The command of Codex's shell calls: an argv array ("bash -lc SCRIPT" gives
// SCRIPT) or a string. Empty when there is none.
std::string CommandOf(const Json& args) {
  for (std::string_view key : {"command", "cmd"}) {
    const Json& c = MemberOf(args, key);
    if (c.is_string()) return c.get<std::string>();
    if (!c.is_array() || c.empty()) continue;
    std::vector<std::string> argv;
    for (const Json& a : c) {
      if (!a.is_string()) return "";
      argv.push_back(a.get<std::string>());
    }
    const std::string shell = argv[0].substr(argv[0].rfind('/') + 1);
    if (argv.size() == 3 && (shell == "bash" || shell == "sh" || shell == "zsh") &&
        (argv[1] == "-lc" || argv[1] == "-c")) {
      return argv[2];
    }
    std::string line;
    for (const std::string& a : argv) line += (line.empty() ? "" : " ") + ShellWord(a);
    return line;
  }
  return "";
}

std::string Plural(size_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string Counts(size_t added, size_t removed) {
  return "+" + std::to_string(added) + " " + std::string(kMinus) + std::to_string(removed);
}

// The diff of one edit, appended to `text`; the added and removed lines counted.
void AppendEditDiff(std::string_view old_text, std::string_view new_text, std::string* text,
                    size_t* added, size_t* removed) {
  std::optional<std::vector<DiffLine>> diff = DiffLines(old_text, new_text);
  if (!diff) {  // too large to compare: all of the old removed, all of the new added
    diff.emplace();
    for (std::string_view l : SplitLines(old_text))
      diff->push_back({DiffOp::kRemoved, std::string(l)});
    for (std::string_view l : SplitLines(new_text))
      diff->push_back({DiffOp::kAdded, std::string(l)});
  }
  for (const DiffLine& l : *diff) {
    if (l.op == DiffOp::kAdded) ++*added;
    if (l.op == DiffOp::kRemoved) ++*removed;
    *text += static_cast<char>(l.op);
    *text += l.text;
    *text += '\n';
  }
}

std::optional<ToolCallText> DescribeEdit(const Json& args, bool multi) {
  const std::string path = Str(args, "file_path");
  std::vector<std::pair<std::string, std::string>> edits;
  if (multi) {
    const Json& list = MemberOf(args, "edits");
    if (!list.is_array()) return std::nullopt;
    for (const Json& e : list) {
      edits.emplace_back(Str(e, "old_string"), Str(e, "new_string"));
    }
  } else {
    if (!MemberOf(args, "old_string").is_string() && !MemberOf(args, "new_string").is_string()) {
      return std::nullopt;
    }
    edits.emplace_back(Str(args, "old_string"), Str(args, "new_string"));
  }
  if (path.empty()) return std::nullopt;
  std::string text = "--- " + path + "\n+++ " + path + "\n";
  size_t added = 0, removed = 0;
  for (size_t i = 0; i < edits.size(); ++i) {
    if (edits.size() > 1) {
      text += "@@ edit " + std::to_string(i + 1) + " of " + std::to_string(edits.size()) + " @@\n";
    }
    AppendEditDiff(edits[i].first, edits[i].second, &text, &added, &removed);
  }
  if (text.ends_with('\n')) text.pop_back();
  ToolCallText t;
  t.summary = "Edited " + path + ": " + Counts(added, removed);
  if (multi) t.summary += " (" + Plural(edits.size(), "edit") + ")";
  t.blocks.push_back({.caption = "", .language = "diff", .text = std::move(text)});
  return t;
}

std::optional<ToolCallText> DescribeWrite(const Json& args) {
  const std::string path = Str(args, "file_path");
  if (path.empty() || !MemberOf(args, "content").is_string()) return std::nullopt;
  const std::string content = Str(args, "content");
  ToolCallText t;
  t.summary = "Wrote " + path + " (" + Plural(CountLines(content), "line") + ")";
  t.blocks.push_back({.caption = path, .language = LanguageForPath(path), .text = content});
  return t;
}

std::optional<ToolCallText> DescribeRead(const Json& args) {
  const std::string path = Str(args, "file_path");
  if (path.empty()) return std::nullopt;
  ToolCallText t;
  t.summary = "Read " + path;
  const std::optional<int64_t> offset = Int(args, "offset"), limit = Int(args, "limit");
  const int64_t first = std::max<int64_t>(1, offset.value_or(1));
  if (limit && *limit > 0) {
    t.summary += " (lines " + std::to_string(first) + std::string(kEnDash) +
                 std::to_string(first + *limit - 1) + ")";
  } else if (offset) {
    t.summary += " (from line " + std::to_string(first) + ")";
  }
  return t;
}

std::optional<ToolCallText> DescribeNotebookEdit(const Json& args) {
  const std::string path = Str(args, "notebook_path");
  if (path.empty()) return std::nullopt;
  ToolCallText t;
  const std::string mode = Str(args, "edit_mode");
  t.summary = (mode == "delete"   ? "Deleted a cell of "
               : mode == "insert" ? "Inserted a cell in "
                                  : "Edited a cell of ") +
              path;
  const std::string source = Str(args, "new_source");
  if (!source.empty()) {
    t.blocks.push_back({.caption = "",
                        .language = Str(args, "cell_type") == "markdown" ? "markdown" : "python",
                        .text = source});
  }
  return t;
}

std::optional<ToolCallText> DescribeTodoWrite(const Json& args) {
  const Json& todos = MemberOf(args, "todos");
  if (!todos.is_array()) return std::nullopt;
  std::string text;
  for (const Json& todo : todos) {
    const std::string status = Str(todo, "status");
    text += status == "completed" ? "[x] " : status == "in_progress" ? "[~] " : "[ ] ";
    text += Str(todo, "content") + "\n";
  }
  if (text.ends_with('\n')) text.pop_back();
  ToolCallText t;
  t.summary = "Updated the to-do list (" + Plural(todos.size(), "item") + ")";
  if (!text.empty()) t.blocks.push_back({.caption = "", .language = "", .text = std::move(text)});
  return t;
}

// Codex's apply_patch: "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch".
std::optional<ToolCallText> DescribePatch(std::string_view patch) {
  if (patch.find("*** ") == std::string_view::npos) return std::nullopt;
  std::vector<std::string> files;
  size_t added = 0, removed = 0;
  for (std::string_view line : SplitLines(patch)) {
    for (std::string_view head : {"*** Update File: ", "*** Add File: ", "*** Delete File: "}) {
      if (line.starts_with(head)) files.emplace_back(line.substr(head.size()));
    }
    if (line.starts_with("***")) continue;
    if (line.starts_with("+")) ++added;
    if (line.starts_with("-")) ++removed;
  }
  if (files.empty()) return std::nullopt;
  ToolCallText t;
  t.summary = "Patched " + (files.size() == 1 ? files[0] : Plural(files.size(), "file")) + ": " +
              Counts(added, removed);
  std::string text(patch);
  while (text.ends_with('\n')) text.pop_back();
  t.blocks.push_back({.caption = "", .language = "diff", .text = std::move(text)});
  return t;
}

ToolCallText DescribeCommand(const std::string& command) {
  ToolCallText t;
  t.summary = "$ " + CommandHead(command);
  t.blocks.push_back({.caption = "", .language = "console", .text = "$ " + command});
  return t;
}

// `name` is mcp__<server>__<tool>: "server › tool" and the arguments.
std::optional<ToolCallText> DescribeMcp(std::string_view name, const std::optional<Json>& args,
                                        std::string_view raw) {
  std::string_view rest = name.substr(5);
  const size_t split = rest.find("__");
  const std::string_view server = rest.substr(0, split);
  const std::string_view tool = split == std::string_view::npos ? "" : rest.substr(split + 2);
  if (server.empty()) return std::nullopt;
  ToolCallText t;
  t.summary = std::string(server) + " " + std::string(kChevron) + " " +
              std::string(tool.empty() ? "?" : tool);
  std::string text =
      args ? args->dump(2, ' ', false, Json::error_handler_t::replace) : std::string(raw);
  if (!text.empty() && text != "{}" && text != "null") {
    t.blocks.push_back({.caption = "", .language = args ? "json" : "", .text = std::move(text)});
  }
  return t;
}

// The rules of the tools known by name; nullopt for another tool or
// arguments the rule cannot read.
std::optional<ToolCallText> DescribeKnown(std::string_view name, std::string_view raw) {
  std::optional<Json> args;
  if (Result<Json> parsed = ParseJson(raw); parsed) args = std::move(*parsed);
  if (name.starts_with("mcp__")) return DescribeMcp(name, args, raw);
  if (name == "apply_patch") {
    if (!args) return DescribePatch(raw);
    if (args->is_string()) return DescribePatch(args->get<std::string>());
    for (std::string_view key : {"input", "patch"}) {
      if (MemberOf(*args, key).is_string()) return DescribePatch(Str(*args, key));
    }
    return std::nullopt;
  }
  if (!args || !args->is_object()) return std::nullopt;
  const Json& a = *args;
  if (name == "Edit") return DescribeEdit(a, /*multi=*/false);
  if (name == "MultiEdit") return DescribeEdit(a, /*multi=*/true);
  if (name == "Write") return DescribeWrite(a);
  if (name == "Read") return DescribeRead(a);
  if (name == "NotebookEdit") return DescribeNotebookEdit(a);
  if (name == "TodoWrite") return DescribeTodoWrite(a);
  if (name == "Bash" || name == "shell" || name == "local_shell" || name == "exec_command" ||
      name == "container.exec") {
    const std::string command = CommandOf(a);
    if (command.empty()) return std::nullopt;
    return DescribeCommand(command);
  }
  ToolCallText t;
  if (name == "Grep" && !Str(a, "pattern").empty()) {
    t.summary = "Searched for \"" + Str(a, "pattern") + "\"";
    if (!Str(a, "path").empty()) t.summary += " in " + Str(a, "path");
    return t;
  }
  if (name == "Glob" && !Str(a, "pattern").empty()) {
    t.summary = "Listed files matching " + Str(a, "pattern");
    if (!Str(a, "path").empty()) t.summary += " in " + Str(a, "path");
    return t;
  }
  if (name == "WebFetch" && !Str(a, "url").empty()) {
    t.summary = "Fetched " + Str(a, "url");
    if (!Str(a, "prompt").empty())
      t.blocks.push_back({.caption = "", .language = "", .text = Str(a, "prompt")});
    return t;
  }
  if ((name == "WebSearch" || name == "web_search") && !Str(a, "query").empty()) {
    t.summary = "Searched the web for \"" + Str(a, "query") + "\"";
    return t;
  }
  if ((name == "Task" || name == "Agent") && !Str(a, "description").empty()) {
    t.summary = "Sub-agent: " + Str(a, "description");
    if (!Str(a, "prompt").empty())
      t.blocks.push_back({.caption = "", .language = "", .text = Str(a, "prompt")});
    return t;
  }
  return std::nullopt;
}

// The result's output as a block: "Output" (or "Error"), with its size when long.
ToolTextBlock OutputBlock(const Part& result) {
  std::string caption = result.is_error ? "Error" : "Output";
  if (IsLongOutput(result.text)) caption += ", " + OutputSize(result.text);
  std::string text = result.text;
  while (text.ends_with('\n')) text.pop_back();
  return {.caption = std::move(caption), .language = "", .text = std::move(text)};
}

}  // namespace

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::optional<std::vector<DiffLine>> DiffLines(std::string_view old_text, std::string_view new_text,
                                               size_t max_cells) {
  const std::vector<std::string_view> a = SplitLines(old_text), b = SplitLines(new_text);
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  const size_t n = a.size() - head - tail, m = b.size() - head - tail;
  if (n > 0 && m > 0 && n > max_cells / m) return std::nullopt;
  // lcs[i][j]: the longest common subsequence of a[head+i..] and b[head+j..].
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  const auto at = [m](size_t i, size_t j) { return i * (m + 1) + j; };
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[at(i, j)] = a[head + i] == b[head + j] ? lcs[at(i + 1, j + 1)] + 1
                                                 : std::max(lcs[at(i + 1, j)], lcs[at(i, j + 1)]);
    }
  }
  std::vector<DiffLine> out;
  out.reserve(head + tail + n + m);
  for (size_t k = 0; k < head; ++k) out.push_back({DiffOp::kSame, std::string(a[k])});
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[head + i] == b[head + j]) {
      out.push_back({DiffOp::kSame, std::string(a[head + i])});
      ++i, ++j;
    } else if (i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)])) {
      out.push_back({DiffOp::kRemoved, std::string(a[head + i])});
      ++i;
    } else {
      out.push_back({DiffOp::kAdded, std::string(b[head + j])});
      ++j;
    }
  }
  for (size_t k = a.size() - tail; k < a.size(); ++k)
    out.push_back({DiffOp::kSame, std::string(a[k])});
  return out;
}

size_t CountLines(std::string_view text) { return SplitLines(text).size(); }

bool IsLongOutput(std::string_view text) {
  return text.size() > kLongOutputBytes || CountLines(text) > kLongOutputLines;
}

std::string OutputSize(std::string_view text) {
  return Plural(CountLines(text), "line") + ", " + FormatBytes(static_cast<int64_t>(text.size()));
}

std::string LanguageForPath(std::string_view path) {
  const std::string_view base = path.substr(path.find_last_of('/') + 1);
  if (base == "CMakeLists.txt") return "cmake";
  if (base == "Makefile" || base == "makefile" || base == "GNUmakefile") return "make";
  if (base == "Dockerfile") return "dockerfile";
  const size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  std::string ext(base.substr(dot + 1));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::string, std::less<>> kLanguages = {
      {"py", "python"},
      {"js", "javascript"},
      {"mjs", "javascript"},
      {"cjs", "javascript"},
      {"jsx", "jsx"},
      {"ts", "typescript"},
      {"tsx", "tsx"},
      {"c", "c"},
      {"h", "cpp"},
      {"cc", "cpp"},
      {"cpp", "cpp"},
      {"cxx", "cpp"},
      {"hh", "cpp"},
      {"hpp", "cpp"},
      {"rs", "rust"},
      {"go", "go"},
      {"java", "java"},
      {"kt", "kotlin"},
      {"swift", "swift"},
      {"rb", "ruby"},
      {"php", "php"},
      {"cs", "csharp"},
      {"sh", "bash"},
      {"bash", "bash"},
      {"zsh", "bash"},
      {"md", "markdown"},
      {"json", "json"},
      {"yaml", "yaml"},
      {"yml", "yaml"},
      {"toml", "toml"},
      {"html", "html"},
      {"css", "css"},
      {"scss", "scss"},
      {"sql", "sql"},
      {"xml", "xml"},
      {"cmake", "cmake"},
      {"lua", "lua"},
      {"r", "r"},
      {"scala", "scala"},
      {"ini", "ini"},
      {"dockerfile", "dockerfile"}};
  auto it = kLanguages.find(ext);
  return it == kLanguages.end() ? "" : it->second;
}

ToolCallText DescribeToolCall(const Part& call, const Part* result) {
  std::optional<ToolCallText> known = DescribeKnown(call.tool_name, call.arguments_json);
  ToolCallText t;
  if (known) {
    t = std::move(*known);
  } else {
    t.blocks.push_back({.caption = "",
                        .language = "json",
                        .text = call.arguments_json.empty() ? "{}" : call.arguments_json});
  }
  if (!result) return t;
  if (result->is_error && !t.summary.empty()) t.summary += " (error)";
  const bool command = !t.blocks.empty() && t.blocks.back().language == "console";
  if (command && !IsLongOutput(result->text)) {
    // `$ command` and its output, one console block.
    ToolTextBlock& b = t.blocks.back();
    std::string output = result->text;
    while (output.ends_with('\n')) output.pop_back();
    if (!output.empty()) b.text += "\n" + output;
    return t;
  }
  if (!result->text.empty()) t.blocks.push_back(OutputBlock(*result));
  return t;
}

ToolCallText DescribeToolResult(const Part& result) {
  ToolCallText t;
  if (!result.text.empty()) t.blocks.push_back(OutputBlock(result));
  return t;
}

void ToolResultPairing::Add(const Message& m) {
  for (const Part& p : m.parts) {
    if (p.type == PartType::kToolCall) calls_.emplace(&p, next_);
    if (p.type == PartType::kToolResult) results_[p.tool_call_id].emplace_back(next_, &p);
    ++next_;
  }
}

const Part* ToolResultPairing::TakeResultFor(const Part& call) {
  auto place = calls_.find(&call);
  auto found = results_.find(call.tool_call_id);
  if (call.tool_call_id.empty() || place == calls_.end() || found == results_.end()) return nullptr;
  for (const auto& [at, part] : found->second) {
    if (at > place->second && !taken_.contains(part)) {
      taken_.insert(part);
      return part;
    }
  }
  return nullptr;
}

bool ToolResultPairing::TakenWithCall(const Part& result) const { return taken_.contains(&result); }

}  // namespace sessiondb
