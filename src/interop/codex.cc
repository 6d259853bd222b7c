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
// assistant item before it. The session begins once its first real user
// message (not the context Codex writes as user messages) names it, so
// the events before it wait; they are few, and capped. A line without a
// timestamp takes the time of the line before it, or of the first line
// after it that has one. Memory: one line
// and the events waiting (at most kMaxHeldEvents / kMaxHeldBytes); a long
// line is bounded as interop/long_record.h says, and its strings are moved
// into the event rather than copied.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "blob/base64.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/formats.h"
#include "interop/jsonl_reader.h"
#include "interop/long_record.h"
#include "interop/source_scan.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "codex";

// Events read before the session can begin (no title yet) or before any
// time is known wait at most this many, or bytes, then go as they are.
constexpr size_t kMaxHeldEvents = 1000;
constexpr int64_t kMaxHeldBytes = int64_t{16} * 1024 * 1024;

// What Codex writes as a user message that the person did not type: the
// environment, AGENTS.md and user instructions, skills, aborted turns,
// shell commands run with '!' (codex-rs: is_session_prefix,
// is_contextual_user_message).
bool IsCodexContext(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return true;  // blank: nothing typed either
  text.remove_prefix(start);
  for (std::string_view prefix :
       {"<environment_context>", "<user_instructions>", "<turn_aborted>", "<context_update>",
        "<subagent_notification>", "<user_shell_command>", "<skill>",
        "# agents.md instructions for "}) {
    if (text.size() < prefix.size()) continue;
    bool same = true;
    for (size_t i = 0; i < prefix.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(text[i])) == prefix[i];
    }
    if (same) return true;
  }
  return false;
}

// About what an event holds in memory while it waits.
int64_t HeldBytes(const Event& e) {
  size_t n = e.compaction.summary.size() + e.message.metadata_json.size();
  for (const Part& p : e.message.parts) {
    n += p.text.size() + p.arguments_json.size() + (p.source ? p.source->data.size() : 0);
  }
  return static_cast<int64_t>(n);
}

std::string Str(const json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The string member `key` of `obj` moved out of the tree (each line is read
// once, and a string may be MiBs long), or "" when there is no such string.
std::string Take(json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return "";
  return std::move(it->get_ref<std::string&>());
}

// Text of an output that is a string, or {content, success}, or content items.
std::string OutputText(const json& output, bool* is_error) {
  if (output.is_string()) return output.get<std::string>();
  if (output.is_object()) {
    if (output.contains("success") && output["success"].is_boolean()) {
      *is_error = !output["success"].get<bool>();
    }
    return OutputText(MemberOr(output, "content", json()), is_error);
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

// The same, moving the text out when the output is one string.
std::string TakeOutputText(json& output, bool* is_error) {
  if (output.is_string()) return std::move(output.get_ref<std::string&>());
  return OutputText(output, is_error);
}

// The text of a message item's content: a string, or its text, output_text,
// input_text and refusal items; *images counts its input_image items.
std::string ContentText(const json& content, int* images) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const json& c : content) {
    const std::string type = Str(c, "type");
    std::string t = type == "refusal" ? Str(c, "refusal") : Str(c, "text");
    if (type == "input_image") {
      ++*images;
      t = "[image]";
    }
    if (t.empty()) continue;
    if (!out.empty()) out += "\n";
    out += t;
  }
  return out;
}

// The readable text of a reasoning item: its summary, then its content.
std::string ReasoningText(const json& item) {
  std::string text;
  for (const char* field : {"summary", "content"}) {
    const json& list = MemberOf(item, field);
    if (!list.is_array()) continue;
    for (const json& s : list) {
      const std::string t = Str(s, "text");
      if (t.empty()) continue;
      if (!text.empty()) text += "\n\n";
      text += t;
    }
  }
  return text;
}

// What a compacted record's replacement_history (the items Codex put in
// place of the whole history: kept user messages, its summary, or the
// encrypted summary of a server-side compaction) holds, as text: one
// paragraph per item, "role: text". Items with nothing readable (encrypted)
// are counted in *unreadable, images in *images.
std::string ReplacementText(const json& items, int* unreadable, int* images) {
  std::string out;
  auto add = [&out](const std::string& paragraph) {
    if (!out.empty()) out += "\n\n";
    out += paragraph;
  };
  for (const json& item : items) {
    const std::string type = Str(item, "type");
    if (type == "message") {
      std::string role = Str(item, "role");
      const std::string text = ContentText(MemberOf(item, "content"), images);
      if (!text.empty()) add((role.empty() ? "message" : role) + ": " + text);
    } else if (type == "function_call") {
      add("tool call " + Str(item, "name") + ": " + Str(item, "arguments"));
    } else if (type == "custom_tool_call") {
      add("tool call " + Str(item, "name") + ": " + Str(item, "input"));
    } else if (type == "local_shell_call") {
      add("tool call local_shell: " + MemberOr(item, "action", json::object()).dump());
    } else if (type == "function_call_output" || type == "custom_tool_call_output") {
      bool is_error = false;
      add("tool result: " + OutputText(MemberOf(item, "output"), &is_error));
    } else if (type == "reasoning") {
      const std::string text = ReasoningText(item);
      if (text.empty()) {
        ++*unreadable;
      } else {
        add("reasoning: " + text);
      }
    } else if (type == "compaction" || type == "compaction_summary" ||
               item.contains("encrypted_content")) {
      ++*unreadable;
    }
  }
  return out;
}

// The compaction a compacted record stands for, over seq 1..to_seq: its
// `message` and what its replacement_history holds (the message is left out
// when the history already carries it, as a local compaction's does), with
// limitations saying what could not be read.
Compaction CompactionOf(const json& payload, int64_t to_seq) {
  Compaction c;
  c.from_seq = 1;
  c.to_seq = to_seq;
  c.strategy = "codex-compact";
  const std::string message = Str(payload, "message");
  int unreadable = 0;
  int images = 0;
  const json& history = MemberOf(payload, "replacement_history");
  const std::string replaced =
      history.is_array() ? ReplacementText(history, &unreadable, &images) : "";
  if (!message.empty() && replaced.find(message) == std::string::npos) c.summary = message;
  if (!replaced.empty()) c.summary += (c.summary.empty() ? "" : "\n\n") + replaced;
  if (c.summary.empty()) c.summary = "Conversation compacted";
  if (unreadable > 0) {
    c.limitations = std::to_string(unreadable) + " item" + (unreadable == 1 ? "" : "s") +
                    " of the history Codex kept in place of these events " +
                    (unreadable == 1 ? "is" : "are") +
                    " encrypted (a server-side compaction) and not in this summary.";
  }
  if (images > 0) {
    if (!c.limitations.empty()) c.limitations += " ";
    c.limitations += std::to_string(images) + " image" + (images == 1 ? "" : "s") +
                     " of that history " + (images == 1 ? "is" : "are") +
                     " named here as [image], not shown.";
  }
  return c;
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

// The descriptor of an image whose data URI was cut to the record's budget,
// read from the URI's head and length; nullopt with a skip for a URL or a
// URI that is not base64 data.
std::optional<Part> CutDataUriImage(const CutString& url, std::string_view where,
                                    ImportSink& sink) {
  const std::string_view head = url.head;
  const size_t comma = head.find(',');
  const size_t semi = head.find(';');
  if (!head.starts_with("data:") || comma == std::string_view::npos ||
      semi == std::string_view::npos || semi > comma || head.compare(semi, 8, ";base64,") != 0) {
    sink.Skip(std::string(where), "an input_image of " +
                                      FormatBytes(static_cast<int64_t>(url.bytes)) +
                                      " is no base64 data URI; it is left out");
    return std::nullopt;
  }
  return CutImagePart(sink, url, comma + 1, head.substr(5, semi - 5), where);
}

class RolloutImport {
 public:
  RolloutImport(const fs::path& path, std::string label, ImportSink& sink)
      : path_(path), label_(std::move(label)), sink_(sink) {}

  Status Run() {
    ASSIGN_OR_RETURN(auto reader, JsonlReader::Open(path_.string()));
    reader->OnLongLine(kWaitForWriterBytes, [this] { WaitForWriter(sink_); });
    JsonlReader::Line line;
    while (true) {
      ASSIGN_OR_RETURN(bool more, reader->Next(&line));
      if (!more) break;
      if ((line.number & 1023) == 0) sink_.Progress(reader->bytes_read(), reader->total_bytes());
      const std::string where = label_ + ":" + std::to_string(line.number);
      if (line.too_long) {
        sink_.Skip(where, "the line is longer than the limit of " + std::to_string(kMaxLineBytes) +
                              " bytes");
        continue;
      }
      if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      if (line.text.size() > kLeanParseBytes) {
        RETURN_IF_ERROR(LongLine(*reader, line, where));
        continue;
      }
      Result<json> parsed = ParseJson(line.text);
      if (!parsed || !parsed->is_object()) {
        // Words for what is wrong: the parser's for text that is not JSON
        // (cut short at the end or not), the kind found for other JSON.
        sink_.Skip(where, JsonLineProblem(line).value_or("the line is not a JSON object"));
        continue;
      }
      json& r = *parsed;
      std::vector<CutString> none;
      RETURN_IF_ERROR(Line(r, line, where, none));
    }
    sink_.Progress(reader->bytes_read(), reader->total_bytes());
    if (!prepared_) PrepareSession(json::object());
    RETURN_IF_ERROR(FlushPending());
    if (!opened_ && held_.empty()) {
      // Nothing to import: no empty "New Session" for it, and it is said.
      sink_.Skip(label_,
                 "the rollout holds no message, tool call or compaction sessiondb can import; "
                 "no session is made for it");
      return Status::Ok();
    }
    // A session_meta without its time: the rollout's first line that has one.
    if (session_.created_ms == 0 && first_ts_) session_.created_ms = *first_ts_;
    RETURN_IF_ERROR(Release(/*at_end=*/true));
    return sink_.EndSession();
  }

 private:
  // An event read but not handed to the sink yet.
  struct Held {
    Event event;
    std::string where;
    bool untimed = false;  // no time of its own and none before it: waits for the next
  };

  // The session as session_meta describes it; BeginSession waits for its title.
  void PrepareSession(const json& meta) {
    prepared_ = true;
    std::string source_id = Str(meta, "id");
    if (source_id.empty()) {
      // rollout-2025-06-01T10-00-00-<uuid>.jsonl. A file name need not be
      // UTF-8, and its tail may cut a character: the metadata must be.
      const std::string stem = path_.stem().string();
      source_id = ToValidUtf8(stem.size() > 36 ? stem.substr(stem.size() - 36) : stem);
    }
    session_id_ = StableSessionId(kFormat, source_id);
    json m = {{"source", kFormat}, {"source_file", label_}, {"source_session_id", source_id}};
    for (const char* key : {"cwd", "originator", "cli_version", "model_provider", "source"}) {
      const std::string v = Str(meta, key);
      if (!v.empty()) m[key == std::string_view("source") ? "codex_source" : key] = v;
    }
    if (meta.is_object() && meta.contains("git") && meta["git"].is_object()) {
      m["git"] = meta["git"];
      // The same key Claude Code sessions get, for lists and filters.
      const std::string branch = Str(meta["git"], "branch");
      if (!branch.empty()) m["git_branch"] = branch;
    }
    const std::string forked = Str(meta, "forked_from_id");
    if (!forked.empty()) {
      m["forked_from"] = StableSessionId(kFormat, forked);
      m["forked_from_id"] = forked;
    }
    provider_ = Str(meta, "model_provider");
    if (provider_.empty()) provider_ = "openai";
    session_cwd_ = Str(meta, "cwd");
    session_.id = session_id_;
    session_.created_ms = ParseIsoTime(Str(meta, "timestamp")).value_or(0);
    session_.metadata_json = m.dump();
  }

  // The first real user message names the session, as a person knows it
  // (the automatic rule would take the developer instructions).
  void NoteTitle(const Message& m) {
    std::string text;
    for (const Part& p : m.parts) {
      if (p.type != PartType::kText || IsCodexContext(p.text)) continue;
      if (!text.empty()) text += "\n";
      text += p.text;
    }
    if (text.empty()) return;
    title_known_ = true;
    session_.title = MakeTitle(text);
    session_.preview = MakePreview(text);
  }

  // A line's own time: the time of the lines before it that had none, and
  // of those after it that have none.
  void NoteTime(int64_t ts) {
    last_ts_ = ts;
    if (!first_ts_) first_ts_ = ts;
    auto fill = [ts](Held& h) {
      if (!h.untimed) return;
      h.event.ts_ms = ts;
      h.untimed = false;
    };
    for (Held& h : held_) fill(h);
    if (pending_) fill(*pending_);
  }

  // The time of events with no time before or after them: when the
  // session began, else when the rollout was last written.
  int64_t FallbackTime() const {
    if (session_.created_ms > 0) return session_.created_ms;
    std::error_code ec;
    const auto written = fs::last_write_time(path_, ec);
    if (ec) return 0;
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::file_clock::to_sys(written).time_since_epoch())
        .count();
  }

  // A line over kLeanParseBytes: parsed lean, its text cut to
  // kMaxRecordTextBytes (with a reason), and let go once its event is made.
  Status LongLine(JsonlReader& reader, const JsonlReader::Line& line, const std::string& where) {
    Result<LongRecord> lean = ParseLongRecord(line.text);
    if (!lean || !lean->tree.is_object()) {
      reader.ReleaseLine();
      // Not JsonLineProblem: it would parse the whole line again. The lean
      // parser's message is quoted as it is; its columns count the lean text.
      sink_.Skip(where, !lean ? "the record is left out: " + lean.error().message()
                              : "the line is JSON but " + JsonKindPhrase(lean->tree.type_name()) +
                                    ", not an object");
      return Status::Ok();
    }
    Status s = Line(lean->tree, line, where, lean->cut);
    reader.ReleaseLine();
    // What is left was cut to a note (images keep their descriptors).
    if (!lean->cut.empty()) sink_.Skip(where, CutReason(lean->cut.size()));
    return s;
  }

  // One line's record `r` (its strings may be moved out; `cut`: those cut to
  // the text budget of a long line, less the images' it takes out).
  Status Line(json& r, const JsonlReader::Line& line, const std::string& where,
              std::vector<CutString>& cut) {
    if (std::optional<int64_t> own = ParseIsoTime(Str(r, "timestamp"))) NoteTime(*own);
    const int64_t ts = last_ts_.value_or(0);
    std::string type = Str(r, "type");
    json* payload = &r;
    auto p = r.find("payload");
    if (p != r.end() && p->is_object()) {
      payload = &*p;
    } else if (type.empty() && r.contains("id") && !prepared_) {
      type = "session_meta";  // the bare first line of older rollouts
    } else if (!type.empty()) {
      type = "response_item";  // older rollouts: bare response items
    } else {
      return Status::Ok();  // {"record_type":"state"} and the like
    }
    if (type == "session_meta") {
      if (!prepared_) PrepareSession(*payload);
      return Status::Ok();  // a resumed or forked rollout repeats metas
    }
    if (!prepared_) PrepareSession(json::object());
    if (type == "turn_context") {
      const std::string model = Str(*payload, "model");
      if (!model.empty()) model_ = model;
      const std::string cwd = Str(*payload, "cwd");
      if (!cwd.empty()) turn_cwd_ = cwd;
      return Status::Ok();
    }
    if (type == "event_msg") {
      if (Str(*payload, "type") == "token_count" && pending_ &&
          pending_->event.message.role == Role::kAssistant) {
        const json info = MemberOr(*payload, "info", json());
        const json last = info.is_object() ? MemberOr(info, "last_token_usage", json()) : json();
        if (last.is_object()) {
          // OpenAI's counts: input includes the cached input, output includes
          // the reasoning (docs/usage.md); Codex records no cache writes.
          Usage u;
          u.input_tokens = MemberOr(last, "input_tokens", int64_t{0});
          u.cached_tokens = MemberOr(last, "cached_input_tokens", int64_t{0});
          u.output_tokens = MemberOr(last, "output_tokens", int64_t{0});
          u.reasoning_tokens = MemberOr(last, "reasoning_output_tokens", int64_t{0});
          pending_->event.message.usage = u;
        }
      }
      return Status::Ok();
    }
    // The line's own bytes and number name its event.
    const std::string id = StableEventId(session_id_, std::to_string(line.number) + "/", line.text);
    if (type == "compacted") {
      RETURN_IF_ERROR(FlushPending());
      if (seq_ == 0) {
        sink_.Skip(where, "a compaction before any event: there is nothing for it to stand in for");
        return Status::Ok();
      }
      Event e;
      e.type = EventType::kCompaction;
      e.id = id;
      e.ts_ms = ts;
      e.compaction = CompactionOf(*payload, seq_);
      e.compaction.model = model_;
      ++seq_;
      return Hand({std::move(e), where, !last_ts_});
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
      auto content = payload->find("content");
      if (content != payload->end() && content->is_string()) {
        m.parts.push_back(Part::Text(std::move(content->get_ref<std::string&>())));
      }
      if (content != payload->end() && content->is_array()) {
        for (json& c : *content) {
          const std::string ct = Str(c, "type");
          if (ct == "input_text" || ct == "output_text" || ct == "text") {
            m.parts.push_back(Part::Text(Take(c, "text")));
          } else if (ct == "input_image") {
            std::optional<CutString> cut_url;
            if (auto url = c.find("image_url"); url != c.end()) cut_url = TakeCut(&cut, &*url);
            if (cut_url) {
              // Part of an image is no image, and history is kept whole.
              if (auto part = CutDataUriImage(*cut_url, where, sink_)) {
                m.parts.push_back(std::move(*part));
              }
            } else if (auto part = ImagePart(Take(c, "image_url"), where, sink_)) {
              m.parts.push_back(std::move(*part));
            }
          } else if (ct == "refusal") {
            m.parts.push_back(Part::Text(Take(c, "refusal")));
          }
        }
      }
    } else if (item == "function_call") {
      m.role = Role::kAssistant;
      std::string args = Take(*payload, "arguments");
      if (args.empty() || !IsJson(args, kMaxJsonValueDepth)) args = json{{"input", args}}.dump();
      m.parts.push_back(Part::ToolCall(Str(*payload, "call_id"), Str(*payload, "name"), args));
    } else if (item == "custom_tool_call") {
      m.role = Role::kAssistant;
      m.parts.push_back(Part::ToolCall(Str(*payload, "call_id"), Str(*payload, "name"),
                                       json{{"input", Take(*payload, "input")}}.dump()));
    } else if (item == "local_shell_call") {
      m.role = Role::kAssistant;
      std::string call_id = Str(*payload, "call_id");
      if (call_id.empty()) call_id = Str(*payload, "id");
      m.parts.push_back(Part::ToolCall(call_id, "local_shell",
                                       MemberOr(*payload, "action", json::object()).dump()));
    } else if (item == "web_search_call") {
      m.role = Role::kAssistant;
      m.parts.push_back(Part::ToolCall(Str(*payload, "id"), "web_search",
                                       MemberOr(*payload, "action", json::object()).dump()));
    } else if (item == "function_call_output" || item == "custom_tool_call_output") {
      m.role = Role::kTool;
      bool is_error = false;
      auto output = payload->find("output");
      std::string text =
          output == payload->end() ? std::string() : TakeOutputText(*output, &is_error);
      m.parts.push_back(Part::ToolResult(Str(*payload, "call_id"), std::move(text), is_error));
    } else if (item == "reasoning") {
      m.role = Role::kAssistant;
      std::string text = ReasoningText(*payload);
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
    // A tool call of a turn that ran elsewhere than the session's folder
    // says where: the code memory resolves its relative paths against it.
    if (m.parts.front().type == PartType::kToolCall && !turn_cwd_.empty() &&
        turn_cwd_ != session_cwd_) {
      m.metadata_json = json{{"cwd", turn_cwd_}}.dump();
    }
    if (m.role == Role::kUser && !title_known_) NoteTitle(m);
    RETURN_IF_ERROR(FlushPending());
    pending_ = Held{std::move(e), where, !last_ts_};
    return Status::Ok();
  }

  // The last message waits for a token_count that may follow it.
  Status FlushPending() {
    if (!pending_) return Status::Ok();
    Held h = std::move(*pending_);
    pending_.reset();
    if (ImportSink::WouldKeep(h.event.message)) ++seq_;
    return Hand(std::move(h));
  }

  Status Hand(Held h) {
    held_bytes_ += HeldBytes(h.event);
    held_.push_back(std::move(h));
    return Release(/*at_end=*/false);
  }

  // Begins the session once its title is known (or waiting is over: the
  // caps, the end of the rollout) and hands the events over.
  Status Release(bool at_end) {
    const bool waited_enough =
        at_end || held_.size() > kMaxHeldEvents || held_bytes_ > kMaxHeldBytes;
    if (!opened_) {
      if (!title_known_ && !waited_enough) return Status::Ok();
      RETURN_IF_ERROR(sink_.BeginSession(session_));
      opened_ = true;
    }
    while (!held_.empty()) {
      if (held_.front().untimed) {
        if (!waited_enough) break;
        held_.front().event.ts_ms = FallbackTime();
      }
      Held h = std::move(held_.front());
      held_.pop_front();
      held_bytes_ -= HeldBytes(h.event);
      RETURN_IF_ERROR(sink_.Add(std::move(h.event), h.where));
    }
    return Status::Ok();
  }

  fs::path path_;
  std::string label_;
  ImportSink& sink_;
  bool prepared_ = false;  // session_ is filled (from session_meta, or without one)
  bool opened_ = false;    // the sink's BeginSession was called
  bool title_known_ = false;
  Session session_;
  std::string session_id_;
  std::string model_;
  std::string provider_;
  std::string session_cwd_;  // session_meta's cwd
  std::string turn_cwd_;     // the latest turn_context's cwd
  int64_t seq_ = 0;
  std::optional<int64_t> last_ts_;   // the time of the last line that had one
  std::optional<int64_t> first_ts_;  // the time of the first line that had one
  std::optional<Held> pending_;
  std::deque<Held> held_;  // handed over, waiting for the session to begin
  int64_t held_bytes_ = 0;
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
  std::vector<fs::path> unlisted;
  const std::vector<fs::path> files =
      dir ? FilesUnder(path, IsRolloutName, &unlisted) : std::vector<fs::path>{path};
  // A folder import leaves out what it cannot read, saying why, and goes on;
  // a file given alone fails as it is opened.
  for (const fs::path& folder : unlisted) sink.SkipFile(folder.string(), "permission denied");
  if (files.empty() && unlisted.empty()) {
    return Status::InvalidArgument("no rollout-*.jsonl files under " + path.string());
  }
  const std::vector<int64_t> sizes = FileSizes(files);
  const int64_t overall = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  int64_t before = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path& f = files[i];
    if (std::optional<std::string> why = dir ? UnreadableReason(f) : std::nullopt) {
      sink.SkipFile(f.string(), *why);
      before += sizes[i];
      continue;
    }
    std::string label = f.filename().string();
    if (dir) {
      fs::path rel = fs::relative(f, path, ec);
      if (!ec) label = rel.string();
    }
    label = ToValidUtf8(label);  // it goes into the session's metadata
    sink.ProgressWithinFile(before, sizes[i], overall);
    RolloutImport rollout(f, label, sink);
    RETURN_IF_ERROR(rollout.Run());
    before += sizes[i];
  }
  return Status::Ok();
}

}  // namespace

ImportFormatSpec CodexImport() { return {ImportFormat::kCodex, Detect, Run}; }

}  // namespace sessiondb::interop
