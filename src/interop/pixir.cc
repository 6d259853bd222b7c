// The Pixir format: NDJSON session logs (`.pixir/sessions/<id>.ndjson`), one
// event per line in the envelope `{id, session_id, seq, ts, type, data}`,
// with Session Resources kept beside them in
// `.pixir/sessions/<id>/resources/<resource_id>/<sha256>.<ext>` and named in
// the log by descriptors (`resource_id`, `content_sha256`, `mime_type`, ...).
// See docs/interop.md#pixir for the mapping of each event type.
//
// Streams: one line in memory at a time (plus the resource bytes of the
// message being read); a long line is bounded as interop/long_record.h says,
// and its texts are moved into the message rather than copied.
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "blob/media_type.h"
#include "blob/sha256.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/formats.h"
#include "interop/jsonl_reader.h"
#include "interop/long_record.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "pixir";

bool IsLogFile(const fs::path& p) { return p.extension() == ".ndjson"; }

// The session logs at `path`: the file itself, or the *.ndjson files of the
// folder (or of its sessions/ folder, for a .pixir folder), sorted by name.
std::vector<fs::path> LogFiles(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    return IsLogFile(path) ? std::vector{path} : std::vector<fs::path>{};
  fs::path dir = path;
  if (fs::is_directory(path / "sessions", ec)) dir = path / "sessions";
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && IsLogFile(entry.path())) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool IsEnvelope(const json& e) {
  return e.is_object() && e.contains("session_id") && e.contains("type") && e.contains("data") &&
         e.contains("seq") && e.contains("ts");
}

// The logs of a folder decide by their first line that is not blank: the
// first log by name may be empty (a session started and left), so empty
// logs are passed over, up to kDetectLogs of them.
constexpr size_t kDetectLogs = 64;

int Detect(const fs::path& path) {
  const auto files = LogFiles(path);
  for (size_t i = 0; i < files.size() && i < kDetectLogs; ++i) {
    auto reader = JsonlReader::Open(files[i].string(), size_t{1} << 20);
    if (!reader) return 0;
    JsonlReader::Line line;
    while (true) {
      auto more = (*reader)->Next(&line);
      if (!more || !*more) break;  // empty (or unreadable): the next log decides
      if (line.too_long) return 0;
      if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      json first = ParseJson(line.text).value_or(json());
      return IsEnvelope(first) ? 90 : 0;
    }
  }
  return 0;
}

std::string Str(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The string member `key` moved out of the tree (each line is read once,
// and a text may be MiBs long), or "" when there is no such string.
std::string Take(json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return std::move(it->get_ref<std::string&>());
}

int64_t Int(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

// Types Pixir broadcasts but never logs; a log that holds them anyway (an
// old build, a debug dump) loses nothing when they are dropped.
bool IsEphemeral(const std::string& type) {
  return type == "text_delta" || type == "reasoning_delta" || type == "status" || type == "plan" ||
         type == "context_pressure";
}

bool IsSafeComponent(const std::string& s) { return IsPlainFileName(s); }

// State carried across the lines of one log.
struct LogState {
  std::string session_id;
  fs::path resources_dir;
  int64_t added = 0;                   // events handed to the sink
  std::map<int64_t, int64_t> seq_map;  // Pixir seq -> our seq, for stored events
  std::optional<Usage> pending_usage;  // from provider_usage, for the next assistant turn
  std::string pending_model;
  std::string pending_usage_where;
  // Imported resources by Pixir resource_id, for resource_view results.
  std::map<std::string, ResourceView> resources;
  std::vector<std::string> last_message_resources;  // of the message being added
  std::optional<Event> follow_up;                   // a resource view to add after the tool result
  bool sink_drops = false;  // the event just converted will be dropped by the sink
};

// The descriptor the import sink will store for a byte part that is the
// `kept`-th part it keeps of message `message_id` (the sink names it
// "res_" + StableEventId(message id, kept index); see ImportSink::
// ResolveAttachments, and PixirImport.ResourceViewResultsBecomeResourceViews,
// which checks the two agree). nullopt when the sink will drop the part.
std::optional<Resource> StoredDescriptor(const Part& p, const std::string& message_id,
                                         size_t kept) {
  const std::string& bytes = p.source->data;
  auto media = blob::SniffMedia(bytes);
  if (!media || bytes.empty() || (p.type == PartType::kImage && !media->is_image)) {
    return std::nullopt;
  }
  Resource r;
  r.resource_id = "res_" + StableEventId(message_id, std::to_string(kept));
  r.content_sha256 = blob::Sha256Hex(bytes);
  r.mime =
      media->is_image || p.source->declared_mime.empty() ? media->mime : p.source->declared_mime;
  r.size = static_cast<int64_t>(bytes.size());
  r.width = media->width;
  r.height = media->height;
  r.origin = Origin::kInline;
  r.name = p.source->name;
  return r;
}

// The part for one resource descriptor, or nullopt (with a skip).
std::optional<Part> ResourcePart(const json& d, const LogState& state, const std::string& where,
                                 ImportSink& sink) {
  const std::string kind = Str(d, "kind");
  const std::string name = Str(d, "name");
  const std::string mime = Str(d, "mime_type");
  if (kind == "resource_link" || (d.contains("uri") && !d.contains("content_sha256"))) {
    // A descriptor only: Pixir never fetched it, neither do we.
    return Part::Link(Str(d, "uri"), name, mime, Int(d, "declared_size_bytes"));
  }
  const std::string rid = Str(d, "resource_id");
  const std::string sha = Str(d, "content_sha256");
  std::string ext = Str(d, "extension");
  const std::string label = "resource " + (name.empty() ? rid : "'" + name + "'");
  if (!IsSafeComponent(rid) || sha.size() != 64 || !IsSafeComponent(sha) ||
      (!ext.empty() && !IsSafeComponent(ext))) {
    sink.Skip(where, label + ": the descriptor has no usable resource_id / content_sha256");
    return std::nullopt;
  }
  fs::path file = state.resources_dir / rid / (ext.empty() ? sha : sha + "." + ext);
  std::error_code ec;
  if (ext.empty() || !fs::is_regular_file(file, ec)) {
    // Find <sha>.* in the resource's folder when the extension is not stated.
    for (const auto& entry : fs::directory_iterator(state.resources_dir / rid, ec)) {
      if (entry.path().stem() == sha) file = entry.path();
    }
  }
  if (!MayRead(file)) {
    sink.Skip(where, OutsideReason(label) + "; the message is imported without it");
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    sink.Skip(where, label + " is missing from " + (state.resources_dir / rid).string() +
                         "; the message is imported without it");
    return std::nullopt;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (blob::Sha256Hex(bytes) != sha) {
    sink.Skip(where, label + ": its bytes do not hash to the content_sha256 the log records (" +
                         sha.substr(0, 12) + "...); the resource is left out");
    return std::nullopt;
  }
  if (kind == "image" || mime.starts_with("image/")) {
    return Part::ImageFromBytes(std::move(bytes), mime, name);
  }
  return Part::FileFromBytes(std::move(bytes), mime, name);
}

Event NewMessage(const json& e, const LogState& state, const std::string& source_id, Role role) {
  Event ev;
  ev.type = EventType::kMessage;
  ev.id = StableEventId(state.session_id, source_id);
  ev.ts_ms = ParseIsoTime(Str(e, "ts")).value_or(0);
  ev.message.role = role;
  return ev;
}

// Gives an assistant turn the usage that came before it.
void TakeUsage(LogState* state, Message* m) {
  if (!state->pending_usage) return;
  m->usage = state->pending_usage;
  m->model = state->pending_model;
  state->pending_usage.reset();
}

// The event for one Pixir log line, or nullopt when it maps to nothing
// stored (skipped with a reason, or folded into a later event).
std::optional<Event> Convert(json& e, LogState* state, const std::string& where, ImportSink& sink) {
  const std::string type = Str(e, "type");
  json& data = e["data"];
  std::string source_id = Str(e, "id");
  if (source_id.empty()) source_id = "seq-" + std::to_string(Int(e, "seq"));
  if (!data.is_object()) {
    sink.Skip(where, type + " event whose data is not an object; left out");
    return std::nullopt;
  }
  if (type == "user_message") {
    Event ev = NewMessage(e, *state, source_id, Role::kUser);
    std::string text = Take(data, "text");
    if (!text.empty()) ev.message.parts.push_back(Part::Text(std::move(text)));
    std::vector<std::string> rids;  // the Pixir resource_id of each part, or ""
    rids.resize(ev.message.parts.size());
    if (auto it = data.find("resources"); it != data.end() && it->is_array()) {
      for (const json& d : *it) {
        if (!d.is_object()) continue;
        if (auto part = ResourcePart(d, *state, where, sink)) {
          ev.message.parts.push_back(std::move(*part));
          rids.push_back(Str(d, "resource_id"));
        }
      }
    }
    if (ev.message.parts.empty()) {
      sink.Skip(where, "user_message with no text and no usable resource; left out");
      return std::nullopt;
    }
    size_t kept = 0;
    for (size_t i = 0; i < ev.message.parts.size(); ++i) {
      const Part& p = ev.message.parts[i];
      if (!p.source) {
        ++kept;
        continue;
      }
      auto r = StoredDescriptor(p, ev.id, kept);
      if (!r) continue;
      ++kept;
      ResourceView view;
      view.resource_id = r->resource_id;
      view.resource = std::move(*r);
      state->resources[rids[i]] = std::move(view);
      state->last_message_resources.push_back(rids[i]);
    }
    // The sink drops a message with no part left; it then takes no seq.
    state->sink_drops = kept == 0;
    return ev;
  }
  if (type == "assistant_message") {
    std::string text = Take(data, "text");
    if (text.empty()) {
      sink.Skip(where,
                "assistant_message with no text (an answer lost to a provider error); "
                "left out");
      return std::nullopt;
    }
    Event ev = NewMessage(e, *state, source_id, Role::kAssistant);
    ev.message.parts.push_back(Part::Text(std::move(text)));
    if (auto it = data.find("metadata"); it != data.end() && it->is_object()) {
      ev.message.metadata_json = json{{"pixir_metadata", *it}}.dump();
    }
    TakeUsage(state, &ev.message);
    return ev;
  }
  if (type == "tool_call") {
    Event ev = NewMessage(e, *state, source_id, Role::kAssistant);
    auto args = data.find("args");
    ev.message.parts.push_back(Part::ToolCall(Str(data, "call_id"), Str(data, "name"),
                                              args != data.end() ? args->dump() : "{}"));
    TakeUsage(state, &ev.message);
    return ev;
  }
  if (type == "tool_result") {
    Event ev = NewMessage(e, *state, source_id, Role::kTool);
    auto ok = data.find("ok");
    const bool is_error = ok != data.end() && ok->is_boolean() && !ok->get<bool>();
    std::string output;
    if (auto it = data.find("output"); it != data.end()) {
      output = it->is_string() ? std::move(it->get_ref<std::string&>()) : it->dump();
    } else if (auto err = data.find("error"); err != data.end()) {
      output = err->is_string() ? err->get<std::string>() : err->dump();
    }
    ev.message.parts.push_back(Part::ToolResult(Str(data, "call_id"), std::move(output), is_error));
    // A resource_view tool result rehydrates a resource for the next model
    // call: sessiondb's resource view event says the same.
    if (auto rv = data.find("resource_view"); rv != data.end() && rv->is_object()) {
      const std::string rid = Str(*rv, "resource_id");
      auto known = state->resources.find(rid);
      if (known == state->resources.end()) {
        sink.Skip(where, "resource_view of resource '" + rid +
                             "', which no imported message attached; the tool result is "
                             "imported, the view is not");
      } else {
        Event view;
        view.type = EventType::kResourceView;
        view.id = StableEventId(state->session_id, source_id + "/resource_view");
        view.ts_ms = ev.ts_ms;
        view.resource_view = known->second;
        view.resource_view.reason = Str(*rv, "reason");
        state->follow_up = std::move(view);
      }
    }
    return ev;
  }
  if (type == "history_compaction") {
    const json range = MemberOr(data, "range", json::object());
    const int64_t from = range.is_object() ? Int(range, "from_seq") : 0;
    const int64_t to = range.is_object() ? Int(range, "to_seq") : 0;
    // The Pixir seqs become ours: the first stored event at or after `from`,
    // the last at or before `to`.
    auto lo = state->seq_map.lower_bound(from);
    auto hi = state->seq_map.upper_bound(to);
    if (Str(data, "summary").empty() || from > to || lo == state->seq_map.end() ||
        hi == state->seq_map.begin()) {
      sink.Skip(where, "history_compaction with no summary or a range (" + std::to_string(from) +
                           ".." + std::to_string(to) + ") covering no imported event; left out");
      return std::nullopt;
    }
    --hi;
    if (lo->second > hi->second) {
      sink.Skip(where, "history_compaction covering no imported event; left out");
      return std::nullopt;
    }
    Event ev;
    ev.type = EventType::kCompaction;
    ev.id = StableEventId(state->session_id, source_id);
    ev.ts_ms = ParseIsoTime(Str(e, "ts")).value_or(0);
    ev.compaction.from_seq = lo->second;
    ev.compaction.to_seq = hi->second;
    ev.compaction.summary = Str(data, "summary");
    ev.compaction.strategy = Str(data, "strategy");
    ev.compaction.model = Str(data, "model");
    if (auto it = data.find("limitations"); it != data.end()) {
      if (it->is_string()) {
        ev.compaction.limitations = it->get<std::string>();
      } else if (it->is_array()) {
        for (const json& l : *it) {
          if (!l.is_string()) continue;
          if (!ev.compaction.limitations.empty()) ev.compaction.limitations += "\n";
          ev.compaction.limitations += l.get<std::string>();
        }
      }
    }
    return ev;
  }
  if (type == "provider_usage") {
    const json summary = MemberOr(data, "usage_summary", json::object());
    if (!summary.is_object()) return std::nullopt;
    if (state->pending_usage) {
      sink.Skip(state->pending_usage_where,
                "provider_usage with no assistant turn after it to carry it; left out");
    }
    Usage u;
    u.input_tokens = Int(summary, "input_tokens");
    u.output_tokens = Int(summary, "output_tokens");
    u.cached_tokens = Int(summary, "cached_tokens");
    u.reasoning_tokens = Int(summary, "reasoning_tokens");
    state->pending_usage = u;
    state->pending_model = Str(data, "model");
    if (state->pending_model.empty()) state->pending_model = Str(summary, "model");
    state->pending_usage_where = where;
    return std::nullopt;
  }
  if (IsEphemeral(type)) return std::nullopt;
  sink.Skip(where,
            "Pixir '" + type +
                "' events have no sessiondb equivalent (see docs/interop.md#pixir); left out");
  return std::nullopt;
}

Status ImportLog(const fs::path& file, ImportSink& sink, int64_t* done, int64_t total) {
  ASSIGN_OR_RETURN(auto reader, JsonlReader::Open(file.string()));
  reader->OnLongLine(kWaitForWriterBytes, [&sink] { WaitForWriter(sink); });
  const std::string name = ToValidUtf8(file.filename().string());  // names records
  LogState state;
  // The log's session: the session_id of its first event. Pixir names a log
  // after it, but a log renamed or copied (Pixir's own published example)
  // keeps its events' id, which is what they name.
  const std::string file_stem = file.stem().string();
  std::string log_session;
  Session session;
  auto name_session = [&](const std::string& id) {
    log_session = id;
    state.session_id = StableSessionId(kFormat, id);
    std::error_code ec;
    state.resources_dir = file.parent_path() / id / "resources";
    if (!fs::is_directory(state.resources_dir, ec) &&
        fs::is_directory(file.parent_path() / file_stem / "resources", ec)) {
      state.resources_dir = file.parent_path() / file_stem / "resources";
    }
    session.id = state.session_id;
    json meta = {{"source", std::string(kFormat)}, {"pixir_session_id", ToValidUtf8(id)}};
    if (id != file_stem) meta["source_file"] = ToValidUtf8(file.filename().string());
    session.metadata_json = meta.dump();
  };
  name_session(file_stem);
  bool named = false;
  // The session begins with its first event the sink keeps: a log of
  // status lines, or of events with no equivalent, is no empty session.
  bool begun = false;
  JsonlReader::Line line;
  int64_t last_seq = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&line));
    if (!more) break;
    sink.Progress(*done + reader->bytes_read(), total);
    const std::string where = name + ":" + std::to_string(line.number);
    if (line.too_long) {
      sink.Skip(where, "the line is longer than the " + std::to_string(kMaxLineBytes) +
                           "-byte limit for one event; it is left out");
      continue;
    }
    if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Result<json> parsed = json();
    if (line.text.size() > kLeanParseBytes) {
      Result<LongRecord> lean = ParseLongRecord(line.text);
      reader->ReleaseLine();
      if (!lean) {
        sink.Skip(where, "the record is left out: " + lean.error().message());
        continue;
      }
      if (!lean->cut.empty()) sink.Skip(where, CutReason(lean->cut.size()));
      parsed = std::move(lean->tree);
    } else {
      parsed = ParseJson(line.text);
    }
    if (!parsed) {
      sink.Skip(where, IsJsonNestingError(parsed.error())
                           ? parsed.error().message() + "; it is left out"
                       : line.at_eof_without_newline
                           ? "the last line is truncated (no newline, not complete JSON): an "
                             "interrupted write; it is left out"
                           : "the line is not valid JSON (" + parsed.error().message() +
                                 "); it is left out");
      continue;
    }
    json& e = *parsed;
    if (!IsEnvelope(e)) {
      sink.Skip(where, "not a Pixir event (no session_id/seq/ts/type/data envelope); left out");
      continue;
    }
    if (!named && !Str(e, "session_id").empty()) name_session(Str(e, "session_id"));
    named = true;
    if (Str(e, "session_id") != log_session) {
      sink.Skip(where, "the event belongs to session '" + ToValidUtf8(Str(e, "session_id")) +
                           "', not this log's ('" + ToValidUtf8(log_session) + "'); left out");
      continue;
    }
    const int64_t seq = Int(e, "seq");
    auto event = Convert(e, &state, where, sink);
    if (!event) continue;
    if (!begun && state.sink_drops) {
      // What the sink would say, but it needs an open session to say it,
      // and a session opened for a message it drops would stay empty.
      for (const Part& p : event->message.parts) {
        if (!p.source) continue;
        auto why = ImportSink::AttachmentDropReason(p, blob::SniffMedia(p.source->data));
        if (why) sink.Skip(where, std::move(*why));
      }
      sink.Skip(where, "nothing is left of the message once its unusable parts are out");
      state.sink_drops = false;
      state.last_message_resources.clear();
      continue;
    }
    if (!begun) {
      RETURN_IF_ERROR(sink.BeginSession(session));
      begun = true;
    }
    RETURN_IF_ERROR(sink.Add(std::move(*event), where));
    if (state.sink_drops) {
      state.sink_drops = false;
      state.last_message_resources.clear();
      continue;
    }
    ++state.added;
    for (const std::string& rid : state.last_message_resources) {
      state.resources[rid].message_seq = state.added;
    }
    state.last_message_resources.clear();
    if (seq > last_seq) {
      state.seq_map[seq] = state.added;
      last_seq = seq;
    }
    if (state.follow_up) {
      RETURN_IF_ERROR(sink.Add(std::move(*state.follow_up), where));
      state.follow_up.reset();
      ++state.added;
    }
  }
  if (state.pending_usage) {
    sink.Skip(state.pending_usage_where,
              "provider_usage with no assistant turn after it to carry it; left out");
  }
  *done += reader->total_bytes();
  return begun ? sink.EndSession() : Status::Ok();
}

Status RunImport(const fs::path& path, ImportSink& sink) {
  const auto files = LogFiles(path);
  if (files.empty()) {
    return Status::InvalidArgument(path.string() + " holds no Pixir session log (*.ndjson)");
  }
  int64_t total = 0;
  for (const fs::path& f : files) {
    std::error_code ec;
    total += static_cast<int64_t>(fs::file_size(f, ec));
  }
  int64_t done = 0;
  for (const fs::path& f : files) RETURN_IF_ERROR(ImportLog(f, sink, &done, total));
  return Status::Ok();
}

}  // namespace

ImportFormatSpec PixirImport() { return {ImportFormat::kPixir, Detect, RunImport}; }

}  // namespace sessiondb::interop
