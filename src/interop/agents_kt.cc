// Agents.KT snapshots (agents_engine.core.SessionSnapshot as its
// FileSnapshotStore writes it): one JSON file per session,
//   {requestId, sessionId, manifestHash, pendingInterruptCallId,
//    pendingApprovalGate, turns, toolCalls, toolCallLimit, tokens, memory,
//    messages: [{role, content, toolCalls?: [{name, arguments}],
//                images?: [{base64, mime}]}]}
// with `images` omitted when a message has none. See docs/interop.md.
//
// The source has no message ids or times: a message is known by its
// Fingerprint (role, content, tool calls: what an export writes and an
// import reads back), counted when equal ones repeat, and gets the file's
// modification time. So a snapshot continued in Agents.KT after an export
// from sessiondb, or grown since the last import, adds exactly the messages
// the store lacks, wherever they stand.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "blob/base64.h"
#include "blob/media_type.h"
#include "blob/sha256.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/formats.h"
#include "interop/output_file.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kFormat = "agents-kt";
// The snapshot fields kept in session metadata under "agents_kt", so an
// export gives them back.
constexpr const char* kKeptFields[] = {"requestId",
                                       "sessionId",
                                       "manifestHash",
                                       "pendingInterruptCallId",
                                       "pendingApprovalGate",
                                       "turns",
                                       "toolCalls",
                                       "toolCallLimit",
                                       "memory"};

// ---- Import -----------------------------------------------------------------

int64_t FileTimeMs(const fs::path& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  if (ec) return 0;
  const auto sys = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count();
}

std::string StringOr(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// What an Agents.KT message is known by, as ImportSink's MessageFingerprint:
// its role, its content (text and tool results joined as EncodeMessage joins
// them) and its tool calls (name, arguments as the object written out). The
// same for a message decoded here and for the stored message an export
// wrote. Images are left out: a message's text and place among equal ones
// tell it apart.
std::string Fingerprint(const Message& m) {
  std::string out(RoleName(m.role));
  out += '\n';
  bool first = true;
  for (const Part& p : m.parts) {
    if (p.type != PartType::kText && p.type != PartType::kToolResult) continue;
    if (!first) out += '\n';
    out += p.text;
    first = false;
  }
  for (const Part& p : m.parts) {
    if (p.type != PartType::kToolCall) continue;
    json args = ParseJson(p.arguments_json.empty() ? "{}" : p.arguments_json).value_or(json());
    if (!args.is_object()) args = json::object();  // as EncodeMessage writes it
    out += '\0';
    out += p.tool_name;
    out += '\0';
    out += args.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return out;
}

// The message's parts, or the reason it cannot come in. Image entries that
// cannot come in are skipped one by one; the rest of the message stays.
Result<Message> DecodeMessage(const json& jm, const std::string& where, ImportSink& sink,
                              std::vector<std::string>* open_calls, int64_t* call_counter) {
  if (!jm.is_object()) return Err(Status::InvalidArgument("a message must be a JSON object"));
  Message m;
  const json& role = MemberOr(jm, "role", json("user"));
  if (!role.is_string()) return Err(Status::InvalidArgument("'role' must be a string"));
  ASSIGN_OR_RETURN(m.role, ParseRole(role.get<std::string>()));
  const json content = MemberOr(jm, "content", json(""));
  if (!content.is_string() && !content.is_null()) {
    return Err(Status::InvalidArgument("'content' must be a string"));
  }
  const std::string text = content.is_string() ? content.get<std::string>() : "";
  if (m.role == Role::kTool && !open_calls->empty()) {
    // Agents.KT results carry no call id: they answer the calls in order.
    m.parts.push_back(Part::ToolResult(open_calls->front(), text));
    open_calls->erase(open_calls->begin());
  } else if (!text.empty()) {
    m.parts.push_back(Part::Text(text));
  }
  if (auto it = jm.find("toolCalls"); it != jm.end() && !it->is_null()) {
    if (!it->is_array()) return Err(Status::InvalidArgument("'toolCalls' must be an array"));
    for (size_t i = 0; i < it->size(); ++i) {
      const json& tc = (*it)[i];
      if (!tc.is_object() || !tc.contains("name") || !tc["name"].is_string()) {
        sink.Skip(where + ".toolCalls[" + std::to_string(i) + "]", "a tool call needs a name");
        continue;
      }
      const json args = MemberOr(tc, "arguments", json::object());
      std::string id = "call_" + std::to_string(++*call_counter);
      open_calls->push_back(id);
      m.parts.push_back(Part::ToolCall(std::move(id), tc["name"].get<std::string>(),
                                       args.is_null() ? "{}" : args.dump()));
    }
  }
  if (auto it = jm.find("images"); it != jm.end() && !it->is_null()) {
    if (!it->is_array()) return Err(Status::InvalidArgument("'images' must be an array"));
    for (size_t i = 0; i < it->size(); ++i) {
      const json& im = (*it)[i];
      const std::string iwhere = where + ".images[" + std::to_string(i) + "]";
      const std::string mime = im.is_object() ? StringOr(im, "mime") : "";
      const std::string b64 = im.is_object() ? StringOr(im, "base64") : "";
      if (!blob::IsSupportedImageMime(mime)) {
        sink.Skip(iwhere, "unknown image MIME type '" + mime +
                              "' (PNG, JPEG, GIF and WebP are read); the image is left out");
        continue;
      }
      Result<std::string> bytes = blob::Base64Decode(b64);
      if (!bytes || bytes->empty()) {
        sink.Skip(iwhere, "'base64' is not valid base64" +
                              (bytes ? std::string() : ": " + bytes.error().message()));
        continue;
      }
      m.parts.push_back(Part::ImageFromBytes(std::move(*bytes), blob::NormalizeMime(mime)));
    }
  }
  if (m.parts.empty()) return Err(Status::InvalidArgument("the message is empty"));
  return m;
}

// Imports one snapshot file; a file that cannot be read is skipped whole.
Status ImportFile(const fs::path& path, ImportSink& sink) {
  const std::string where = path.filename().string();
  if (!MayRead(path)) {
    sink.Skip(where, OutsideReason(where));
    return Status::Ok();
  }
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // One stray byte must not cost the session: bytes that are not UTF-8
  // become U+FFFD, as the line importers do. The repaired copy replaces the
  // text read, so only a file with such a byte holds two for a moment.
  if (!IsValidUtf8(text)) text = ToValidUtf8(text);
  Result<json> parsed = ParseJson(text);
  if (!parsed) {
    sink.Skip(where,
              IsJsonNestingError(parsed.error())
                  ? parsed.error().message() + "; the snapshot is left out"
                  : "not a complete JSON document (truncated?): " + parsed.error().message());
    return Status::Ok();
  }
  json doc = std::move(*parsed);
  if (!doc.is_object() || !doc.contains("messages") || !doc["messages"].is_array()) {
    sink.Skip(where, "not an Agents.KT snapshot: no 'messages' array");
    return Status::Ok();
  }
  std::string source_id = StringOr(doc, "sessionId");
  if (source_id.empty()) source_id = StringOr(doc, "requestId");
  if (source_id.empty()) source_id = path.stem().string();
  Session session;
  session.id = StableSessionId(kFormat, source_id);
  json kept = json::object();
  for (const char* key : kKeptFields) {
    if (auto it = doc.find(key); it != doc.end() && !it->is_null()) kept[key] = *it;
  }
  session.metadata_json = json{{"agents_kt", kept}}.dump();

  // Usage: Agents.KT keeps the session's total; it goes on the last
  // assistant message (export sums it back).
  std::optional<Usage> usage;
  std::string provider, model;
  if (auto t = doc.find("tokens"); t != doc.end() && t->is_object()) {
    auto num = [&](const char* k) {
      auto it = t->find(k);
      return it != t->end() && it->is_number_integer() ? it->get<int64_t>() : int64_t{0};
    };
    usage = Usage{.input_tokens = num("prompt"),
                  .output_tokens = num("completion"),
                  .cached_tokens = num("cached"),
                  .reasoning_tokens = num("reasoning")};
    provider = StringOr(*t, "provider");
    model = StringOr(*t, "model");
    if (provider == "unknown") provider.clear();
    if (model == "unknown") model.clear();
  }
  const json& list = doc["messages"];
  size_t last_assistant = list.size();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].is_object() && MemberOr(list[i], "role", json()) == "assistant") last_assistant = i;
  }

  const int64_t ts = FileTimeMs(path);
  RETURN_IF_ERROR(sink.BeginSession(session, Fingerprint));
  std::vector<std::string> open_calls;
  int64_t call_counter = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string mwhere = where + ":messages[" + std::to_string(i) + "]";
    Result<Message> m = DecodeMessage(list[i], mwhere, sink, &open_calls, &call_counter);
    if (!m) {
      sink.Skip(mwhere, m.error().message());
      continue;
    }
    if (i == last_assistant && usage) {
      m->usage = usage;
      m->provider = provider;
      m->model = model;
    }
    Event e;  // no id: the sink names it by its Fingerprint
    e.ts_ms = ts;
    e.type = EventType::kMessage;
    e.message = std::move(*m);
    RETURN_IF_ERROR(sink.Add(std::move(e), mwhere));
  }
  return sink.EndSession();
}

bool LooksLikeSnapshot(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || path.extension() != ".json") return false;
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"requestId\"") != std::string::npos &&
         head.find("sessiondb-snapshot") == std::string::npos;
}

std::vector<fs::path> SnapshotFiles(const fs::path& path) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  return files;
}

int DetectAgentsKt(const fs::path& path) {
  for (const fs::path& f : SnapshotFiles(path)) {
    if (LooksLikeSnapshot(f)) return 80;
  }
  return 0;
}

Status ImportAgentsKt(const fs::path& path, ImportSink& sink) {
  const std::vector<fs::path> files = SnapshotFiles(path);
  for (size_t i = 0; i < files.size(); ++i) {
    RETURN_IF_ERROR(ImportFile(files[i], sink));
    sink.Progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(files.size()));
  }
  return Status::Ok();
}

// ---- Export -----------------------------------------------------------------

Result<ordered_json> EncodeMessage(Store& store, const Message& m, ExportReport* report) {
  ordered_json j;
  std::string content;
  ordered_json calls = ordered_json::array();
  ordered_json images = ordered_json::array();
  auto append = [&content](const std::string& text) {
    if (!content.empty()) content += "\n";
    content += text;
  };
  for (const Part& p : m.parts) {
    switch (p.type) {
      case PartType::kText:
      case PartType::kToolResult:
        append(p.text);
        break;
      case PartType::kToolCall: {
        json args = ParseJson(p.arguments_json.empty() ? "{}" : p.arguments_json).value_or(json());
        if (!args.is_object()) args = json::object();  // Agents.KT arguments are a map
        calls.push_back({{"name", p.tool_name}, {"arguments", ordered_json(args)}});
        break;
      }
      case PartType::kImage: {
        if (!p.resource || p.resource->content_sha256.empty()) break;
        Result<std::string> bytes = store.ReadBlob(p.resource->content_sha256);
        if (!bytes && bytes.error().code() == StatusCode::kNotFound) break;  // lost: left out
        if (!bytes) return Err(bytes.error());
        images.push_back({{"base64", blob::Base64Encode(*bytes)}, {"mime", p.resource->mime}});
        ++report->images;
        break;
      }
      default:  // reasoning, files, links: Agents.KT messages have no place for them
        break;
    }
  }
  j["role"] = RoleName(m.role);
  j["content"] = content;
  if (!calls.empty()) j["toolCalls"] = std::move(calls);
  if (!images.empty()) j["images"] = std::move(images);
  return j;
}

Status ExportAgentsKt(Store& store, std::span<const Session> sessions, const fs::path& out,
                      FileSystem& file_system, ExportReport* report) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    return Status::AlreadyExists(out.string() + " is a file; agents-kt exports to a folder");
  }
  RETURN_IF_ERROR(CreateDirectories(file_system, out));
  for (const Session& s : sessions) {
    json meta = ParseJson(s.metadata_json.empty() ? "{}" : s.metadata_json).value_or(json());
    const json kept =
        meta.is_object() && meta.contains("agents_kt") && meta["agents_kt"].is_object()
            ? meta["agents_kt"]
            : json::object();
    ASSIGN_OR_RETURN(std::vector<Event> events, store.ReadEvents(s.id));
    events = ApplyRewinds(std::move(events));  // the session's view, as a reader sees it
    ordered_json messages = ordered_json::array();
    Usage total;
    bool any_usage = false;
    std::string provider = "unknown", model = "unknown";
    int64_t turns = 0, tool_calls = 0;
    for (const Event& e : events) {
      if (e.type != EventType::kMessage || e.message.pruned) continue;
      const Message& m = e.message;
      ASSIGN_OR_RETURN(ordered_json jm, EncodeMessage(store, m, report));
      messages.push_back(std::move(jm));
      ++report->messages;
      turns += m.role == Role::kAssistant;
      for (const Part& p : m.parts) tool_calls += p.type == PartType::kToolCall;
      if (m.usage) {
        any_usage = true;
        total.input_tokens += m.usage->input_tokens;
        total.output_tokens += m.usage->output_tokens;
        total.cached_tokens += m.usage->cached_tokens;
        total.reasoning_tokens += m.usage->reasoning_tokens;
        if (!m.provider.empty()) provider = m.provider;
        if (!m.model.empty()) model = m.model;
      }
    }
    auto kept_or = [&kept](const char* key, const json& fallback) {
      auto it = kept.find(key);
      return ordered_json(it != kept.end() ? *it : fallback);
    };
    const std::string session_key = MemberOr(kept, "sessionId", s.id);
    ordered_json doc;
    doc["requestId"] = kept_or("requestId", s.id);
    doc["sessionId"] = session_key;
    doc["manifestHash"] = kept_or("manifestHash", nullptr);
    doc["pendingInterruptCallId"] = kept_or("pendingInterruptCallId", nullptr);
    doc["pendingApprovalGate"] = kept_or("pendingApprovalGate", false);
    doc["turns"] = kept_or("turns", turns);
    doc["toolCalls"] = kept_or("toolCalls", tool_calls);
    doc["toolCallLimit"] = kept_or("toolCallLimit", 0);
    if (any_usage) {
      doc["tokens"] = {{"prompt", total.input_tokens},  {"completion", total.output_tokens},
                       {"cached", total.cached_tokens}, {"reasoning", total.reasoning_tokens},
                       {"provider", provider},          {"model", model}};
    } else {
      doc["tokens"] = nullptr;
    }
    doc["memory"] = kept_or("memory", json::object());
    doc["messages"] = std::move(messages);
    // Named as Agents.KT's FileSnapshotStore names a key's file, so
    // FileSnapshotStore(out).load(sessionId) finds it.
    const fs::path file = out / (blob::Sha256Hex(session_key) + ".json");
    OutputFile f(file_system);
    RETURN_IF_ERROR(f.Open(file));
    try {
      f.Write(doc.dump());
    } catch (const json::exception& ex) {
      return Status::InvalidArgument("session " + s.id + " cannot be written: " + ex.what());
    }
    RETURN_IF_ERROR(f.Commit());
    report->files.push_back(file.string());
    ++report->sessions;
  }
  return Status::Ok();
}

}  // namespace

ImportFormatSpec AgentsKtImport() {
  return {ImportFormat::kAgentsKt, DetectAgentsKt, ImportAgentsKt};
}

ExportFormatSpec AgentsKtExport() { return {ExportFormat::kAgentsKt, ExportAgentsKt}; }

}  // namespace sessiondb::interop
