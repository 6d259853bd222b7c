// The Extremis format (a macOS assistant): a `sessions/` folder holding
// `index.json` (`{version, sessions[], activeSessionId?, lastUpdated}`; older
// files say `conversations`, `activeConversationId`, `lastModifiedAt`) and one
// `<UUID>.json` per session (`{id, version, messages[], initialRequest?,
// maxMessages, createdAt, updatedAt, title?, isArchived, summary?}`).
// See docs/interop.md#extremis for the mapping.
//
// Session files are whole JSON documents (Extremis rewrites them in place), so
// memory is bounded by the largest session, not the folder.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "blob/base64.h"
#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/formats.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "extremis";
// Seconds between the Unix epoch and 2001-01-01, Foundation's reference
// date: what a Date encodes as when the encoder is left at its default.
constexpr int64_t kAppleEpochOffsetS = 978307200;

// The sessions folder of `path` (the folder itself or its index.json).
fs::path SessionsDir(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path;
  return path.parent_path();
}

Result<json> ReadJson(const fs::path& file) {
  if (!MayRead(file)) return Err(Status::InvalidArgument(OutsideReason(file.filename().string())));
  std::ifstream in(file, std::ios::binary);
  if (!in) return Err(Status::NotFound("cannot open " + file.string()));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // One stray byte must not cost the session: bytes that are not UTF-8
  // become U+FFFD, as the line importers do. The repaired copy replaces the
  // text read, so only a file with such a byte holds two for a moment.
  if (!IsValidUtf8(text)) text = ToValidUtf8(text);
  Result<json> doc = ParseJson(text);
  if (!doc) {
    return Err(Status(StatusCode::kCorruption, IsJsonNestingError(doc.error())
                                                   ? doc.error().message()
                                                   : "is not a complete JSON document"));
  }
  return doc;
}

// The first present key of `keys` in `object`, or nullptr.
const json* Field(const json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return nullptr;
  for (const char* key : keys) {
    auto it = object.find(key);
    if (it != object.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::string StringOf(const json* v) { return v && v->is_string() ? v->get<std::string>() : ""; }

// A Swift Date as Extremis writes it (ISO-8601), or as a default
// JSONEncoder would (seconds since 2001-01-01); 0 if neither.
int64_t DateMs(const json* v) {
  if (!v) return 0;
  if (v->is_string()) return ParseIsoTime(v->get<std::string>()).value_or(0);
  if (v->is_number()) {
    return static_cast<int64_t>((v->get<double>() + kAppleEpochOffsetS) * 1000.0);
  }
  return 0;
}

bool IsUuidName(const fs::path& file) {
  const std::string stem = file.stem().string();
  if (file.extension() != ".json" || stem.size() != 36) return false;
  for (size_t i = 0; i < stem.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? stem[i] != '-' : !std::isxdigit(static_cast<unsigned char>(stem[i]))) return false;
  }
  return true;
}

int Detect(const fs::path& path) {
  const fs::path dir = SessionsDir(path);
  std::error_code ec;
  const fs::path index = dir / "index.json";
  if (!fs::is_regular_file(index, ec)) return 0;
  if (!fs::is_directory(path, ec) && path.filename() != "index.json") return 0;
  if (fs::file_size(index, ec) > (size_t{64} << 20)) return 0;
  auto doc = ReadJson(index);
  if (!doc || !doc->is_object()) return 0;
  const bool shaped = Field(*doc, {"sessions", "conversations"}) != nullptr &&
                      Field(*doc, {"lastUpdated", "lastModifiedAt", "version"}) != nullptr;
  return shaped ? 90 : 0;
}

// The index entry of each session id, and the index's order.
struct IndexInfo {
  std::vector<std::string> order;
  std::map<std::string, json> entries;
  std::string active;
};

IndexInfo ReadIndex(const fs::path& dir, ImportSink& sink) {
  IndexInfo info;
  auto doc = ReadJson(dir / "index.json");
  if (!doc || !doc->is_object()) {
    sink.Skip("index.json", (doc ? std::string("is not a JSON object") : doc.error().message()) +
                                "; titles and archive flags come from the session files alone");
    return info;
  }
  if (const json* list = Field(*doc, {"sessions", "conversations"}); list && list->is_array()) {
    for (const json& e : *list) {
      const std::string id = StringOf(Field(e, {"id"}));
      if (id.empty()) continue;
      if (info.entries.emplace(id, e).second) info.order.push_back(id);
    }
  }
  info.active = StringOf(Field(*doc, {"activeSessionId", "activeConversationId"}));
  return info;
}

// What an Extremis message without an id is known by, as ImportSink's
// MessageFingerprint: its role, time and text.
std::string Fingerprint(const Message& m) {
  return std::string(RoleName(m.role)) + "\n" + std::to_string(m.ts_ms) + "\n" + m.Text();
}

// The compaction event standing for the first `covers` messages of a
// session whose last message so far has seq `last_seq`.
Event SummaryEvent(const json& summary, const std::string& session_id, int64_t last_seq) {
  Event e;
  e.type = EventType::kCompaction;
  e.id = StableEventId(session_id, "summary");
  e.ts_ms = DateMs(Field(summary, {"createdAt"}));
  e.compaction.from_seq = 1;
  e.compaction.to_seq = last_seq;
  e.compaction.summary = StringOf(Field(summary, {"content"}));
  e.compaction.strategy = "extremis-summary";
  e.compaction.model = StringOf(Field(summary, {"modelUsed"}));
  return e;
}

// Imports one session file; a file that cannot be used is skipped.
Status ImportSession(const fs::path& file, const IndexInfo& index, ImportSink& sink,
                     std::vector<std::pair<std::string, bool>>* archived) {
  const std::string where = file.filename().string();
  auto doc = ReadJson(file);
  if (!doc) {
    sink.Skip(where, doc.error().message() + "; the session is left out");
    return Status::Ok();
  }
  const json& s = *doc;
  const json* messages = Field(s, {"messages"});
  std::string source_id = StringOf(Field(s, {"id"}));
  if (!s.is_object() || source_id.empty() || (messages && !messages->is_array())) {
    sink.Skip(where, "is not an Extremis session (no id, or messages is not a list); left out");
    return Status::Ok();
  }
  const json* entry = nullptr;
  if (auto it = index.entries.find(source_id); it != index.entries.end()) entry = &it->second;

  Session session;
  session.id = StableSessionId(kFormat, source_id);
  session.title = StringOf(Field(s, {"title"}));
  if (session.title.empty() && entry) session.title = StringOf(Field(*entry, {"title"}));
  session.created_ms = DateMs(Field(s, {"createdAt"}));
  session.updated_ms = DateMs(Field(s, {"updatedAt", "lastModifiedAt"}));
  json meta = {{"source", std::string(kFormat)}, {"extremis_id", source_id}};
  if (const json* v = Field(s, {"initialRequest"}); v && v->is_string())
    meta["initial_request"] = *v;
  if (const json* v = Field(s, {"maxMessages"}); v && v->is_number_integer()) {
    meta["max_messages"] = *v;
  }
  if (const json* v = Field(s, {"version"}); v && v->is_number_integer()) {
    meta["extremis_version"] = *v;
  }
  session.metadata_json = meta.dump();
  bool is_archived = false;
  if (const json* v = Field(s, {"isArchived"}); v && v->is_boolean()) {
    is_archived = v->get<bool>();
  } else if (entry) {
    const json* e = Field(*entry, {"isArchived"});
    is_archived = e && e->is_boolean() && e->get<bool>();
  }

  const json* summary = Field(s, {"summary"});
  int64_t covers = 0;
  if (summary) {
    const json* n = Field(*summary, {"coversMessageCount"});
    covers = n && n->is_number_integer() ? n->get<int64_t>() : 0;
    if (covers <= 0 || StringOf(Field(*summary, {"content"})).empty()) {
      sink.Skip(where + ":summary", "the summary is empty or covers no messages; left out");
      summary = nullptr;
    }
  }

  RETURN_IF_ERROR(sink.BeginSession(session, Fingerprint));
  int64_t index_in_file = 0;
  int64_t added = 0;
  bool summary_added = false;
  for (const json& m : messages ? *messages : json::array()) {
    const std::string msg_where = where + ":messages[" + std::to_string(index_in_file++) + "]";
    const std::string role = StringOf(Field(m, {"role"}));
    auto parsed = ParseRole(role);
    const std::string content = StringOf(Field(m, {"content"}));
    if (!parsed || *parsed == Role::kTool) {
      sink.Skip(msg_where, "role '" + role + "' is not user, assistant or system; left out");
      continue;
    }
    if (content.empty()) {
      sink.Skip(msg_where, "the message has no content; left out");
      continue;
    }
    Event e;
    e.type = EventType::kMessage;
    // A message without an id is known by its Fingerprint (the sink names
    // it), never by its place: a message added before it would shift it.
    const std::string mid = StringOf(Field(m, {"id"}));
    if (!mid.empty()) e.id = StableEventId(session.id, mid);
    e.ts_ms = DateMs(Field(m, {"timestamp"}));
    e.message.role = *parsed;
    e.message.parts.push_back(Part::Text(content));
    json mmeta = json::object();
    if (!mid.empty()) mmeta["extremis_id"] = mid;
    if (const json* ctx = Field(m, {"contextData"}); ctx && ctx->is_string()) {
      // Swift encodes Data as base64; the context inside is JSON.
      auto raw = blob::Base64Decode(ctx->get<std::string>());
      json decoded = raw ? ParseJson(*raw, kMaxJsonValueDepth - 1).value_or(json()) : json();
      mmeta["context"] = raw && !decoded.is_null() ? decoded : *ctx;
    }
    e.message.metadata_json = mmeta.dump();
    RETURN_IF_ERROR(sink.Add(std::move(e), msg_where));
    ++added;
    if (summary && !summary_added && added == covers) {
      RETURN_IF_ERROR(sink.Add(SummaryEvent(*summary, session.id, added), where + ":summary"));
      summary_added = true;
    }
  }
  if (summary && !summary_added) {
    // Extremis itself ignores a summary covering more messages than the
    // session holds (PersistedSession.buildLLMContext); so does the import.
    sink.Skip(where + ":summary", "the summary covers " + std::to_string(covers) +
                                      " messages but the session holds " + std::to_string(added) +
                                      "; Extremis ignores it, and so does the import");
  }
  RETURN_IF_ERROR(sink.EndSession());
  archived->emplace_back(session.id, is_archived);
  return Status::Ok();
}

Status RunImport(const fs::path& path, ImportSink& sink) {
  const fs::path dir = SessionsDir(path);
  IndexInfo index = ReadIndex(dir, sink);
  // The index's order first, then session files it does not list.
  std::vector<fs::path> files;
  std::set<fs::path> seen;
  for (const std::string& id : index.order) {
    // An id is a name, never a path: "../x" or a NUL would lead the import
    // to files outside the sessions folder (and the skip would say which
    // exist there).
    if (!IsPlainFileName(id)) {
      sink.Skip("index.json",
                "lists a session whose id is not a plain file name (it holds '/', "
                "'\\', '..' or a control character); the session is left out");
      continue;
    }
    const fs::path file = dir / (id + ".json");
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      sink.Skip("index.json", "lists session " + id + " but " + file.filename().string() +
                                  " is missing; the session is left out");
      continue;
    }
    files.push_back(file);
    seen.insert(file);
  }
  std::vector<fs::path> unlisted;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (IsUuidName(entry.path()) && !seen.contains(entry.path())) unlisted.push_back(entry.path());
  }
  std::sort(unlisted.begin(), unlisted.end());
  files.insert(files.end(), unlisted.begin(), unlisted.end());

  std::vector<std::pair<std::string, bool>> archived;
  int64_t done = 0;
  for (const fs::path& file : files) {
    RETURN_IF_ERROR(ImportSession(file, index, sink, &archived));
    sink.Progress(++done, static_cast<int64_t>(files.size()));
  }
  for (const auto& [id, flag] : archived) {
    auto current = sink.store().GetSession(id);
    if (current && current->archived != flag) RETURN_IF_ERROR(sink.store().SetArchived(id, flag));
  }
  if (!index.active.empty()) {
    const std::string id = StableSessionId(kFormat, index.active);
    auto exists = sink.store().GetSession(id);
    if (exists) {
      RETURN_IF_ERROR(sink.store().SetActiveSession(id));
    } else {
      sink.Skip("index.json", "the active session " + index.active + " was not imported");
    }
  }
  return Status::Ok();
}

}  // namespace

ImportFormatSpec ExtremisImport() { return {ImportFormat::kExtremis, Detect, RunImport}; }

}  // namespace sessiondb::interop
