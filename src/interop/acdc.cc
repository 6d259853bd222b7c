// The ac-dc format (AI-Coder-DeCoder): a `.ac-dc/` folder holding
// `history.jsonl` (one record per message, every session in one file) and an
// `images/` folder of pasted images named by the first 12 hex digits of the
// SHA-256 of their data-URI string, optionally prefixed `{epoch_ms}-`.
// See docs/interop.md#ac-dc for the grammar and the mapping.
//
// Import reads history.jsonl twice: the first pass checks every line and
// notes where each session's records are (an offset and a length per record,
// so memory is bounded by the number of records, not their size), the second
// reads each session's records back in file order and feeds them to the sink.
// ac-dc interleaves sessions in one file (a reloaded session continues at the
// end), so this is how sessions arrive whole and in order. A long record is
// bounded as interop/long_record.h says (in both passes), and its content is
// moved into the message rather than copied.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "blob/base64.h"
#include "blob/media_type.h"
#include "blob/sha256.h"
#include "core/iso_time.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/text_rules.h"
#include "interop/formats.h"
#include "interop/jsonl_reader.h"
#include "interop/long_record.h"
#include "interop/output_file.h"
#include "interop/read_confinement.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormat = "ac-dc";
// How much of an image over the import's byte limit is read: enough for the
// headers that give its type and dimensions (a JPEG's may follow a large
// EXIF block).
constexpr size_t kImageHeadBytes = size_t{256} * 1024;

// Where one record of a session lies in history.jsonl.
struct RecordSpan {
  int64_t offset = 0;
  int64_t length = 0;
  int64_t line = 0;
};

struct SessionRecords {
  std::string source_id;
  std::vector<RecordSpan> records;
};

// The history.jsonl of `path` (the file itself, or a folder holding it).
fs::path HistoryFile(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path / "history.jsonl";
  return path;
}

// Whether `record` looks like an ac-dc message record.
bool IsAcdcRecord(const json& record) {
  return record.is_object() && record.contains("session_id") && record.contains("role") &&
         record.contains("content") && record.contains("timestamp");
}

// The first line of `file` (at most 1 MiB of it), or empty.
std::string FirstLine(const fs::path& file) {
  if (!MayRead(file)) return {};
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::string line;
  line.resize(size_t{1} << 20);
  in.read(line.data(), static_cast<std::streamsize>(line.size()));
  line.resize(static_cast<size_t>(in.gcount()));
  const size_t nl = line.find('\n');
  if (nl != std::string::npos) line.resize(nl);
  // Read as the import reads it (jsonl_reader.h): no byte-order mark, and
  // U+FFFD for bytes that are not UTF-8.
  if (line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
  return ToValidUtf8(line);
}

int Detect(const fs::path& path) {
  std::error_code ec;
  const fs::path history = HistoryFile(path);
  if (history.filename() != "history.jsonl" || !fs::is_regular_file(history, ec)) return 0;
  const std::string first = FirstLine(history);
  json record = ParseJson(first).value_or(json());
  const bool shaped = IsAcdcRecord(record);
  const fs::path folder = fs::is_directory(path, ec) ? path : path.parent_path();
  const std::string name = folder.filename().string();
  const bool named = name.starts_with(".ac-dc");
  if (shaped) return named ? 100 : 90;
  // An empty history in a folder named for ac-dc is still ac-dc's.
  return named && first.empty() ? 60 : 0;
}

std::string StringField(const json& record, const char* key) {
  auto it = record.find(key);
  if (it == record.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

std::vector<std::string> StringList(const json& record, const char* key) {
  std::vector<std::string> out;
  auto it = record.find(key);
  if (it == record.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// The MIME type ac-dc gives an image file by its extension.
std::string MimeForExtension(std::string ext) {
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".png") return "image/png";
  if (ext == ".jpg" || ext == ".jpeg") return "image/jpeg";
  if (ext == ".gif") return "image/gif";
  if (ext == ".webp") return "image/webp";
  if (ext == ".bmp") return "image/bmp";
  return "application/octet-stream";
}

// The 12-hex content hash an image file name carries ("a1b2c3d4e5f6.png" or
// "1736956800000-a1b2c3d4e5f6.png"), or empty when the name has none.
std::string NameHash(const std::string& filename) {
  std::string stem = fs::path(filename).stem().string();
  const size_t dash = stem.rfind('-');
  if (dash != std::string::npos) stem = stem.substr(dash + 1);
  if (stem.size() != 12) return {};
  for (char c : stem) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return {};
  }
  for (char& c : stem) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return stem;
}

// Whether `bytes` hash to `name_hash` as ac-dc names them: the SHA-256 of
// "data:<mime>;base64,<base64>" for the MIME the writer declared, which may
// be the extension's, its "image/jpg" spelling, or what the bytes are.
bool HashMatches(const std::string& bytes, const std::string& extension_mime,
                 const std::string& name_hash) {
  const std::string b64 = blob::Base64Encode(bytes);
  std::set<std::string> mimes = {extension_mime};
  if (extension_mime == "image/jpeg") mimes.insert("image/jpg");
  if (auto media = blob::SniffMedia(bytes)) mimes.insert(media->mime);
  for (const std::string& mime : mimes) {
    std::string uri = "data:";
    uri += mime;
    uri += ";base64,";
    uri += b64;
    if (blob::Sha256Hex(uri).substr(0, 12) == name_hash) return true;
  }
  return false;
}

// Reads the image `ref` of a record; nullopt (with a skip) if it is unusable.
std::optional<Part> ReadImage(const fs::path& images_dir, const std::string& ref,
                              const std::string& where, ImportSink& sink) {
  const std::string what = "image '" + ref + "'";
  if (!IsPlainFileName(ref)) {
    sink.Skip(where, "an image reference is not a file name inside images/; the image is left out");
    return std::nullopt;
  }
  const fs::path file = images_dir / ref;
  if (!MayRead(file)) {
    sink.Skip(where, OutsideReason(what) + "; the message is imported without it");
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    sink.Skip(where, what + " is missing from " + images_dir.string() +
                         "; the message is imported without it");
    return std::nullopt;
  }
  const std::string mime = MimeForExtension(file.extension().string());
  std::error_code ec;
  const auto size = static_cast<int64_t>(fs::file_size(file, ec));
  if (!ec && size > sink.max_attachment_bytes()) {
    // Kept as a descriptor: only its head is read, for its type and size.
    std::string head(kImageHeadBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    return sink.NotStoredPart(PartType::kImage, head, size, mime, ref, where);
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string hash = NameHash(ref);
  if (!hash.empty() && !HashMatches(bytes, mime, hash)) {
    sink.Skip(where, what + ": its bytes do not hash to the " + hash +
                         " its name carries (a damaged or replaced file); the image is left out");
    return std::nullopt;
  }
  return Part::ImageFromBytes(std::move(bytes), mime, ref);
}

// The message of one ac-dc record, or nullopt (with a skip) when it has none.
// `unnamed` counts the session's records without an id by the hash of their
// line, which then names them: the first as before, a repeat of the same
// line (the same second, the same words) with its count, never its place.
std::optional<Event> ToEvent(json& record, const std::string& session_id,
                             std::string_view line_text, const fs::path& images_dir,
                             const std::string& where, ImportSink& sink,
                             std::map<std::string, int64_t>* unnamed) {
  Event event;
  Message& m = event.message;
  const std::string role = StringField(record, "role");
  auto parsed = ParseRole(role);
  if (!parsed ||
      (*parsed != Role::kUser && *parsed != Role::kAssistant && *parsed != Role::kSystem)) {
    sink.Skip(where, "role '" + role + "' is not user or assistant; the record is left out");
    return std::nullopt;
  }
  m.role = *parsed;
  std::string source_id = StringField(record, "id");
  if (source_id.empty()) {
    source_id = "line-sha256-" + blob::Sha256Hex(line_text);
    if (const int64_t n = ++(*unnamed)[source_id]; n > 1) source_id += "#" + std::to_string(n);
  }
  event.id = StableEventId(session_id, source_id);
  event.type = EventType::kMessage;
  event.ts_ms = ParseIsoTime(StringField(record, "timestamp")).value_or(0);

  std::string content;
  if (auto it = record.find("content"); it != record.end() && it->is_string()) {
    content = std::move(it->get_ref<std::string&>());
  }
  if (!content.empty()) m.parts.push_back(Part::Text(std::move(content)));
  for (const std::string& ref : StringList(record, "image_refs")) {
    if (auto part = ReadImage(images_dir, ref, where, sink)) m.parts.push_back(std::move(*part));
  }
  m.files = StringList(record, "files");
  m.files_modified = StringList(record, "files_modified");
  if (auto it = record.find("edit_results"); it != record.end() && it->is_array()) {
    m.edit_results_json = it->dump();
  }

  json meta = json::object();
  meta["acdc_id"] = source_id;
  if (auto it = record.find("turn_id"); it != record.end() && it->is_string()) {
    meta["turn_id"] = *it;
  }
  if (auto it = record.find("system_event");
      it != record.end() && it->is_boolean() && it->get<bool>()) {
    meta["system_event"] = true;
  }
  if (auto it = record.find("images");
      it != record.end() && it->is_number_integer() && it->get<int64_t>() > 0) {
    // Legacy records counted the images sent but never saved them.
    meta["images_not_saved"] = it->get<int64_t>();
  }
  if (auto it = record.find("agent_blocks"); it != record.end() && it->is_array()) {
    meta["agent_blocks"] = *it;
  }
  m.metadata_json = meta.dump();
  if (m.parts.empty()) {
    sink.Skip(where, meta.contains("images_not_saved")
                         ? "the record has no text, and its images were never saved (a legacy "
                           "'images' count); nothing to import"
                         : "the record has no text and no readable image; nothing to import");
    return std::nullopt;
  }
  return event;
}

Status RunImport(const fs::path& path, ImportSink& sink) {
  const fs::path history = HistoryFile(path);
  const fs::path images_dir = history.parent_path() / "images";
  const std::string label = "history.jsonl:";
  ASSIGN_OR_RETURN(auto reader, JsonlReader::Open(history.string()));

  // Pass 1: check every line, note each session's records.
  std::vector<SessionRecords> sessions;
  std::map<std::string, size_t> index;
  JsonlReader::Line line;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&line));
    if (!more) break;
    sink.Progress(reader->bytes_read() / 2, reader->total_bytes());
    const std::string where = label + std::to_string(line.number);
    if (line.too_long) {
      sink.Skip(where, "the line is longer than the " + std::to_string(kMaxLineBytes) +
                           "-byte limit for one record; it is left out");
      continue;
    }
    if (line.text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Result<json> parsed = json();
    if (line.text.size() > kLeanParseBytes) {
      // Only its session is needed now: the long strings are checked, and
      // the tree is let go at once.
      Result<LongRecord> lean = ParseLongRecord(line.text);
      reader->ReleaseLine();
      if (!lean) {
        sink.Skip(where, "the record is left out: " + lean.error().message());
        continue;
      }
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
    json& record = *parsed;
    if (!record.is_object()) {
      sink.Skip(where, "the line is JSON but " + JsonKindPhrase(record.type_name()) +
                           ", not an object; it is left out");
      continue;
    }
    const std::string session = StringField(record, "session_id");
    if (session.empty()) {
      sink.Skip(where, "the record has no session_id; it is left out");
      continue;
    }
    auto [it, inserted] = index.emplace(session, sessions.size());
    if (inserted) sessions.push_back({session, {}});
    sessions[it->second].records.push_back({line.offset, line.raw_size, line.number});
  }

  // Pass 2: each session in turn, its records in file order, read back
  // through the reader so they are cleaned as pass 1 saw them.
  int64_t done = 0;
  const int64_t total = reader->total_bytes();
  for (const SessionRecords& s : sessions) {
    Session session;
    session.id = StableSessionId(kFormat, s.source_id);
    json meta = {{"source", std::string(kFormat)}, {"acdc_session_id", s.source_id}};
    session.metadata_json = meta.dump();
    RETURN_IF_ERROR(sink.BeginSession(session));
    std::map<std::string, int64_t> unnamed;
    for (const RecordSpan& span : s.records) {
      // The writer is done with what came before a long record is read.
      if (static_cast<size_t>(span.length) > kWaitForWriterBytes) WaitForWriter(sink);
      ASSIGN_OR_RETURN(std::string_view text, reader->ReadAt(span.offset, span.length));
      done += span.length;
      sink.Progress(total / 2 + done / 2, total);
      const std::string where = label + std::to_string(span.line);
      json record(json::value_t::discarded);
      std::vector<CutString> cut;
      if (text.size() > kLeanParseBytes) {
        if (Result<LongRecord> lean = ParseLongRecord(text)) {
          record = std::move(lean->tree);
          cut = std::move(lean->cut);
        }
      } else {
        record = ParseJson(text).value_or(json(json::value_t::discarded));
      }
      if (record.is_discarded()) {
        sink.Skip(where, "the line changed while it was being imported; it is left out");
        continue;
      }
      if (!cut.empty()) sink.Skip(where, CutReason(cut.size()));
      auto event = ToEvent(record, session.id, text, images_dir, where, sink, &unnamed);
      reader->ReleaseLine();
      record = json();
      if (event) RETURN_IF_ERROR(sink.Add(std::move(*event), where));
    }
    RETURN_IF_ERROR(sink.EndSession());
  }
  return Status::Ok();
}

// ---- Export -----------------------------------------------------------------

std::string ExtensionFor(const std::string& mime) {
  if (mime == "image/jpeg") return ".jpg";
  if (mime == "image/gif") return ".gif";
  if (mime == "image/webp") return ".webp";
  return ".png";
}

// The ac-dc record of `m` (its images written to `images_dir`), or nullopt
// for a message ac-dc cannot show (no text and no image).
Result<std::optional<json>> ToRecord(Store& store, const Session& session, const Message& m,
                                     const fs::path& images_dir, FileSystem& file_system,
                                     ExportReport* report) {
  json meta = ParseJson(m.metadata_json.empty() ? "{}" : m.metadata_json).value_or(json());
  if (!meta.is_object()) meta = json::object();
  json record = json::object();
  std::string id = m.id;
  if (auto it = meta.find("acdc_id"); it != meta.end() && it->is_string()) id = *it;
  record["id"] = id;
  record["session_id"] = session.id;
  record["timestamp"] = FormatUtcTime(m.ts_ms, UtcTimeForm::kIsoMillis);
  // ac-dc knows user and assistant; its system events are user records
  // flagged system_event, so system and tool messages go out that way.
  const bool system_event =
      m.role == Role::kSystem || m.role == Role::kTool || MemberOr(meta, "system_event", false);
  record["role"] = m.role == Role::kAssistant ? "assistant" : "user";
  record["content"] = m.Text();
  if (system_event) record["system_event"] = true;
  if (auto it = meta.find("turn_id"); it != meta.end() && it->is_string()) {
    record["turn_id"] = *it;
  }
  if (!m.files.empty()) record["files"] = m.files;
  json refs = json::array();
  for (const Part& p : m.parts) {
    if (p.type != PartType::kImage || !p.resource || p.resource->content_sha256.empty()) continue;
    auto bytes = store.ReadBlob(p.resource->content_sha256);
    // A lost blob: nothing to write, the text still goes. A damaged one
    // (kCorruption, naming it) ends the export: never written as sound.
    if (!bytes && bytes.error().code() == StatusCode::kNotFound) continue;
    if (!bytes) return Err(bytes.error());
    const std::string uri = "data:" + p.resource->mime + ";base64," + blob::Base64Encode(*bytes);
    const std::string name = blob::Sha256Hex(uri).substr(0, 12) + ExtensionFor(p.resource->mime);
    const fs::path file = images_dir / name;
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      // Through a temporary file and a rename: a failure never leaves a
      // half-written image under its name.
      OutputFile f(file_system);
      RETURN_IF_ERROR(f.Open(file));
      f.Write(*bytes);
      RETURN_IF_ERROR(f.Commit());
      report->files.push_back(file.string());
    }
    refs.push_back(name);
    ++report->images;
  }
  if (!refs.empty()) record["image_refs"] = refs;
  if (auto it = meta.find("images_not_saved"); it != meta.end() && it->is_number_integer()) {
    record["images"] = *it;
  }
  if (!m.files_modified.empty()) record["files_modified"] = m.files_modified;
  if (!m.edit_results_json.empty()) {
    json edits = ParseJson(m.edit_results_json).value_or(json());
    if (edits.is_array()) record["edit_results"] = edits;
  }
  if (auto it = meta.find("agent_blocks"); it != meta.end() && it->is_array()) {
    record["agent_blocks"] = *it;
  }
  if (record["content"].get<std::string>().empty() && refs.empty()) return std::nullopt;
  return record;
}

Status RunExport(Store& store, std::span<const Session> sessions, const fs::path& out,
                 FileSystem& file_system, ExportReport* report) {
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    return Status::AlreadyExists(out.string() + " is a file; ac-dc export writes a folder");
  }
  const fs::path history = out / "history.jsonl";
  // A history an earlier export wrote and ac-dc has not written to since
  // (its bytes still hash as written) may be replaced with --force.
  if (fs::exists(history, ec) && !CheckMayWrite(file_system, history).ok()) {
    return Status::AlreadyExists(history.string() +
                                 " exists; export to a new folder (sessiondb never appends to "
                                 "a history ac-dc may be writing, and replaces one only with "
                                 "--force when an earlier export wrote it and it is unchanged)");
  }
  // The history goes in last, by a rename, so a failed export never leaves a
  // half-written history ac-dc would read.
  OutputFile file(file_system);
  RETURN_IF_ERROR(file.Open(history));
  const fs::path images_dir = out / "images";
  for (const Session& session : sessions) {
    ASSIGN_OR_RETURN(std::vector<Message> messages, store.ReadMessages(session.id));
    for (const Message& m : messages) {
      ASSIGN_OR_RETURN(std::optional<json> record,
                       ToRecord(store, session, m, images_dir, file_system, report));
      if (!record) continue;
      file.Write(record->dump() + "\n");
      ++report->messages;
    }
    ++report->sessions;
  }
  RETURN_IF_ERROR(file.Commit());
  report->files.insert(report->files.begin(), history.string());
  return Status::Ok();
}

}  // namespace

ImportFormatSpec AcdcImport() { return {ImportFormat::kAcdc, Detect, RunImport}; }

ExportFormatSpec AcdcExport() { return {ExportFormat::kAcdc, RunExport}; }

}  // namespace sessiondb::interop
