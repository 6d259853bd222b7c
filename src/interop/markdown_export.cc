// The markdown export: a readable transcript per session, OUT/<id>.md, with
// its images (and other attachments) beside it as files, OUT/<id>/<sha12>.<ext>,
// linked with Markdown image syntax. Roles are headings; a tool call reads as
// what it did (core/tool_call_text.h: an Edit a diff, a Bash call `$ command`
// and its output, ...) with its result right under it, even when the result
// came in a later message, which then only points up to it; compactions and
// resource views are marked notes. The same session gives the same bytes
// (times are the events' own, in UTC).
#include <algorithm>
#include <fstream>

#include "blob/media_type.h"
#include "core/iso_time.h"
#include "core/tool_call_text.h"
#include "interop/formats.h"
#include "interop/output_file.h"
#include "interop/session_lineage.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;

// A fence longer than any run of backticks in `text`, so the block holds it.
std::string Fence(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string Fenced(std::string_view text, std::string_view lang = "") {
  const std::string fence = Fence(text);
  std::string out = fence + std::string(lang) + "\n" + std::string(text);
  if (out.back() != '\n') out += '\n';
  return out + fence + "\n\n";
}

// Every line of `text` prefixed with "> ".
std::string Quoted(std::string_view text) {
  std::string out = "> ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "> ";
  }
  return out + "\n";
}

// `text` on one line with the characters Markdown would read as markup
// escaped, for a caption or summary made of a path or a command.
std::string PlainLine(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\`*_[]<>#|~").find(c) != std::string_view::npos) out += '\\';
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out;
}

// Characters that would end a link's text or target.
std::string LinkText(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string RoleHeading(Role role) {
  switch (role) {
    case Role::kSystem:
      return "System";
    case Role::kUser:
      return "User";
    case Role::kAssistant:
      return "Assistant";
    case Role::kTool:
      return "Tool";
  }
  return "Message";
}

class Transcript {
 public:
  Transcript(Store& store, const Session& session, const fs::path& out, FileSystem& file_system,
             ExportReport* report)
      : store_(store), session_(session), out_(out), fs_(file_system), report_(report) {}

  Result<std::string> Render() {
    ASSIGN_OR_RETURN(std::vector<Event> events, store_.ReadEvents(session_.id));
    md_ = "# " + (session_.title.empty() ? session_.id : session_.title) + "\n\n";
    md_ += "- Session: `" + session_.id + "`\n";
    md_ += "- Created: " + FormatUtcTime(session_.created_ms, UtcTimeForm::kReadable) + "\n";
    md_ += "- Updated: " + FormatUtcTime(session_.updated_ms, UtcTimeForm::kReadable) + "\n";
    if (std::optional<Lineage> lineage = SessionLineage(session_, events)) {
      md_ += LineageLine(*lineage);
    }
    if (session_.archived) md_ += "- Archived\n";
    md_ += "\n";
    // The session's view, as a reader sees it: a rewind is not written, nor
    // what it took out.
    const std::vector<Event> view = ApplyRewinds(std::move(events));
    for (const Event& e : view) {
      if (e.type == EventType::kMessage && !e.message.pruned) pairing_.Add(e.message);
    }
    for (const Event& e : view) {
      switch (e.type) {
        case EventType::kMessage:
          RETURN_IF_ERROR(RenderMessage(e.message));
          break;
        case EventType::kResourceView: {
          const ResourceView& v = e.resource_view;
          md_ += Quoted("**Viewed** " + Label(v.resource) + " from event " +
                        std::to_string(v.message_seq) + (v.reason.empty() ? "" : ": " + v.reason)) +
                 "\n";
          break;
        }
        case EventType::kCompaction: {
          const Compaction& c = e.compaction;
          std::string note = "**Compaction** of events " + std::to_string(c.from_seq) + "–" +
                             std::to_string(c.to_seq) + " (" +
                             FormatUtcTime(e.ts_ms, UtcTimeForm::kReadable) + ")";
          if (!c.strategy.empty()) note += ", " + c.strategy;
          if (!c.model.empty()) note += " by " + c.model;
          note += "\n\n" + c.summary;
          if (!c.limitations.empty()) note += "\n\n*Limitations:* " + c.limitations;
          md_ += Quoted(note) + "\n";
          break;
        }
        case EventType::kRewind:
          break;
      }
    }
    return md_;
  }

 private:
  // "- Forked from: ...": where the session branched from, one line.
  static std::string LineageLine(const Lineage& l) {
    const std::string parent = "`" + l.parent_session_id + "`";
    switch (l.kind) {
      case Lineage::Kind::kFork: {
        std::string line = "- Forked from: " + parent + " after event " + std::to_string(l.at_seq);
        if (!l.at_event_id.empty()) line += " (`" + l.at_event_id + "`)";
        return line + "\n";
      }
      case Lineage::Kind::kBranch: {
        std::string line =
            std::string(l.sidechain ? "- Side chain of: " : "- Branched from: ") + parent;
        if (!l.at_source_record.empty()) {
          line += " at its source record `" + l.at_source_record + "`";
        } else if (!l.source_parent_id.empty()) {
          line += " (source session `" + l.source_parent_id + "`)";
        }
        return line + "\n";
      }
      case Lineage::Kind::kSubagent: {
        std::string line = "- Sub-agent of: " + parent;
        if (!l.agent_id.empty()) line += " (agent `" + l.agent_id + "`)";
        return line + "\n";
      }
    }
    return "";
  }

  static std::string Label(const Resource& r) {
    return r.name.empty() ? (r.content_sha256.empty() ? r.uri : r.content_sha256.substr(0, 12))
                          : r.name;
  }

  Status RenderMessage(const Message& m) {
    ++report_->messages;
    md_ += "## " + RoleHeading(m.role);
    if (!m.model.empty()) md_ += " (" + m.model + ")";
    md_ += " · " + FormatUtcTime(m.ts_ms, UtcTimeForm::kReadable) + "\n\n";
    if (m.pruned) {
      md_ += "*(content pruned after compaction)*\n\n";
      return Status::Ok();
    }
    for (const Part& p : m.parts) {
      switch (p.type) {
        case PartType::kText:
          md_ += p.text + "\n\n";
          break;
        case PartType::kReasoning:
          // Encrypted reasoning has no text to show.
          if (!p.text.empty()) md_ += Quoted("**Reasoning**\n\n" + p.text) + "\n";
          break;
        case PartType::kToolCall:
          RenderToolCall(p);
          break;
        case PartType::kToolResult:
          RenderToolResult(p);
          break;
        case PartType::kImage:
        case PartType::kFile:
          RETURN_IF_ERROR(RenderAttachment(p));
          break;
        case PartType::kResourceLink:
          if (p.resource) {
            md_ += "[" + LinkText(Label(*p.resource)) + "](<" + p.resource->uri + ">)\n\n";
          }
          break;
      }
    }
    if (m.usage) {
      md_ += "*Tokens: " + std::to_string(m.usage->input_tokens) + " in, " +
             std::to_string(m.usage->output_tokens) + " out*\n\n";
    }
    return Status::Ok();
  }

  // "**Tool call** `Edit` (`id`): Edited a.py: +2 −1", then the call's blocks
  // and its result's.
  void RenderToolCall(const Part& call) {
    const ToolCallText t = DescribeToolCall(call, pairing_.TakeResultFor(call));
    md_ += "**Tool call** `" + call.tool_name + "` (`" + call.tool_call_id + "`)";
    if (!t.summary.empty()) md_ += ": " + PlainLine(t.summary);
    md_ += "\n\n";
    RenderBlocks(t);
  }

  // A result shown with its call points up to it; any other is its output.
  void RenderToolResult(const Part& result) {
    if (pairing_.TakenWithCall(result)) {
      md_ += "*Result of `" + result.tool_call_id + "`: shown with its call above.*\n\n";
      return;
    }
    md_ += std::string(result.is_error ? "**Tool error**" : "**Tool result**") + " (`" +
           result.tool_call_id + "`)\n\n";
    const ToolCallText t = DescribeToolResult(result);
    if (t.blocks.empty()) md_ += Fenced("");
    for (const ToolTextBlock& b : t.blocks) md_ += Fenced(b.text, b.language);
  }

  void RenderBlocks(const ToolCallText& t) {
    for (const ToolTextBlock& b : t.blocks) {
      if (!b.caption.empty()) md_ += PlainLine(b.caption) + "\n\n";
      md_ += Fenced(b.text, b.language);
    }
  }

  // Writes the attachment's bytes beside the transcript and links them.
  Status RenderAttachment(const Part& p) {
    if (!p.resource || p.resource->content_sha256.empty()) return Status::Ok();
    const Resource& r = *p.resource;
    const std::string rel = session_.id + "/" + r.content_sha256.substr(0, 12) + "." +
                            std::string(blob::ExtensionForMime(r.mime));
    Result<std::string> bytes = store_.ReadBlob(r.content_sha256);
    if (!bytes && bytes.error().code() == StatusCode::kNotFound) {
      md_ += "*(" + std::string(p.type == PartType::kImage ? "image" : "file") + " " +
             LinkText(Label(r)) + " is missing from the store)*\n\n";
      return Status::Ok();
    }
    if (!bytes) return bytes.error();
    const fs::path file = out_ / rel;
    std::error_code ec;
    if (!fs::exists(file, ec)) {  // content-addressed: an existing file holds these bytes
      OutputFile f(fs_);
      RETURN_IF_ERROR(f.Open(file));
      f.Write(*bytes);
      RETURN_IF_ERROR(f.Commit());
      report_->files.push_back(file.string());
    }
    if (p.type == PartType::kImage) {
      ++report_->images;
      md_ += "![" + LinkText(r.name.empty() ? "image" : r.name) + "](" + rel + ")\n\n";
    } else {
      md_ += "[" + LinkText(Label(r)) + "](" + rel + ")\n\n";
    }
    return Status::Ok();
  }

  Store& store_;
  const Session& session_;
  const fs::path& out_;
  FileSystem& fs_;
  ExportReport* report_;
  std::string md_;
  ToolResultPairing pairing_;
};

Status ExportMarkdown(Store& store, std::span<const Session> sessions, const fs::path& out,
                      FileSystem& file_system, ExportReport* report) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    return Status::AlreadyExists(out.string() + " is a file; markdown exports to a folder");
  }
  RETURN_IF_ERROR(CreateDirectories(file_system, out));
  for (const Session& s : sessions) {
    const fs::path file = out / (s.id + ".md");
    OutputFile f(file_system);
    RETURN_IF_ERROR(f.Open(file));
    Transcript transcript(store, s, out, file_system, report);
    ASSIGN_OR_RETURN(std::string md, transcript.Render());
    f.Write(md);
    RETURN_IF_ERROR(f.Commit());
    report->files.push_back(file.string());
    ++report->sessions;
  }
  return Status::Ok();
}

}  // namespace

ExportFormatSpec MarkdownExport() { return {ExportFormat::kMarkdown, ExportMarkdown}; }

}  // namespace sessiondb::interop
