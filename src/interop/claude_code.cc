// The claude-code format: Claude Code transcripts, ~/.claude/projects/<slug>/
// <session>.jsonl (and sub-agent files, agent-*.jsonl beside them or under
// <session>/subagents/). See docs/interop.md, "claude-code".
//
// Each file is read twice: a first pass scans only the top-level ids of each
// record (uuid, parentUuid, logicalParentUuid, type) into a compact graph;
// the main line is the parentUuid chain ending at the file's last
// conversation record, and every other leaf's chain (up to where it joins a
// line already taken) is a side branch, imported as a session of its own.
// A second pass parses just the records of each line, in file order (a
// child is always written after its parent), and hands them to the sink.
// Memory: the graph (about 40 bytes a record) plus one record.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>

#include "blob/base64.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "interop/formats.h"
#include "interop/jsonl_reader.h"
#include "interop/source_scan.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "claude-code";

uint64_t Key(std::string_view uuid) {
  // FNV-1a, 64 bits; 0 is reserved for "none".
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : uuid) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

struct Node {
  uint64_t key = 0;
  uint64_t parent = 0;
  int64_t offset = 0;
  int64_t line = 0;
  uint32_t length = 0;
  bool conversational = false;  // user / assistant / system
  bool has_child = false;
  bool sidechain = false;
  int32_t owner = -1;  // the line (0 main, then branches) it belongs to
};

struct Line {
  std::vector<uint32_t> nodes;  // in file order
  uint64_t fork_key = 0;        // the record it branched from (0: its own root)
  int32_t fork_owner = -1;
  bool sidechain = false;
};

std::string Str(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The text of a tool_result's content: a string, or text blocks joined.
std::string ToolResultText(const json& content, std::vector<Part>* images,
                           std::string_view where, ImportSink& sink) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const json& b : content) {
    if (!b.is_object()) continue;
    const std::string type = Str(b, "type");
    if (type == "text") {
      if (!out.empty()) out += "\n";
      out += Str(b, "text");
    } else if (type == "image" && images) {
      const json& src = MemberOr(b, "source", json::object());
      auto bytes = blob::Base64Decode(Str(src, "data"));
      if (!bytes) {
        sink.Skip(std::string(where), "an image in a tool result is not valid base64: " +
                                          bytes.error().message());
        continue;
      }
      images->push_back(Part::ImageFromBytes(std::move(*bytes), Str(src, "media_type")));
    }
  }
  return out;
}

// The parts of a message's content (a string or an array of blocks).
std::vector<Part> ContentParts(const json& content, std::string_view where, ImportSink& sink) {
  std::vector<Part> parts;
  if (content.is_string()) {
    parts.push_back(Part::Text(content.get<std::string>()));
    return parts;
  }
  if (!content.is_array()) return parts;
  for (const json& b : content) {
    if (!b.is_object()) continue;
    const std::string type = Str(b, "type");
    if (type == "text") {
      parts.push_back(Part::Text(Str(b, "text")));
    } else if (type == "thinking") {
      parts.push_back(Part::Reasoning(Str(b, "thinking"), Str(b, "signature")));
    } else if (type == "tool_use" || type == "server_tool_use") {
      auto input = b.find("input");
      parts.push_back(Part::ToolCall(Str(b, "id"), Str(b, "name"),
                                     input == b.end() ? "{}" : input->dump()));
    } else if (type == "tool_result") {
      std::vector<Part> images;
      Part r =
          Part::ToolResult(Str(b, "tool_use_id"),
                           ToolResultText(MemberOr(b, "content", json()), &images, where, sink),
                           MemberOr(b, "is_error", false));
      parts.push_back(std::move(r));
      for (Part& i : images) parts.push_back(std::move(i));
    } else if (type == "image") {
      const json& src = MemberOr(b, "source", json::object());
      if (Str(src, "type") != "base64") {
        const std::string url = Str(src, "url");
        if (!url.empty()) parts.push_back(Part::Link(url, "", Str(src, "media_type")));
        continue;
      }
      auto bytes = blob::Base64Decode(Str(src, "data"));
      if (!bytes) {
        sink.Skip(std::string(where), "an image is not valid base64: " + bytes.error().message());
        continue;
      }
      parts.push_back(Part::ImageFromBytes(std::move(*bytes), Str(src, "media_type")));
    }
    // redacted_thinking, document and unknown blocks carry nothing to show.
  }
  return parts;
}

// Writes one line (main or branch) of a transcript file as a session.
class LineWriter {
 public:
  LineWriter(ImportSink& sink, std::string session_id, std::string file_label)
      : sink_(sink), session_id_(std::move(session_id)), label_(std::move(file_label)) {}

  // One record of the line, parsed.
  Status Record(const json& r, int64_t line_number) {
    const std::string where = label_ + ":" + std::to_string(line_number);
    const std::string type = Str(r, "type");
    const std::string uuid = Str(r, "uuid");
    const int64_t ts = ParseIsoTime(Str(r, "timestamp")).value_or(0);
    if (type == "system") {
      if (Str(r, "subtype") != "compact_boundary") return Status::Ok();
      RETURN_IF_ERROR(FlushPending());
      boundary_uuid_ = uuid;
      boundary_ts_ = ts;
      boundary_text_ = Str(r, "content");
      boundary_where_ = where;
      in_boundary_ = true;
      return Status::Ok();
    }
    if (type != "user" && type != "assistant") return Status::Ok();
    const json& msg = MemberOr(r, "message", json::object());
    if (in_boundary_ && MemberOr(r, "isCompactSummary", false)) {
      std::vector<Part> parts = ContentParts(MemberOr(msg, "content", json()), where, sink_);
      std::string text;
      for (const Part& p : parts) {
        if (p.type == PartType::kText) text += p.text;
      }
      boundary_text_ = text;
      return EmitBoundary();
    }
    RETURN_IF_ERROR(EmitBoundary());
    const std::string message_id = Str(msg, "id");
    if (type == "assistant" && pending_ && !message_id.empty() && message_id == pending_id_) {
      // Claude Code writes each content block of a response as a record of
      // its own; they are one message.
      for (Part& p : ContentParts(MemberOr(msg, "content", json()), where, sink_)) {
        pending_->message.parts.push_back(std::move(p));
      }
      SetUsage(msg, &pending_->message);
      return Status::Ok();
    }
    RETURN_IF_ERROR(FlushPending());
    Event e;
    e.type = EventType::kMessage;
    e.id = StableEventId(session_id_, uuid.empty() ? where : uuid);
    e.ts_ms = ts;
    Message& m = e.message;
    m.parts = ContentParts(MemberOr(msg, "content", json()), where, sink_);
    if (type == "assistant") {
      m.role = Role::kAssistant;
      m.model = Str(msg, "model");
      m.provider = "anthropic";
      SetUsage(msg, &m);
    } else {
      bool all_results = !m.parts.empty();
      for (const Part& p : m.parts) {
        if (p.type != PartType::kToolResult && p.type != PartType::kImage) all_results = false;
      }
      m.role = all_results ? Role::kTool : Role::kUser;
    }
    json meta = {{"uuid", uuid}};
    if (MemberOr(r, "isMeta", false)) meta["is_meta"] = true;
    m.metadata_json = meta.dump();
    if (m.parts.empty()) {
      sink_.Skip(where, "a " + type + " record with no content sessiondb can keep");
      return Status::Ok();
    }
    pending_ = std::move(e);
    pending_where_ = where;
    pending_id_ = type == "assistant" ? message_id : "";
    return Status::Ok();
  }

  Status Finish() {
    RETURN_IF_ERROR(EmitBoundary());
    return FlushPending();
  }

  int64_t events() const { return seq_; }

 private:
  static void SetUsage(const json& msg, Message* m) {
    auto u = msg.find("usage");
    if (u == msg.end() || !u->is_object()) return;
    Usage usage;
    usage.input_tokens = MemberOr(*u, "input_tokens", int64_t{0}) +
                         MemberOr(*u, "cache_creation_input_tokens", int64_t{0}) +
                         MemberOr(*u, "cache_read_input_tokens", int64_t{0});
    usage.cached_tokens = MemberOr(*u, "cache_read_input_tokens", int64_t{0});
    usage.output_tokens = MemberOr(*u, "output_tokens", int64_t{0});
    m->usage = usage;
  }

  Status FlushPending() {
    if (!pending_) return Status::Ok();
    Event e = std::move(*pending_);
    pending_.reset();
    if (ImportSink::WouldKeep(e.message)) ++seq_;
    return sink_.Add(std::move(e), pending_where_);
  }

  Status EmitBoundary() {
    if (!in_boundary_) return Status::Ok();
    in_boundary_ = false;
    RETURN_IF_ERROR(FlushPending());
    if (seq_ == 0) return Status::Ok();  // nothing before it to stand in for
    Event e;
    e.type = EventType::kCompaction;
    e.id = StableEventId(session_id_, boundary_uuid_.empty() ? boundary_where_ : boundary_uuid_);
    e.ts_ms = boundary_ts_;
    e.compaction.from_seq = 1;
    e.compaction.to_seq = seq_;
    e.compaction.summary = boundary_text_.empty() ? "Conversation compacted" : boundary_text_;
    e.compaction.strategy = "claude-code-compact";
    ++seq_;
    return sink_.Add(std::move(e), boundary_where_);
  }

  ImportSink& sink_;
  std::string session_id_;
  std::string label_;
  int64_t seq_ = 0;  // events the sink holds for this session so far
  std::optional<Event> pending_;
  std::string pending_where_;
  std::string pending_id_;
  bool in_boundary_ = false;
  std::string boundary_uuid_;
  std::string boundary_text_;
  std::string boundary_where_;
  int64_t boundary_ts_ = 0;
};

class FileImport {
 public:
  FileImport(const fs::path& path, const fs::path& root, ImportSink& sink)
      : path_(path), sink_(sink) {
    std::error_code ec;
    fs::path rel = fs::relative(path, root, ec);
    label_ = (ec || rel.empty() || rel == ".") ? path.filename().string() : rel.string();
  }

  Status Run() {
    RETURN_IF_ERROR(Scan());
    if (last_conversational_ < 0) return Status::Ok();
    BuildLines();
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) return Status::Io("cannot reopen " + path_.string());
    Status s = Status::Ok();
    for (size_t i = 0; i < lines_.size() && s.ok(); ++i) s = WriteLine(f, i);
    std::fclose(f);
    if (s.ok()) sink_.Progress(total_bytes_, total_bytes_);
    return s;
  }

 private:
  // Pass 1: the graph.
  Status Scan() {
    ASSIGN_OR_RETURN(auto reader, JsonlReader::Open(path_.string()));
    JsonlReader::Line line;
    ScannedValue v[9];
    int64_t offset = 0;
    while (true) {
      ASSIGN_OR_RETURN(bool more, reader->Next(&line));
      if (!more) break;
      const int64_t start = offset;
      offset = reader->bytes_read();
      // The scan is the first half of the work shown; writing, the second.
      if ((line.number & 1023) == 0) sink_.Progress(offset / 2, reader->total_bytes());
      const std::string where = label_ + ":" + std::to_string(line.number);
      if (line.too_long) {
        sink_.Skip(where, "the line is longer than the limit of " +
                              std::to_string(kMaxLineBytes) + " bytes");
        continue;
      }
      if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (!ScanTopLevel(line.text,
                        {"uuid", "parentUuid", "logicalParentUuid", "type", "sessionId", "cwd",
                         "isSidechain", "summary", "leafUuid"},
                        v)) {
        sink_.Skip(where, line.at_eof_without_newline
                              ? "the last line is cut short (no newline, not whole JSON)"
                              : "the line is not a JSON object");
        continue;
      }
      const std::string_view type = v[3].raw;
      if (type == "summary" && v[7].found) {
        summaries_.emplace_back(Key(v[8].raw), std::string(line.text));
        continue;
      }
      if (!v[0].found || !v[0].is_string) continue;  // snapshots, queue operations...
      if (session_source_.empty()) session_source_ = ScannedString(v[4]).value_or("");
      if (cwd_.empty()) cwd_ = ScannedString(v[5]).value_or("");
      Node n;
      n.key = Key(v[0].raw);
      if (v[1].is_string) {
        n.parent = Key(v[1].raw);
      } else if (v[2].is_string) {
        n.parent = Key(v[2].raw);  // a compact boundary continues its logical parent
      }
      n.offset = start;
      n.length = static_cast<uint32_t>(line.text.size());
      n.line = line.number;
      n.conversational = type == "user" || type == "assistant" || type == "system";
      n.sidechain = v[6].raw == "true";
      if (index_.emplace(n.key, static_cast<uint32_t>(nodes_.size())).second) {
        if (n.conversational) last_conversational_ = static_cast<int64_t>(nodes_.size());
        nodes_.push_back(n);
      }
    }
    total_bytes_ = reader->total_bytes();
    sink_.Progress(total_bytes_ / 2, total_bytes_);
    return Status::Ok();
  }

  const Node* Parent(const Node& n) const {
    if (n.parent == 0) return nullptr;
    auto it = index_.find(n.parent);
    return it == index_.end() ? nullptr : &nodes_[it->second];
  }

  void BuildLines() {
    for (Node& n : nodes_) {
      if (n.parent == 0) continue;
      auto it = index_.find(n.parent);
      if (it != index_.end()) nodes_[it->second].has_child = true;
    }
    auto take = [&](uint32_t leaf) {
      Line l;
      const int32_t owner = static_cast<int32_t>(lines_.size());
      Node* n = &nodes_[leaf];
      while (n && n->owner < 0) {
        n->owner = owner;
        l.nodes.push_back(static_cast<uint32_t>(n - nodes_.data()));
        l.sidechain = l.sidechain || n->sidechain;
        const Node* p = Parent(*n);
        if (p && p->owner >= 0) {
          l.fork_key = p->key;
          l.fork_owner = p->owner;
        }
        n = const_cast<Node*>(p);
      }
      std::reverse(l.nodes.begin(), l.nodes.end());
      lines_.push_back(std::move(l));
    };
    take(static_cast<uint32_t>(last_conversational_));
    for (uint32_t i = 0; i < nodes_.size(); ++i) {
      if (!nodes_[i].has_child && nodes_[i].conversational && nodes_[i].owner < 0) take(i);
    }
  }

  std::string LineSessionId(size_t i) const {
    std::string base = SourceId();
    if (i == 0) return StableSessionId(kFormat, base);
    const Node& first = nodes_[lines_[i].nodes.front()];
    return StableSessionId(kFormat, base + "/branch/" + std::to_string(first.key));
  }

  // The source id of the file's main session: the file's stem (Claude Code
  // names files after their session), qualified by the parent session for
  // sub-agent files, whose records carry the parent's sessionId.
  std::string SourceId() const {
    const std::string stem = path_.stem().string();
    if (stem.rfind("agent-", 0) == 0) {
      std::string parent = session_source_;
      if (parent.empty()) parent = path_.parent_path().filename().string();
      return parent + "/" + stem;
    }
    return stem;
  }

  std::string Title(const Line& l) const {
    // A summary record names a line by its leaf.
    const uint64_t leaf = nodes_[l.nodes.back()].key;
    for (const auto& [key, text] : summaries_) {
      if (key != leaf) continue;
      Result<json> summary = ParseJson(text);
      if (!summary || !summary->is_object()) return "";
      const auto it = summary->find("summary");
      return it != summary->end() && it->is_string() ? it->get<std::string>() : "";
    }
    return "";
  }

  Status WriteLine(std::FILE* f, size_t i) {
    const Line& l = lines_[i];
    // Branches made only of records with nothing to show are left out.
    bool any = false;
    for (uint32_t n : l.nodes) any = any || nodes_[n].conversational;
    if (!any) return Status::Ok();
    Session s;
    s.id = LineSessionId(i);
    s.title = Title(l);
    json meta = {{"source", kFormat}, {"source_file", label_}};
    if (!session_source_.empty()) meta["source_session_id"] = session_source_;
    if (!cwd_.empty()) meta["cwd"] = cwd_;
    const std::string stem = path_.stem().string();
    if (i == 0 && stem.rfind("agent-", 0) == 0 && !session_source_.empty()) {
      meta["subagent_of"] = StableSessionId(kFormat, session_source_);
      meta["agent_id"] = stem.substr(6);
    }
    if (i > 0) {
      meta["forked_from"] = LineSessionId(l.fork_owner >= 0 ? l.fork_owner : 0);
      if (l.fork_owner >= 0) {
        // The uuid of the record it forked at, as the source spells it.
        meta["fork_uuid"] = ForkUuid(f, l.fork_key);
      }
      if (l.sidechain) meta["sidechain"] = true;
    }
    s.metadata_json = meta.dump();
    RETURN_IF_ERROR(sink_.BeginSession(s));
    LineWriter writer(sink_, s.id, label_);
    std::string buf;
    for (uint32_t idx : l.nodes) {
      const Node& n = nodes_[idx];
      if (!n.conversational) continue;
      buf.resize(n.length);
      if (fseeko(f, n.offset, SEEK_SET) != 0 || std::fread(buf.data(), 1, n.length, f) != n.length) {
        return Status::Io("cannot read " + path_.string() + " line " + std::to_string(n.line));
      }
      written_bytes_ += n.length;
      if ((++written_records_ & 1023) == 0) {
        sink_.Progress(total_bytes_ / 2 + written_bytes_ / 2, total_bytes_);
      }
      Result<json> parsed = ParseJson(std::string_view(buf.data(), buf.size()));
      if (!parsed || !parsed->is_object()) {
        sink_.Skip(label_ + ":" + std::to_string(n.line),
                   !parsed && IsJsonNestingError(parsed.error()) ? parsed.error().message()
                                                                 : "the line is not valid JSON");
        continue;
      }
      json& r = *parsed;
      RETURN_IF_ERROR(writer.Record(r, n.line));
    }
    RETURN_IF_ERROR(writer.Finish());
    return sink_.EndSession();
  }

  std::string ForkUuid(std::FILE* f, uint64_t key) const {
    auto it = index_.find(key);
    if (it == index_.end()) return "";
    const Node& n = nodes_[it->second];
    std::string buf(n.length, '\0');
    if (fseeko(f, n.offset, SEEK_SET) != 0 || std::fread(buf.data(), 1, n.length, f) != n.length) {
      return "";
    }
    ScannedValue v[1];
    if (!ScanTopLevel(buf, {"uuid"}, v)) return "";
    return ScannedString(v[0]).value_or("");
  }

  fs::path path_;
  ImportSink& sink_;
  std::string label_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<std::pair<uint64_t, std::string>> summaries_;  // leaf key, the record
  std::vector<Line> lines_;
  int64_t last_conversational_ = -1;
  int64_t total_bytes_ = 0;
  int64_t written_bytes_ = 0;  // of the records written so far (each is in one line)
  int64_t written_records_ = 0;
  std::string session_source_;
  std::string cwd_;
};

bool IsTranscript(const fs::path& p) { return p.extension() == ".jsonl"; }

bool LooksLikeClaudeCode(std::string_view head) {
  return head.find("\"sessionId\"") != std::string_view::npos &&
         (head.find("\"parentUuid\"") != std::string_view::npos ||
          head.find("\"leafUuid\"") != std::string_view::npos);
}

int Detect(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    return IsTranscript(path) && LooksLikeClaudeCode(PeekFile(path, 16384)) ? 90 : 0;
  }
  if (!fs::is_directory(path, ec)) return 0;
  // A projects tree or one project folder: the first transcript decides.
  int seen = 0;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end && seen < 200;
       it.increment(ec), ++seen) {
    if (it.depth() > 3) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && IsTranscript(it->path())) {
      return LooksLikeClaudeCode(PeekFile(it->path(), 16384)) ? 80 : 0;
    }
  }
  return 0;
}

Status Run(const fs::path& path, ImportSink& sink) {
  std::error_code ec;
  const fs::path root = fs::is_directory(path, ec) ? path : path.parent_path();
  const std::vector<fs::path> files = FilesUnder(path, IsTranscript);
  if (files.empty()) return Status::InvalidArgument("no .jsonl transcripts under " + path.string());
  // Main sessions before their sub-agents, so "subagent_of" names a session
  // that is already there.
  std::vector<fs::path> ordered;
  for (const auto& f : files) {
    if (f.stem().string().rfind("agent-", 0) != 0) ordered.push_back(f);
  }
  for (const auto& f : files) {
    if (f.stem().string().rfind("agent-", 0) == 0) ordered.push_back(f);
  }
  const std::vector<int64_t> sizes = FileSizes(ordered);
  const int64_t overall = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  int64_t before = 0;
  for (size_t i = 0; i < ordered.size(); ++i) {
    sink.ProgressWithinFile(before, sizes[i], overall);
    FileImport file(ordered[i], root, sink);
    RETURN_IF_ERROR(file.Run());
    before += sizes[i];
  }
  return Status::Ok();
}

}  // namespace

ImportFormatSpec ClaudeCodeImport() { return {kFormat, Detect, Run}; }

}  // namespace sessiondb::interop
