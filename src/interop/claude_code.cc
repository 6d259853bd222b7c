// The claude-code format: Claude Code transcripts, ~/.claude/projects/<slug>/
// <session>.jsonl (and sub-agent files, agent-*.jsonl beside them or under
// <session>/subagents/). See docs/interop.md, "claude-code".
//
// Each file is read twice. A first pass scans only the top-level ids of each
// record (uuid, parentUuid, logicalParentUuid, type, sessionId) into a
// compact graph. Records are grouped by sessionId (a file may hold another
// session's records: one conversation is never imported under the other's
// name). In each group the main line is the parentUuid chain ending at the
// group's last conversation record off side chains (isSidechain), and every
// other leaf's chain (up to where it joins a line already taken) is a side
// branch, imported as a session of its own. A record whose parent is missing (null, or not in the
// file) continues the record before it in file order, unless it starts a side chain; a conversation
// record without a uuid is kept the same way. A second pass parses just the records of each line,
// in chain order, and hands them to the sink.
//
// Claude Code writes one assistant response as several records (one per
// content block, all under the response's message.id); they are one message.
// A transcript copied while a response was being written holds only its first
// blocks: a later import of the grown file asks the sink what the store
// holds of the response (ImportSink::StoredEvent) and adds the blocks written
// since as a message of their own, so a tool result never arrives without
// its tool call.
//
// Memory: the graph (about 100 bytes a record, with its index) plus one
// record, whose strings are moved from the parsed tree into the message
// rather than copied, and whose size is bounded as said below.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "blob/base64.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "interop/claude_file_history.h"
#include "interop/formats.h"
#include "interop/jsonl_reader.h"
#include "interop/long_record.h"
#include "interop/source_scan.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "claude-code";

// What bounds the memory of one record, whatever its size, is said in
// interop/long_record.h (the import's RSS stays under 256 MiB); here, in
// addition, one message gathers at most kMaxRecordTextBytes of a response's
// records (more make a message of their own).

// The bytes of text a message's parts hold.
size_t TextBytes(const std::vector<Part>& parts) {
  size_t n = 0;
  for (const Part& p : parts) n += p.text.size() + p.arguments_json.size();
  return n;
}

uint64_t Key(std::string_view uuid) {
  // FNV-1a, 64 bits; 0 is reserved for "none".
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : uuid) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

std::string Str(const json& obj, std::string_view key) { return MemberOr(obj, key, std::string()); }

// The string member `key` of `obj` moved out of the tree (each record is
// read once, and its texts may be tens of MiB), or nullopt when there is no
// such string.
std::optional<std::string> TakeString(json& obj, std::string_view key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  return std::move(it->get_ref<std::string&>());
}

// "a string", "an array"... for reasons that say what was found.
std::string KindOf(const json& v) { return JsonKindPhrase(v.type_name()); }

// Reads the blocks of one record's message.content into parts, checking
// each field's type; a block that cannot be read is left out with a reason
// naming the record and the block.
class ContentReader {
 public:
  // `cut`: the strings of the record that were cut to its text budget; an
  // image's is taken out of it (its image keeps a descriptor, not a note).
  ContentReader(std::string_view where, ImportSink& sink, std::vector<CutString>& cut)
      : where_(where), sink_(sink), cut_(cut) {}

  // `content` is a string or an array of blocks (the caller checked).
  std::vector<Part> Parts(json& content) {
    std::vector<Part> parts;
    if (content.is_string()) {
      parts.push_back(Part::Text(std::move(content.get_ref<std::string&>())));
      return parts;
    }
    size_t n = 0;
    for (json& b : content) Block(b, ++n, &parts);
    return parts;
  }

 private:
  void LeaveOut(size_t n, const std::string& why) {
    sink_.Skip(where_,
               "block " + std::to_string(n) + " of the message " + why + "; the block is left out");
  }

  // The string field `key` of block `n` (of type `type`), or nullopt with a reason.
  std::optional<std::string> Required(json& b, size_t n, std::string_view type,
                                      std::string_view key) {
    std::optional<std::string> s = TakeString(b, key);
    if (!s) {
      const json& v = MemberOf(b, key);
      LeaveOut(n,
               "(" + std::string(type) + ") has " +
                   (v.is_null() ? "no '" + std::string(key) + "'"
                                : "'" + std::string(key) + "' as " + KindOf(v) + ", not a string"));
    }
    return s;
  }

  // The image part of a base64 image source, or nullopt with a reason. One
  // whose base64 was cut to the record's budget keeps its descriptor (part
  // of an image is no image, and history is kept whole).
  std::optional<Part> ImagePart(json& src, size_t n, std::string_view what) {
    const std::string mime = Str(src, "media_type");
    if (auto it = src.find("data"); it != src.end()) {
      if (std::optional<CutString> cut = TakeCut(&cut_, &*it)) {
        return CutImagePart(sink_, *cut, 0, mime, where_);
      }
    }
    std::optional<std::string> data = TakeString(src, "data");
    if (!data) {
      LeaveOut(n, "(" + std::string(what) + ") has no base64 'data' string");
      return std::nullopt;
    }
    auto bytes = blob::Base64Decode(*data);
    if (!bytes) {
      LeaveOut(n, "(" + std::string(what) + ") is not valid base64: " + bytes.error().message());
      return std::nullopt;
    }
    return Part::ImageFromBytes(std::move(*bytes), mime);
  }

  void Block(json& b, size_t n, std::vector<Part>* parts) {
    if (!b.is_object()) {
      LeaveOut(n, "is " + KindOf(b) + ", not an object");
      return;
    }
    const std::string type = Str(b, "type");
    if (type == "text") {
      if (auto text = Required(b, n, type, "text")) parts->push_back(Part::Text(std::move(*text)));
    } else if (type == "thinking") {
      if (auto text = Required(b, n, type, "thinking")) {
        parts->push_back(Part::Reasoning(std::move(*text), Str(b, "signature")));
      }
    } else if (type == "tool_use" || type == "server_tool_use") {
      auto id = Required(b, n, type, "id");
      if (!id) return;
      auto name = Required(b, n, type, "name");
      if (!name) return;
      const json& input = MemberOf(b, "input");
      // The tree came from the parser, so its strings are UTF-8 and dump() is safe.
      parts->push_back(
          Part::ToolCall(std::move(*id), std::move(*name), input.is_null() ? "{}" : input.dump()));
    } else if (type == "tool_result") {
      ToolResult(b, n, parts);
    } else if (type == "image") {
      json& src = b["source"];
      if (!src.is_object()) {
        LeaveOut(n, "(image) has no 'source' object");
        return;
      }
      if (Str(src, "type") != "base64") {
        const std::string url = Str(src, "url");
        if (!url.empty()) parts->push_back(Part::Link(url, "", Str(src, "media_type")));
        return;
      }
      if (auto image = ImagePart(src, n, "image")) parts->push_back(std::move(*image));
    }
    // redacted_thinking, document and unknown blocks carry nothing to show.
  }

  // A tool_result block: the result (its content's text: a string, or its
  // text blocks joined) and the images inside it after it.
  void ToolResult(json& b, size_t n, std::vector<Part>* parts) {
    auto call_id = Required(b, n, "tool_result", "tool_use_id");
    if (!call_id) return;  // a result that answers no call cannot be replayed
    json& content = b["content"];
    std::string text;
    std::vector<Part> images;
    if (content.is_string()) {
      text = std::move(content.get_ref<std::string&>());
    } else if (content.is_array()) {
      for (json& inner : content) {
        const std::string type = Str(inner, "type");
        if (type == "text") {
          std::optional<std::string> t = TakeString(inner, "text");
          if (!t) continue;
          if (!text.empty()) text += "\n";
          text += *t;
        } else if (type == "image") {
          json& src = inner["source"];
          if (!src.is_object()) continue;
          if (auto image = ImagePart(src, n, "an image in a tool result")) {
            images.push_back(std::move(*image));
          }
        }
      }
    } else if (!content.is_null()) {
      sink_.Skip(where_, "block " + std::to_string(n) + " of the message (tool_result) has " +
                             "'content' as " + KindOf(content) +
                             ", not text or blocks; the result is kept without it");
    }
    parts->push_back(
        Part::ToolResult(std::move(*call_id), std::move(text), MemberOr(b, "is_error", false)));
    for (Part& i : images) parts->push_back(std::move(i));
  }

  std::string where_;
  ImportSink& sink_;
  std::vector<CutString>& cut_;
};

// A count of tokens from a usage object: a non-negative integer, else 0 (the
// store refuses negative counts, and one odd record must not stop a file).
int64_t Tokens(const json& usage, std::string_view key) {
  return std::max<int64_t>(0, MemberOr(usage, key, int64_t{0}));
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

// A message being gathered: one record, or the records of one assistant
// response.
struct PendingMessage {
  Message message;         // the parts of all its records, in order
  std::string message_id;  // an assistant response's message.id, else empty
  bool is_meta = false;
  size_t text_bytes = 0;  // of its parts
  std::string cwd;        // the folder its first record ran in
  struct Record {
    std::string key;   // the uuid, or the record's place when it has none
    std::string uuid;  // as the source spells it; empty if none
    std::string where;
    int64_t ts_ms = 0;
    size_t parts_end = 0;  // its parts end here in message.parts
  };
  std::vector<Record> records;

  // Where the parts of records[i] begin.
  size_t PartsBegin(size_t i) const { return i == 0 ? 0 : records[i - 1].parts_end; }
};

// Writes one line (main or branch) of a transcript file as a session. The
// session is begun with its first event, so a line none of whose records can
// be read leaves no empty session behind.
class LineWriter {
 public:
  LineWriter(ImportSink& sink, Session session, std::string file_label)
      : sink_(sink), session_(std::move(session)), label_(std::move(file_label)) {
    if (Result<json> meta = ParseJson(session_.metadata_json)) session_cwd_ = Str(*meta, "cwd");
  }

  // One record of the line, parsed (`cut`: its strings cut to the text
  // budget; those of images are taken out). Its strings may be moved out.
  Status Record(json& r, int64_t line_number, std::vector<CutString>& cut) {
    const std::string where = label_ + ":" + std::to_string(line_number);
    const std::string type = Str(r, "type");
    const std::string uuid = Str(r, "uuid");
    const int64_t ts = ParseIsoTime(Str(r, "timestamp")).value_or(0);
    if (type == "system") {
      if (Str(r, "subtype") != "compact_boundary") return Status::Ok();
      RETURN_IF_ERROR(FlushPending());
      boundary_uuid_ = uuid.empty() ? where : uuid;
      boundary_ts_ = ts;
      boundary_text_ = Str(r, "content");
      boundary_where_ = where;
      in_boundary_ = true;
      return Status::Ok();
    }
    if (type != "user" && type != "assistant") return Status::Ok();
    json& msg = r["message"];
    if (!msg.is_object()) {
      sink_.Skip(where, "the " + type + " record's message is " + KindOf(msg) +
                            ", not an object; the record is left out");
      return Status::Ok();
    }
    json& content = msg["content"];
    if (!content.is_string() && !content.is_array() && !content.is_null()) {
      sink_.Skip(where, "the " + type + " record's message.content is " + KindOf(content) +
                            ", not text or a list of blocks; the record is left out");
      return Status::Ok();
    }
    std::vector<Part> parts =
        content.is_null() ? std::vector<Part>() : ContentReader(where, sink_, cut).Parts(content);
    if (in_boundary_ && MemberOr(r, "isCompactSummary", false)) {
      std::string text;
      for (const Part& p : parts) {
        if (p.type == PartType::kText) text += p.text;
      }
      boundary_text_ = text;
      return EmitBoundary();
    }
    RETURN_IF_ERROR(EmitBoundary());
    const std::string message_id = Str(msg, "id");
    const std::string key = uuid.empty() ? where : uuid;
    const bool same_response = type == "assistant" && pending_ && !message_id.empty() &&
                               message_id == pending_->message_id;
    if (same_response && pending_->text_bytes + TextBytes(parts) <= kMaxRecordTextBytes) {
      // Claude Code writes each content block of a response as a record of
      // its own; they are one message.
      pending_->text_bytes += TextBytes(parts);
      for (Part& p : parts) pending_->message.parts.push_back(std::move(p));
      pending_->records.push_back({key, uuid, where, ts, pending_->message.parts.size()});
      SetUsage(msg, &pending_->message);
      return Status::Ok();
    }
    RETURN_IF_ERROR(FlushPending());
    if (parts.empty()) {
      sink_.Skip(where, "a " + type + " record with no content sessiondb can keep");
      return Status::Ok();
    }
    PendingMessage p;
    Message& m = p.message;
    p.text_bytes = TextBytes(parts);
    m.parts = std::move(parts);
    if (type == "assistant") {
      m.role = Role::kAssistant;
      m.model = Str(msg, "model");
      m.provider = "anthropic";
      // A response too long for one message goes on in another; its usage
      // is already on the first.
      if (!same_response) SetUsage(msg, &m);
      p.message_id = message_id;
    } else {
      // Role tool for tool results and the images they hold (which follow
      // them as parts of their own); images alone are the person's.
      bool any_result = false;
      bool all_results = true;
      for (const Part& part : m.parts) {
        any_result = any_result || part.type == PartType::kToolResult;
        if (part.type != PartType::kToolResult && part.type != PartType::kImage) {
          all_results = false;
        }
      }
      m.role = any_result && all_results ? Role::kTool : Role::kUser;
    }
    p.is_meta = MemberOr(r, "isMeta", false);
    p.cwd = Str(r, "cwd");
    p.records.push_back({key, uuid, where, ts, m.parts.size()});
    pending_ = std::move(p);
    return Status::Ok();
  }

  Status Finish() {
    RETURN_IF_ERROR(EmitBoundary());
    RETURN_IF_ERROR(FlushPending());
    if (!begun_) return Status::Ok();
    return sink_.EndSession();
  }

  int64_t events() const { return seq_; }

 private:
  static void SetUsage(const json& msg, Message* m) {
    const json& u = MemberOf(msg, "usage");
    if (!u.is_object()) return;
    Usage usage;
    // input_tokens is the whole input (docs/usage.md): Anthropic reports the
    // uncached part, the cache writes and the cache reads apart.
    usage.cached_tokens = Tokens(u, "cache_read_input_tokens");
    usage.cache_write_tokens = Tokens(u, "cache_creation_input_tokens");
    usage.input_tokens = SaturatingAdd(
        SaturatingAdd(Tokens(u, "input_tokens"), usage.cache_write_tokens), usage.cached_tokens);
    usage.output_tokens = Tokens(u, "output_tokens");
    m->usage = usage;
  }

  Status Begin() {
    if (begun_) return Status::Ok();
    begun_ = true;
    return sink_.BeginSession(session_);
  }

  Status Add(Event e, std::string_view where) {
    RETURN_IF_ERROR(Begin());
    if (e.type != EventType::kMessage || ImportSink::WouldKeep(e.message)) ++seq_;
    return sink_.Add(std::move(e), where);
  }

  // Hands the pending message to the sink: as one event, or, when the store
  // already holds the first records of a response from an import made while
  // it was being written, as the events the store holds (which the sink
  // passes over) and one more with the records written since.
  Status FlushPending() {
    if (!pending_) return Status::Ok();
    PendingMessage p = std::move(*pending_);
    pending_.reset();
    size_t first = 0;
    while (first < p.records.size()) {
      const std::string id = StableEventId(session_.id, p.records[first].key);
      size_t count = p.records.size() - first;
      if (p.records.size() > 1) {
        RETURN_IF_ERROR(Begin());
        ASSIGN_OR_RETURN(std::optional<Event> stored, sink_.StoredEvent(id));
        if (stored) count = RecordsHeld(*stored, p, first);
      }
      RETURN_IF_ERROR(AddRecords(p, first, count, id));
      first += count;
    }
    return Status::Ok();
  }

  // How many of the response's records, from `first` on, the stored event
  // holds: the count it keeps in its metadata, or (one record, or an event
  // imported before the count was kept) as many as make up its parts.
  static size_t RecordsHeld(const Event& stored, const PendingMessage& p, size_t first) {
    const size_t left = p.records.size() - first;
    if (stored.message.pruned) return left;  // its parts are gone: assume it is whole
    if (Result<json> meta = ParseJson(stored.message.metadata_json)) {
      const int64_t records = MemberOr(*meta, "records", int64_t{0});
      if (records >= 1) return std::min(static_cast<size_t>(records), left);
    }
    const size_t parts = stored.message.parts.size();
    const size_t begin = p.PartsBegin(first);
    for (size_t i = first; i < p.records.size(); ++i) {
      if (p.records[i].parts_end - begin >= parts) return i - first + 1;
    }
    return left;
  }

  // Adds records [first, first + count) of `p` as one event with id `id`.
  Status AddRecords(PendingMessage& p, size_t first, size_t count, const std::string& id) {
    const PendingMessage::Record& head = p.records[first];
    Event e;
    e.type = EventType::kMessage;
    e.id = id;
    e.ts_ms = head.ts_ms;
    Message& m = e.message;
    m.role = p.message.role;
    m.model = p.message.model;
    m.provider = p.message.provider;
    // The usage Claude Code writes is the whole response's: one event has it.
    if (first == 0) m.usage = p.message.usage;
    const size_t begin = p.PartsBegin(first);
    const size_t end = p.records[first + count - 1].parts_end;
    for (size_t i = begin; i < end; ++i) m.parts.push_back(std::move(p.message.parts[i]));
    json meta = json::object();
    if (!head.uuid.empty()) meta["uuid"] = head.uuid;
    if (count > 1) meta["records"] = count;
    if (first > 0) meta["continues"] = p.records[0].uuid;
    if (p.is_meta) meta["is_meta"] = true;
    // Tool calls made elsewhere than the session's folder say where: the
    // code memory resolves a relative path they write against it.
    if (!p.cwd.empty() && p.cwd != session_cwd_ &&
        std::any_of(m.parts.begin(), m.parts.end(),
                    [](const Part& part) { return part.type == PartType::kToolCall; })) {
      meta["cwd"] = p.cwd;
    }
    m.metadata_json = meta.dump();
    if (m.parts.empty()) {
      sink_.Skip(head.where, "an assistant record with no content sessiondb can keep");
      return Status::Ok();
    }
    return Add(std::move(e), head.where);
  }

  Status EmitBoundary() {
    if (!in_boundary_) return Status::Ok();
    in_boundary_ = false;
    RETURN_IF_ERROR(FlushPending());
    if (seq_ == 0) return Status::Ok();  // nothing before it to stand in for
    Event e;
    e.type = EventType::kCompaction;
    e.id = StableEventId(session_.id, boundary_uuid_);
    e.ts_ms = boundary_ts_;
    e.compaction.from_seq = 1;
    e.compaction.to_seq = seq_;
    e.compaction.summary = boundary_text_.empty() ? "Conversation compacted" : boundary_text_;
    e.compaction.strategy = "claude-code-compact";
    return Add(std::move(e), boundary_where_);
  }

  ImportSink& sink_;
  Session session_;
  std::string session_cwd_;  // the session metadata's cwd
  std::string label_;
  bool begun_ = false;
  int64_t seq_ = 0;  // events the sink holds for this session so far
  std::optional<PendingMessage> pending_;
  bool in_boundary_ = false;
  std::string boundary_uuid_;
  std::string boundary_text_;
  std::string boundary_where_;
  int64_t boundary_ts_ = 0;
};

// One record with a uuid (or a conversation record without one) in the graph.
struct Node {
  uint64_t key = 0;
  uint64_t parent_key = 0;  // as the record names it (0: none)
  int64_t offset = 0;
  int64_t line = 0;
  int32_t parent = -1;  // the node it continues, once resolved (-1: a root)
  uint32_t length = 0;
  uint32_t group = 0;           // its sessionId, an index into FileImport::groups_
  int32_t owner = -1;           // the line it belongs to
  bool conversational = false;  // user / assistant / system
  bool has_child = false;       // in its own group
  bool sidechain = false;
};

// The records of one sessionId in a file.
struct Group {
  std::string source_id;  // the sessionId, decoded; empty when missing or unreadable
  uint64_t raw_key = 0;   // of the sessionId as written, to tell unreadable ones apart
  std::string cwd;
  std::string git_branch;  // the last gitBranch its records name
  // The leaf of its main line: its last conversational record off side
  // chains, or, when it has none, its last.
  int64_t last_conversational = -1;
  bool ends_off_sidechain = false;  // last_conversational is off side chains
  int32_t main_line = -1;
};

struct Line {
  std::vector<uint32_t> nodes;  // in chain order
  uint32_t group = 0;
  bool group_main = false;  // the main line of its group (else a branch)
  int32_t fork_node = -1;   // the record it continues from another line, if any
  int32_t fork_owner = -1;  // that record's line
  bool sidechain = false;
};

constexpr uint32_t kNoGroup = std::numeric_limits<uint32_t>::max();

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
    AssignGroups();
    ResolveParents();
    BuildLines();
    for (size_t i = 0; i < lines_.size(); ++i) RETURN_IF_ERROR(WriteLine(i));
    sink_.Progress(total_bytes_, total_bytes_);
    return Status::Ok();
  }

 private:
  // Pass 1: the graph.
  Status Scan() {
    ASSIGN_OR_RETURN(reader_, JsonlReader::Open(path_.string()));
    JsonlReader* reader = reader_.get();
    reader->OnLongLine(kWaitForWriterBytes, [this] { WaitForWriter(); });
    JsonlReader::Line line;
    ScannedValue v[10];
    std::unordered_map<std::string, uint32_t> groups;  // raw sessionId -> group
    while (true) {
      ASSIGN_OR_RETURN(bool more, reader->Next(&line));
      if (!more) break;
      // The scan is the first half of the work shown; writing, the second.
      if ((line.number & 1023) == 0) {
        sink_.Progress(reader->bytes_read() / 2, reader->total_bytes());
      }
      const std::string where = label_ + ":" + std::to_string(line.number);
      if (line.too_long) {
        sink_.Skip(where, "the line is longer than the limit of " + std::to_string(kMaxLineBytes) +
                              " bytes");
        continue;
      }
      if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (!ScanTopLevel(line.text,
                        {"uuid", "parentUuid", "logicalParentUuid", "type", "sessionId", "cwd",
                         "isSidechain", "summary", "leafUuid", "gitBranch"},
                        v)) {
        // The scan only balances brackets; the parser says what is wrong.
        sink_.Skip(where, JsonLineProblem(line).value_or("the line is not a JSON object"));
        continue;
      }
      const std::string_view type = v[3].raw;
      if (type == "summary" && v[7].found) {
        summaries_.push_back({Key(v[8].raw), line.offset, line.raw_size});
        continue;
      }
      Node n;
      n.conversational =
          v[3].is_string && (type == "user" || type == "assistant" || type == "system");
      if (v[0].found && v[0].is_string) {
        n.key = Key(v[0].raw);
      } else if (n.conversational) {
        // Kept by its place in the file: it continues the record before it.
        n.key = Key("line/" + std::to_string(line.number));
      } else {
        continue;  // snapshots, queue operations... (docs/interop.md)
      }
      if (v[1].is_string) {
        n.parent_key = Key(v[1].raw);
      } else if (v[2].is_string) {
        n.parent_key = Key(v[2].raw);  // a compact boundary continues its logical parent
      }
      n.group = v[4].is_string ? GroupOf(v[4], groups) : kNoGroup;
      if (n.group != kNoGroup && groups_[n.group].cwd.empty()) {
        groups_[n.group].cwd = ScannedString(v[5]).value_or("");
      }
      // The branch the session ended on: it may switch midway.
      if (n.group != kNoGroup && v[9].is_string) {
        std::string branch = ScannedString(v[9]).value_or("");
        if (!branch.empty()) groups_[n.group].git_branch = std::move(branch);
      }
      n.offset = line.offset;
      n.length = static_cast<uint32_t>(line.raw_size);
      n.line = line.number;
      n.sidechain = v[6].raw == "true";
      auto [it, inserted] = index_.emplace(n.key, static_cast<uint32_t>(nodes_.size()));
      if (!inserted) {
        if (n.conversational) {
          sink_.Skip(where, "the record repeats the uuid of line " +
                                std::to_string(nodes_[it->second].line) +
                                "; the first one is kept");
        }
        continue;
      }
      if (n.conversational) last_conversational_ = static_cast<int64_t>(nodes_.size());
      nodes_.push_back(n);
    }
    total_bytes_ = reader->total_bytes();
    sink_.Progress(total_bytes_ / 2, total_bytes_);
    return Status::Ok();
  }

  uint32_t GroupOf(const ScannedValue& session_id,
                   std::unordered_map<std::string, uint32_t>& groups) {
    auto [it, inserted] =
        groups.emplace(std::string(session_id.raw), static_cast<uint32_t>(groups_.size()));
    if (inserted) {
      groups_.push_back(
          {.source_id = ScannedString(session_id).value_or(""), .raw_key = Key(session_id.raw)});
    }
    return it->second;
  }

  // A sub-agent's transcript (agent-<id>.jsonl), whose records are all on
  // side chains.
  bool IsAgentFile() const { return path_.stem().string().rfind("agent-", 0) == 0; }

  // Records that name no sessionId belong with the record before them (or,
  // at the start of the file, the first that names one); then which group
  // is the file's own session.
  void AssignGroups() {
    uint32_t previous = kNoGroup;
    for (Node& n : nodes_) {
      if (n.group == kNoGroup) n.group = previous;
      previous = n.group;
    }
    uint32_t first = kNoGroup;
    for (const Node& n : nodes_) {
      if (n.group != kNoGroup) {
        first = n.group;
        break;
      }
    }
    if (first == kNoGroup) {
      groups_.push_back({});
      first = static_cast<uint32_t>(groups_.size() - 1);
    }
    for (Node& n : nodes_) {
      if (n.group == kNoGroup) n.group = first;
    }
    // The main line ends at the last record off side chains: an inline
    // sub-agent run written last is a branch, not the conversation. (In a
    // sub-agent's file every record is on a side chain; so is a group that
    // holds nothing else.)
    const bool agent_file = IsAgentFile();
    int64_t last_main = last_conversational_;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!nodes_[i].conversational) continue;
      Group& group = groups_[nodes_[i].group];
      if (agent_file || !nodes_[i].sidechain) {
        group.last_conversational = static_cast<int64_t>(i);
        group.ends_off_sidechain = true;
        last_main = static_cast<int64_t>(i);
      } else if (!group.ends_off_sidechain) {
        group.last_conversational = static_cast<int64_t>(i);
      }
    }
    // Claude Code names a session's file after its sessionId; a sub-agent's
    // file holds the parent's, and its own session is its last record's.
    main_group_ = nodes_[static_cast<size_t>(last_main)].group;
    const std::string stem = path_.stem().string();
    for (uint32_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].source_id == stem && groups_[g].last_conversational >= 0) main_group_ = g;
    }
  }

  // Each record's parent: the one it names, when the file holds it, else the
  // record before it in file order of the same session. Claude Code leaves
  // parentUuid null only where a conversation starts, so a transcript whose
  // records all lack it (another tool's, or damaged) still reads as one
  // conversation. In a session's file, a side chain's first record stays a
  // root: each sub-agent run written inline starts one.
  void ResolveParents() {
    const bool agent_file = IsAgentFile();
    std::vector<int32_t> previous(groups_.size(), -1);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      Node& n = nodes_[i];
      if (n.parent_key != 0) {
        auto it = index_.find(n.parent_key);
        if (it != index_.end() && it->second != i) n.parent = static_cast<int32_t>(it->second);
      }
      const bool main_chain = agent_file || !n.sidechain;
      if (n.parent < 0 && main_chain) n.parent = previous[n.group];
      if (n.conversational && main_chain) previous[n.group] = static_cast<int32_t>(i);
    }
  }

  void BuildLines() {
    for (const Node& n : nodes_) {
      if (n.parent >= 0 && nodes_[n.parent].group == n.group) nodes_[n.parent].has_child = true;
    }
    auto take = [&](uint32_t leaf) {
      Line l;
      const int32_t owner = static_cast<int32_t>(lines_.size());
      l.group = nodes_[leaf].group;
      Group& group = groups_[l.group];
      l.group_main = group.main_line < 0;
      if (l.group_main) group.main_line = owner;
      int32_t n = static_cast<int32_t>(leaf);
      while (n >= 0 && nodes_[n].owner < 0 && nodes_[n].group == l.group) {
        nodes_[n].owner = owner;
        l.nodes.push_back(static_cast<uint32_t>(n));
        l.sidechain = l.sidechain || nodes_[n].sidechain;
        n = nodes_[n].parent;
      }
      // Where it joins a line already taken, or another session's record.
      l.fork_node = n;
      std::reverse(l.nodes.begin(), l.nodes.end());
      lines_.push_back(std::move(l));
    };
    take(static_cast<uint32_t>(groups_[main_group_].last_conversational));
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].main_line < 0 && groups_[g].last_conversational >= 0) {
        take(static_cast<uint32_t>(groups_[g].last_conversational));
      }
    }
    for (uint32_t i = 0; i < nodes_.size(); ++i) {
      if (!nodes_[i].has_child && nodes_[i].conversational && nodes_[i].owner < 0) take(i);
    }
    for (size_t i = 0; i < lines_.size(); ++i) {
      Line& l = lines_[i];
      if (l.fork_node >= 0 && nodes_[l.fork_node].owner != static_cast<int32_t>(i)) {
        l.fork_owner = nodes_[l.fork_node].owner;
      }
    }
  }

  // The source id of a group's sessions: for the file's own session the
  // file's stem (Claude Code names files after their session), qualified by
  // the parent session for sub-agent files, whose records carry the parent's
  // sessionId; for another sessionId found in the file, that id under the
  // file's.
  std::string GroupSourceId(uint32_t g) const {
    const std::string stem = path_.stem().string();
    std::string base = stem;
    if (stem.rfind("agent-", 0) == 0) {
      std::string parent = groups_[main_group_].source_id;
      if (parent.empty()) parent = path_.parent_path().filename().string();
      base = parent + "/" + stem;
    }
    if (g == main_group_) return base;
    const Group& group = groups_[g];
    return base + "/session/" +
           (group.source_id.empty() ? "unreadable-" + std::to_string(group.raw_key)
                                    : group.source_id);
  }

  std::string LineSessionId(size_t i) const {
    const Line& l = lines_[i];
    const std::string base = GroupSourceId(l.group);
    if (l.group_main) return StableSessionId(kFormat, base);
    const Node& first = nodes_[l.nodes.front()];
    return StableSessionId(kFormat, base + "/branch/" + std::to_string(first.key));
  }

  std::string Title(const Line& l) {
    // A summary record names a line by its leaf.
    const uint64_t leaf = nodes_[l.nodes.back()].key;
    for (const SummarySpan& span : summaries_) {
      if (span.leaf != leaf) continue;
      Result<std::string_view> text = reader_->ReadAt(span.offset, span.raw_size);
      if (!text) return "";
      Result<json> summary = ParseJson(*text);
      if (!summary || !summary->is_object()) return "";
      return Str(*summary, "summary");
    }
    return "";
  }

  std::string SessionMetadata(size_t i) {
    const Line& l = lines_[i];
    const Group& group = groups_[l.group];
    json meta = {{"source", kFormat}, {"source_file", label_}};
    if (!group.source_id.empty()) meta["source_session_id"] = group.source_id;
    if (!group.cwd.empty()) meta["cwd"] = group.cwd;
    if (!group.git_branch.empty()) meta["git_branch"] = group.git_branch;
    const std::string stem = path_.stem().string();
    if (i == 0 && stem.rfind("agent-", 0) == 0 && !group.source_id.empty()) {
      meta["subagent_of"] = StableSessionId(kFormat, group.source_id);
      meta["agent_id"] = stem.substr(6);
    }
    if (l.fork_owner >= 0) {
      meta["forked_from"] = LineSessionId(static_cast<size_t>(l.fork_owner));
      // The uuid of the record it forked at, as the source spells it.
      meta["fork_uuid"] = ForkUuid(static_cast<uint32_t>(l.fork_node));
    } else if (!l.group_main) {
      meta["forked_from"] = LineSessionId(static_cast<size_t>(group.main_line));
    }
    if (!l.group_main && l.sidechain) meta["sidechain"] = true;
    return meta.dump();
  }

  Status WriteLine(size_t i) {
    const Line& l = lines_[i];
    Session s;
    s.id = LineSessionId(i);
    s.title = Title(l);
    s.metadata_json = SessionMetadata(i);
    LineWriter writer(sink_, std::move(s), label_);
    for (uint32_t idx : l.nodes) {
      const Node& n = nodes_[idx];
      if (!n.conversational) continue;
      if (n.length > kWaitForWriterBytes) WaitForWriter();
      ASSIGN_OR_RETURN(std::string_view text, reader_->ReadAt(n.offset, n.length));
      written_bytes_ += n.length;
      if ((++written_records_ & 1023) == 0) {
        sink_.Progress(total_bytes_ / 2 + written_bytes_ / 2, total_bytes_);
      }
      const std::string where = label_ + ":" + std::to_string(n.line);
      std::vector<CutString> cut;
      std::optional<json> record = ParseRecord(text, where, &cut);
      if (!record) continue;
      RETURN_IF_ERROR(writer.Record(*record, n.line, cut));
      // What is left was cut to a note (images keep their descriptors).
      if (!cut.empty()) sink_.Skip(where, CutReason(cut.size()));
    }
    return writer.Finish();
  }

  // The record `text` at `where` parsed, or nullopt with a skip. A long one
  // is parsed lean and keeps kMaxRecordTextBytes of its long strings (*cut:
  // the ones cut, for the caller to list); its line is let go once it is
  // parsed.
  std::optional<json> ParseRecord(std::string_view text, const std::string& where,
                                  std::vector<CutString>* cut) {
    if (text.size() <= kLeanParseBytes) {
      Result<json> parsed = ParseJson(text);
      if (parsed && parsed->is_object()) return std::move(*parsed);
      sink_.Skip(where, JsonLineProblem(text, false).value_or("the line is not a JSON object"));
      return std::nullopt;
    }
    Result<LongRecord> lean = ParseLongRecord(text);
    reader_->ReleaseLine();
    if (!lean || !lean->tree.is_object()) {
      sink_.Skip(where, lean ? "the line is JSON but " + JsonKindPhrase(lean->tree.type_name()) +
                                   ", not an object"
                             : "the record is left out: " + lean.error().message());
      return std::nullopt;
    }
    *cut = std::move(lean->cut);
    return std::move(lean->tree);
  }

  void WaitForWriter() { interop::WaitForWriter(sink_); }

  std::string ForkUuid(uint32_t node) {
    const Node& n = nodes_[node];
    Result<std::string_view> text = reader_->ReadAt(n.offset, n.length);
    if (!text) return "";
    ScannedValue v[1];
    if (!ScanTopLevel(*text, {"uuid"}, v)) return "";
    return ScannedString(v[0]).value_or("");
  }

  fs::path path_;
  ImportSink& sink_;
  std::string label_;
  std::vector<Node> nodes_;  // in file order
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<Group> groups_;
  uint32_t main_group_ = 0;
  std::unique_ptr<JsonlReader> reader_;  // pass 1 reads on, pass 2 reads back
  struct SummarySpan {
    uint64_t leaf = 0;  // the key of the line's last record it names
    int64_t offset = 0;
    int64_t raw_size = 0;
  };
  std::vector<SummarySpan> summaries_;
  std::vector<Line> lines_;
  int64_t last_conversational_ = -1;
  int64_t total_bytes_ = 0;
  int64_t written_bytes_ = 0;  // of the records written so far (each is in one line)
  int64_t written_records_ = 0;
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
  // A projects tree or one project folder: a transcript among the first
  // entries decides. One that cannot be read, or is not a transcript at all,
  // is left out by the import; it does not hide the others.
  int seen = 0;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end && seen < 200; it.increment(ec), ++seen) {
    if (it.depth() > 3) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && IsTranscript(it->path()) &&
        LooksLikeClaudeCode(PeekFile(it->path(), 16384))) {
      return 80;
    }
  }
  return 0;
}

Status Run(const fs::path& path, ImportSink& sink) {
  std::error_code ec;
  const bool folder = fs::is_directory(path, ec);
  const fs::path root = folder ? path : path.parent_path();
  std::vector<fs::path> unlisted;
  const std::vector<fs::path> files = FilesUnder(path, IsTranscript, &unlisted);
  // A folder import leaves out what it cannot read, saying why, and goes on;
  // a file given alone fails as it is opened.
  for (const fs::path& dir : unlisted) sink.SkipFile(dir.string(), "permission denied");
  if (files.empty() && unlisted.empty()) {
    return Status::InvalidArgument("no .jsonl transcripts under " + path.string());
  }
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
    if (std::optional<std::string> why = folder ? UnreadableReason(ordered[i]) : std::nullopt) {
      sink.SkipFile(ordered[i].string(), *why);
      before += sizes[i];
      continue;
    }
    sink.ProgressWithinFile(before, sizes[i], overall);
    FileImport file(ordered[i], root, sink);
    RETURN_IF_ERROR(file.Run());
    // Claude Code's own checkpoints of the files this session wrote.
    ASSIGN_OR_RETURN(int64_t versions, ImportClaudeFileHistory(ordered[i], sink));
    (void)versions;
    before += sizes[i];
  }
  return Status::Ok();
}

}  // namespace

ImportFormatSpec ClaudeCodeImport() { return {ImportFormat::kClaudeCode, Detect, Run}; }

}  // namespace sessiondb::interop
