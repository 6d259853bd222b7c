// The codex format: OpenAI Codex CLI rollouts, ~/.codex/sessions/YYYY/MM/DD/
// rollout-<time>-<uuid>.jsonl, one session per file. Each line is
// {timestamp, type, payload} with type session_meta, response_item,
// compacted, turn_context or event_msg (older rollouts: a bare meta line,
// then bare response items). See docs/interop.md, "codex".
//
// A rollout is a linear log, read in one pass. Every response item becomes
// an event of its own, its id derived from the line (its number and bytes),
// so a re-import matches line for line. turn_context gives the model of the
// assistant items after it; an event_msg token_count gives the usage of the
// assistant item before it. Memory: one line and one pending event.
#include <numeric>
#include <optional>

#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "core/json_parse.h"
#include "interop/formats.h"
#include "interop/jsonl_reader.h"
#include "interop/source_scan.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "codex";

std::string Str(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Text of an output that is a string, or {content, success}, or content items.
std::string OutputText(const json& output, bool* is_error) {
  if (output.is_string()) return output.get<std::string>();
  if (output.is_object()) {
    if (output.contains("success") && output["success"].is_boolean()) {
      *is_error = !output["success"].get<bool>();
    }
    return OutputText(output.value("content", json()), is_error);
  }
  if (output.is_array()) {
    std::string out;
    for (const json& item : output) {
      const std::string t = Str(item, "text");
      if (t.empty()) continue;
      if (!out.empty()) out += "\n";
      out += t;
    }
    return out;
  }
  return output.is_null() ? "" : output.dump();
}

// An image part from a data URI, or a link for a remote URL.
std::optional<Part> ImagePart(const std::string& url, std::string_view where, ImportSink& sink) {
  if (url.rfind("data:", 0) == 0) {
    const size_t comma = url.find(',');
    const size_t semi = url.find(';');
    if (comma == std::string::npos || semi == std::string::npos || semi > comma ||
        url.compare(semi, 8, ";base64,") != 0) {
      sink.Skip(std::string(where), "an input_image data URI is not base64 data");
      return std::nullopt;
    }
    auto bytes = blob::Base64Decode(std::string_view(url).substr(comma + 1));
    if (!bytes) {
      sink.Skip(std::string(where),
                "an input_image is not valid base64: " + bytes.error().message());
      return std::nullopt;
    }
    return Part::ImageFromBytes(std::move(*bytes), url.substr(5, semi - 5));
  }
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) return Part::Link(url);
  sink.Skip(std::string(where), "an input_image with no data URI or URL");
  return std::nullopt;
}

class RolloutImport {
 public:
  RolloutImport(const fs::path& path, std::string label, ImportSink& sink)
      : path_(path), label_(std::move(label)), sink_(sink) {}

  Status Run() {
    ASSIGN_OR_RETURN(auto reader, JsonlReader::Open(path_.string()));
    JsonlReader::Line line;
    while (true) {
      ASSIGN_OR_RETURN(bool more, reader->Next(&line));
      if (!more) break;
      if ((line.number & 1023) == 0) sink_.Progress(reader->bytes_read(), reader->total_bytes());
      const std::string where = label_ + ":" + std::to_string(line.number);
      if (line.too_long) {
        sink_.Skip(where, "the line is longer than the limit of " +
                              std::to_string(kMaxLineBytes) + " bytes");
        continue;
      }
      if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      Result<json> parsed = ParseJson(line.text);
      if (!parsed || !parsed->is_object()) {
        sink_.Skip(where, !parsed && IsJsonNestingError(parsed.error())
                              ? parsed.error().message() + "; it is left out"
                          : line.at_eof_without_newline
                              ? "the last line is cut short (no newline, not whole JSON)"
                              : "the line is not a JSON object");
        continue;
      }
      json& r = *parsed;
      RETURN_IF_ERROR(Line(r, line, where));
    }
    sink_.Progress(reader->bytes_read(), reader->total_bytes());
    if (!begun_) RETURN_IF_ERROR(Begin(json::object()));
    RETURN_IF_ERROR(FlushPending());
    return sink_.EndSession();
  }

 private:
  Status Begin(const json& meta) {
    begun_ = true;
    std::string source_id = Str(meta, "id");
    if (source_id.empty()) {
      // rollout-2025-06-01T10-00-00-<uuid>.jsonl
      const std::string stem = path_.stem().string();
      source_id = stem.size() > 36 ? stem.substr(stem.size() - 36) : stem;
    }
    session_id_ = StableSessionId(kFormat, source_id);
    json m = {{"source", kFormat}, {"source_file", label_}, {"source_session_id", source_id}};
    for (const char* key : {"cwd", "originator", "cli_version", "model_provider", "source"}) {
      const std::string v = Str(meta, key);
      if (!v.empty()) m[key == std::string_view("source") ? "codex_source" : key] = v;
    }
    if (meta.is_object() && meta.contains("git") && meta["git"].is_object()) m["git"] = meta["git"];
    const std::string forked = Str(meta, "forked_from_id");
    if (!forked.empty()) {
      m["forked_from"] = StableSessionId(kFormat, forked);
      m["forked_from_id"] = forked;
    }
    provider_ = Str(meta, "model_provider");
    if (provider_.empty()) provider_ = "openai";
    Session s;
    s.id = session_id_;
    s.created_ms = ParseIsoTime(Str(meta, "timestamp")).value_or(0);
    s.metadata_json = m.dump();
    return sink_.BeginSession(s);
  }

  Status Line(const json& r, const JsonlReader::Line& line, const std::string& where) {
    const int64_t ts = ParseIsoTime(Str(r, "timestamp")).value_or(0);
    std::string type = Str(r, "type");
    const json* payload = &r;
    auto p = r.find("payload");
    if (p != r.end() && p->is_object()) {
      payload = &*p;
    } else if (type.empty() && r.contains("id") && !begun_) {
      type = "session_meta";  // the bare first line of older rollouts
    } else if (!type.empty()) {
      type = "response_item";  // older rollouts: bare response items
    } else {
      return Status::Ok();  // {"record_type":"state"} and the like
    }
    if (type == "session_meta") {
      if (!begun_) return Begin(*payload);
      return Status::Ok();  // a resumed or forked rollout repeats metas
    }
    if (!begun_) RETURN_IF_ERROR(Begin(json::object()));
    if (type == "turn_context") {
      const std::string model = Str(*payload, "model");
      if (!model.empty()) model_ = model;
      return Status::Ok();
    }
    if (type == "event_msg") {
      if (Str(*payload, "type") == "token_count" && pending_ &&
          pending_->message.role == Role::kAssistant) {
        const json info = payload->value("info", json());
        const json last = info.is_object() ? info.value("last_token_usage", json()) : json();
        if (last.is_object()) {
          Usage u;
          u.input_tokens = last.value("input_tokens", int64_t{0});
          u.cached_tokens = last.value("cached_input_tokens", int64_t{0});
          u.output_tokens = last.value("output_tokens", int64_t{0});
          u.reasoning_tokens = last.value("reasoning_output_tokens", int64_t{0});
          pending_->message.usage = u;
        }
      }
      return Status::Ok();
    }
    // The line's own bytes and number name its event.
    std::string key = std::to_string(line.number);
    key += '/';
    key += line.text;
    const std::string id = StableEventId(session_id_, key);
    if (type == "compacted") {
      RETURN_IF_ERROR(FlushPending());
      if (seq_ == 0) return Status::Ok();
      Event e;
      e.type = EventType::kCompaction;
      e.id = id;
      e.ts_ms = ts;
      e.compaction.from_seq = 1;
      e.compaction.to_seq = seq_;
      e.compaction.summary = Str(*payload, "message");
      if (e.compaction.summary.empty()) e.compaction.summary = "Conversation compacted";
      e.compaction.strategy = "codex-compact";
      e.compaction.model = model_;
      ++seq_;
      return sink_.Add(std::move(e), where);
    }
    if (type != "response_item") return Status::Ok();
    Event e;
    e.type = EventType::kMessage;
    e.id = id;
    e.ts_ms = ts;
    Message& m = e.message;
    const std::string item = Str(*payload, "type");
    if (item == "message") {
      const std::string role = Str(*payload, "role");
      m.role = role == "assistant" ? Role::kAssistant
               : role == "user"    ? Role::kUser
                                   : Role::kSystem;
      const json content = payload->value("content", json());
      if (content.is_string()) m.parts.push_back(Part::Text(content.get<std::string>()));
      if (content.is_array()) {
        for (const json& c : content) {
          const std::string ct = Str(c, "type");
          if (ct == "input_text" || ct == "output_text" || ct == "text") {
            m.parts.push_back(Part::Text(Str(c, "text")));
          } else if (ct == "input_image") {
            if (auto part = ImagePart(Str(c, "image_url"), where, sink_)) {
              m.parts.push_back(std::move(*part));
            }
          } else if (ct == "refusal") {
            m.parts.push_back(Part::Text(Str(c, "refusal")));
          }
        }
      }
    } else if (item == "function_call") {
      m.role = Role::kAssistant;
      std::string args = Str(*payload, "arguments");
      if (args.empty() || !IsJson(args, kMaxJsonValueDepth)) args = json{{"input", args}}.dump();
      m.parts.push_back(Part::ToolCall(Str(*payload, "call_id"), Str(*payload, "name"), args));
    } else if (item == "custom_tool_call") {
      m.role = Role::kAssistant;
      m.parts.push_back(Part::ToolCall(Str(*payload, "call_id"), Str(*payload, "name"),
                                       json{{"input", Str(*payload, "input")}}.dump()));
    } else if (item == "local_shell_call") {
      m.role = Role::kAssistant;
      std::string call_id = Str(*payload, "call_id");
      if (call_id.empty()) call_id = Str(*payload, "id");
      m.parts.push_back(
          Part::ToolCall(call_id, "local_shell", payload->value("action", json::object()).dump()));
    } else if (item == "web_search_call") {
      m.role = Role::kAssistant;
      m.parts.push_back(Part::ToolCall(Str(*payload, "id"), "web_search",
                                       payload->value("action", json::object()).dump()));
    } else if (item == "function_call_output" || item == "custom_tool_call_output") {
      m.role = Role::kTool;
      bool is_error = false;
      std::string text = OutputText(payload->value("output", json()), &is_error);
      m.parts.push_back(Part::ToolResult(Str(*payload, "call_id"), std::move(text), is_error));
    } else if (item == "reasoning") {
      m.role = Role::kAssistant;
      std::string text;
      for (const char* field : {"summary", "content"}) {
        const json list = payload->value(field, json());
        if (!list.is_array()) continue;
        for (const json& s : list) {
          const std::string t = Str(s, "text");
          if (t.empty()) continue;
          if (!text.empty()) text += "\n\n";
          text += t;
        }
      }
      // encrypted_content lets the provider take the reasoning back.
      std::string encrypted = Str(*payload, "encrypted_content");
      if (text.empty() && encrypted.empty()) return Status::Ok();  // nothing to keep
      m.parts.push_back(Part::Reasoning(std::move(text), std::move(encrypted)));
    } else {
      return Status::Ok();  // item kinds with nothing to show
    }
    if (m.parts.empty()) {
      sink_.Skip(where, "a " + item + " item with no content sessiondb can keep");
      return Status::Ok();
    }
    if (m.role == Role::kAssistant) {
      m.model = model_;
      m.provider = provider_;
    }
    RETURN_IF_ERROR(FlushPending());
    pending_ = std::move(e);
    pending_where_ = where;
    return Status::Ok();
  }

  Status FlushPending() {
    if (!pending_) return Status::Ok();
    Event e = std::move(*pending_);
    pending_.reset();
    if (ImportSink::WouldKeep(e.message)) ++seq_;
    return sink_.Add(std::move(e), pending_where_);
  }

  fs::path path_;
  std::string label_;
  ImportSink& sink_;
  bool begun_ = false;
  std::string session_id_;
  std::string model_;
  std::string provider_;
  int64_t seq_ = 0;
  std::optional<Event> pending_;
  std::string pending_where_;
};

bool IsRolloutName(const fs::path& p) {
  return p.extension() == ".jsonl" && p.filename().string().rfind("rollout-", 0) == 0;
}

bool LooksLikeRollout(std::string_view head) {
  return head.find("\"session_meta\"") != std::string_view::npos ||
         (head.find("\"payload\"") != std::string_view::npos &&
          head.find("\"response_item\"") != std::string_view::npos);
}

int Detect(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    if (path.extension() != ".jsonl") return 0;
    if (LooksLikeRollout(PeekFile(path, 16384))) return 95;
    return IsRolloutName(path) ? 60 : 0;
  }
  if (!fs::is_directory(path, ec)) return 0;
  int seen = 0;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end && seen < 500;
       it.increment(ec), ++seen) {
    if (it.depth() > 4) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && IsRolloutName(it->path())) return 85;
  }
  return 0;
}

Status Run(const fs::path& path, ImportSink& sink) {
  std::error_code ec;
  const bool dir = fs::is_directory(path, ec);
  const std::vector<fs::path> files =
      dir ? FilesUnder(path, IsRolloutName) : std::vector<fs::path>{path};
  if (files.empty()) return Status::InvalidArgument("no rollout-*.jsonl files under " + path.string());
  const std::vector<int64_t> sizes = FileSizes(files);
  const int64_t overall = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  int64_t before = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path& f = files[i];
    std::string label = f.filename().string();
    if (dir) {
      fs::path rel = fs::relative(f, path, ec);
      if (!ec) label = rel.string();
    }
    sink.ProgressWithinFile(before, sizes[i], overall);
    RolloutImport rollout(f, label, sink);
    RETURN_IF_ERROR(rollout.Run());
    before += sizes[i];
  }
  return Status::Ok();
}

}  // namespace

ImportFormatSpec CodexImport() { return {kFormat, Detect, Run}; }

}  // namespace sessiondb::interop
