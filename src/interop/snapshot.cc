// The native snapshot (docs/formats.md, "Snapshot, version 1"): one JSON
// document holding sessions whole, events with their ids, seqs and times,
// resource descriptors as the log holds them and the blobs' bytes inline.
// Export writes keys sorted and no wall-clock time, so the same sessions give
// the same bytes. Import restores through Store::RestoreSession/RestoreEvents
// (not the ImportSink's renumbering), so ids, descriptors and forks come back
// as they were, and re-importing adds nothing. Import reads the document in
// two passes (json_outline.h), so it holds one session's text at a time,
// never the whole file, and decodes and restores that session's events a run
// at a time (RunRestore), never the whole session.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "blob/base64.h"
#include "blob/media_type.h"
#include "blob/sha256.h"
#include "core/event_codec.h"
#include "core/json_access.h"
#include "core/json_parse.h"
#include "core/json_writer.h"
#include "core/message_codec.h"
#include "core/text_rules.h"
#include "interop/formats.h"
#include "interop/json_outline.h"
#include "interop/output_file.h"
#include "interop/source_scan.h"
#include "store/store_common.h"

namespace sessiondb::interop {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kFormatName = "sessiondb-snapshot";
constexpr int kSnapshotVersion = 1;

// ---- Export -----------------------------------------------------------------

// A stored JSON body without its "v" (the snapshot's own version covers it).
json BodyWithoutVersion(std::string_view text) {
  json j = ParseJson(text).value_or(json::object());
  j.erase("v");
  return j;
}

// The digests of the blobs `e` refers to, into *shas.
void CollectShas(const Event& e, std::set<std::string>* shas) {
  auto add = [shas](const Resource& r) {
    if (!r.content_sha256.empty()) shas->insert(r.content_sha256);
  };
  for (const Part& p : e.message.parts) {
    if (p.resource) add(*p.resource);
  }
  if (e.type == EventType::kResourceView) add(e.resource_view.resource);
  for (const Resource& r : e.compaction.images) add(r);
}

Result<json> EventToJson(const Event& e, std::string_view session_id) {
  json j = {{"id", e.id}, {"seq", e.seq}, {"ts_ms", e.ts_ms}, {"type", EventTypeName(e.type)}};
  if (!e.session_id.empty() && e.session_id != session_id) j["session_id"] = e.session_id;
  switch (e.type) {
    case EventType::kMessage: {
      ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(e.message));
      json m = body
                   ? BodyWithoutVersion(*body)
                   : json{{"parts", json::array({{{"type", "text"}, {"text", e.message.Text()}}})}};
      m["role"] = RoleName(e.message.role);
      j["message"] = std::move(m);
      break;
    }
    case EventType::kResourceView:
      j["resource_view"] = BodyWithoutVersion(EncodeResourceViewBody(e.resource_view));
      break;
    case EventType::kCompaction:
      j["compaction"] = BodyWithoutVersion(EncodeCompactionBody(e.compaction));
      break;
    case EventType::kRewind:
      j["rewind"] = BodyWithoutVersion(EncodeRewindBody(e.rewind));
      break;
  }
  return j;
}

// Sessions in id order, each fork after its parent when both are exported.
std::vector<const Session*> ExportOrder(std::span<const Session> sessions) {
  std::map<std::string_view, const Session*> by_id;
  for (const Session& s : sessions) by_id.emplace(s.id, &s);
  std::vector<const Session*> order;
  std::set<std::string_view> placed;
  std::function<void(const Session*)> place = [&](const Session* s) {
    if (placed.contains(s->id)) return;
    placed.insert(s->id);
    if (auto it = by_id.find(s->parent_id); !s->parent_id.empty() && it != by_id.end()) {
      place(it->second);
    }
    order.push_back(s);
  };
  for (const auto& [id, s] : by_id) place(s);
  return order;
}

constexpr int64_t kExportPage = 1000;  // events read at a time

// Calls `fn` for each event of `session_id` from `from_seq` on, a page at a
// time, so a session of any length is never held whole.
Status ForEachEvent(Store& store, std::string_view session_id, int64_t from_seq,
                    const std::function<Status(const Event&)>& fn) {
  while (true) {
    ASSIGN_OR_RETURN(std::vector<Event> page, store.ReadEvents(session_id, from_seq, kExportPage));
    for (const Event& e : page) RETURN_IF_ERROR(fn(e));
    if (static_cast<int64_t>(page.size()) < kExportPage) return Status::Ok();
    from_seq = page.back().seq + 1;
  }
}

// One session as the canonical JSON nlohmann would dump of the whole object
// (members sorted, compact), written as it is read: its blobs one at a time,
// then its events a page at a time. Two passes over the events: the blobs
// member comes first, and it needs every digest the events refer to.
Status WriteSession(Store& store, const Session& s, int64_t from_seq, OutputFile& file,
                    ExportReport* report) {
  std::set<std::string> shas;
  RETURN_IF_ERROR(ForEachEvent(store, s.id, from_seq, [&](const Event& e) {
    CollectShas(e, &shas);
    return Status::Ok();
  }));
  ASSIGN_OR_RETURN(std::string metadata, CanonicalJsonObject(s.metadata_json, "metadata"));
  const bool fork = !s.parent_id.empty();
  std::string out;
  JsonWriter w(&out);
  auto flush = [&] {
    file.Write(out);
    out.clear();
  };
  w.BeginObject().Key("archived").Bool(s.archived).Key("blobs").BeginObject();
  for (const std::string& sha : shas) {
    Result<std::string> bytes = store.ReadBlob(sha);
    // A blob the store has lost stays a descriptor, as it is in the store.
    if (!bytes && bytes.error().code() == StatusCode::kNotFound) continue;
    if (!bytes) return bytes.error();
    w.Key(sha).String(blob::Base64Encode(*bytes));
    flush();
  }
  w.EndObject().Key("created_ms").Int(s.created_ms).Key("events").BeginArray();
  RETURN_IF_ERROR(ForEachEvent(store, s.id, from_seq, [&](const Event& e) -> Status {
    ASSIGN_OR_RETURN(json je, EventToJson(e, s.id));
    try {
      w.Raw(je.dump());
    } catch (const json::exception& ex) {
      return Status::InvalidArgument("session " + s.id + " cannot be written: " + ex.what());
    }
    flush();
    if (e.type == EventType::kMessage) {
      ++report->messages;
      for (const Part& p : e.message.parts) report->images += p.type == PartType::kImage;
    }
    return Status::Ok();
  }));
  w.EndArray();
  if (fork) w.Key("fork_seq").Int(s.fork_seq);
  w.Key("id").String(s.id).Key("last_seq").Int(s.last_seq);
  w.Key("message_count").Int(s.message_count).Key("metadata").Raw(metadata);
  if (fork) w.Key("parent_id").String(s.parent_id);
  w.Key("preview").String(s.preview).Key("title").String(s.title);
  w.Key("updated_ms").Int(s.updated_ms).EndObject();
  if (!w.ok()) return Status::InvalidArgument("session " + s.id + " cannot be written: not UTF-8");
  flush();
  return Status::Ok();
}

Status ExportSnapshot(Store& store, std::span<const Session> sessions, const fs::path& out,
                      FileSystem& file_system, ExportReport* report) {
  OutputFile file(file_system);
  RETURN_IF_ERROR(file.Open(out));
  std::set<std::string_view> exported;
  for (const Session& s : sessions) exported.insert(s.id);
  file.Write("{\"format\":\"sessiondb-snapshot\",\"sessions\":[");
  bool first = true;
  for (const Session* s : ExportOrder(sessions)) {
    const bool fork = !s->parent_id.empty();
    // A fork whose parent travels with it holds only its own events; one
    // whose parent does not holds its whole history (inherited events say
    // which session holds them).
    const int64_t from_seq = fork && exported.contains(s->parent_id) ? s->fork_seq + 1 : 1;
    file.Write(first ? "\n" : ",\n");
    RETURN_IF_ERROR(WriteSession(store, *s, from_seq, file, report));
    first = false;
    ++report->sessions;
  }
  file.Write("\n],\"version\":1}\n");
  RETURN_IF_ERROR(file.Commit());
  report->files.push_back(out.string());
  return Status::Ok();
}

// ---- Import -----------------------------------------------------------------

// A member name as its text writes it, unescaped.
std::string MemberName(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw);
  json name = ParseJson("\"" + std::string(raw) + "\"").value_or(json());
  return name.is_string() ? name.get<std::string>() : std::string(raw);
}

// The blobs of one session: each one's text (a base64 string) within the
// session's text, decoded and checked when first asked for.
class SessionBlobs {
 public:
  // Takes the session's "blobs" member; false if it is not an object.
  bool Read(std::string_view text) {
    raw_.clear();
    const bool object = ForEachMember(text, [this](std::string_view key, std::string_view value) {
      raw_.insert_or_assign(MemberName(key), value);  // the last one wins, as when parsed
    });
    if (!object) raw_.clear();
    return object;
  }

  // Why the part holding `r` cannot come in, or nullopt if it can. A blob the
  // snapshot does not hold is fine: the descriptor is kept and reads missing.
  std::optional<std::string> Check(const Resource& r, bool image_part) {
    if (image_part && !blob::IsSupportedImageMime(r.mime)) {
      return "an image part has the unknown MIME type '" + r.mime +
             "' (PNG, JPEG, GIF and WebP are read); the part is left out";
    }
    if (r.content_sha256.empty() || !raw_.contains(r.content_sha256)) return std::nullopt;
    Result<const std::string*> bytes = Bytes(r.content_sha256);
    if (!bytes) return bytes.error().message() + "; the part is left out";
    if (!image_part) return std::nullopt;
    auto media = blob::SniffMedia(**bytes);
    if (!media || !media->is_image || media->mime != blob::NormalizeMime(r.mime)) {
      bad_.insert(r.content_sha256);
      return "blob " + r.content_sha256.substr(0, 12) + " is said to be " + r.mime +
             " but its bytes are " +
             (media ? media->mime : "not an image (" + media.error().message() + ")") +
             "; the part is left out";
    }
    return std::nullopt;
  }

  // For RestoreSession and RestoreEvents: only bytes that passed the checks.
  BlobSourceFn Source() {
    return [this](std::string_view sha) -> Result<std::string> {
      if (bad_.contains(std::string(sha))) return Err(Status::NotFound(std::string(sha)));
      ASSIGN_OR_RETURN(const std::string* bytes, Bytes(std::string(sha)));
      return *bytes;
    };
  }

  // True when the snapshot carries bytes under `sha` that passed the checks
  // (or have not been found bad yet).
  bool Carries(const std::string& sha) const { return raw_.contains(sha) && !bad_.contains(sha); }

  // Drops the bytes decoded so far, once the run that needed them is in the
  // store; a blob found bad stays bad.
  void Forget() {
    decoded_.clear();
    decoded_bytes_ = 0;
  }
  int64_t decoded_bytes() const { return decoded_bytes_; }

 private:
  Result<const std::string*> Bytes(const std::string& sha) {
    if (auto it = decoded_.find(sha); it != decoded_.end()) return &it->second;
    if (bad_.contains(sha)) return Err(Status::NotFound("blob " + sha));
    auto it = raw_.find(sha);
    if (it == raw_.end()) return Err(Status::NotFound("blob " + sha));
    json literal = ParseJson(it->second).value_or(json());
    if (!literal.is_string()) {
      bad_.insert(sha);
      return Err(Status::InvalidArgument("blob " + sha.substr(0, 12) + " is not a base64 string"));
    }
    Result<std::string> bytes = blob::Base64Decode(literal.get_ref<const std::string&>());
    if (!bytes) {
      bad_.insert(sha);
      return Err(Status::InvalidArgument("blob " + sha.substr(0, 12) +
                                         " is not valid base64: " + bytes.error().message()));
    }
    if (blob::Sha256Hex(*bytes) != sha) {
      bad_.insert(sha);
      return Err(Status::InvalidArgument("blob " + sha.substr(0, 12) +
                                         "'s bytes do not hash to its name"));
    }
    decoded_bytes_ += static_cast<int64_t>(bytes->size());
    return &decoded_.emplace(sha, std::move(*bytes)).first->second;
  }

  std::map<std::string, std::string_view> raw_;  // into the session's text
  std::map<std::string, std::string> decoded_;
  int64_t decoded_bytes_ = 0;
  std::set<std::string> bad_;
};

// A session's own members, parsed, and the text of each of its events, to be
// decoded a run at a time. Views into the session's text.
struct SessionHead {
  Session session;
  std::string list_key;  // "events" ("messages" in version 0)
  std::vector<std::string_view> events;
  int64_t first_seq = 1;
};

// The first of a session's scalar members that is present with the wrong
// type, or "". A snapshot is our own format, so a wrong type is damage: the
// session is skipped with this name rather than read with a default.
std::string WrongTypedMember(const json& js) {
  for (const char* key : {"title", "preview", "parent_id"}) {
    const json& m = MemberOf(js, key);
    if (!m.is_null() && !m.is_string()) return key;
  }
  for (const char* key : {"created_ms", "updated_ms", "message_count", "fork_seq"}) {
    const json& m = MemberOf(js, key);
    if (!m.is_null() && !m.is_number_integer()) return key;
  }
  const json& archived = MemberOf(js, "archived");
  if (!archived.is_null() && !archived.is_boolean()) return "archived";
  return "";
}

class SnapshotReader {
 public:
  SnapshotReader(ImportSink& sink, std::string file, int version)
      : sink_(sink), file_(std::move(file)), version_(version) {}

  int version() const { return version_; }

  // The session at sessions[index], from its text: its members but the events
  // parsed, its blobs handed to `blobs`. nullopt (with a skip) if it cannot
  // come in.
  std::optional<SessionHead> ReadHead(std::string_view text, size_t index, SessionBlobs* blobs) {
    const std::string where = file_ + ":sessions[" + std::to_string(index) + "]";
    SessionHead h;
    h.list_key = version_ == 0 ? "messages" : "events";
    json js = json::object();
    std::optional<std::string_view> list, blobs_text;
    const bool object = ForEachMember(text, [&](std::string_view raw_key, std::string_view value) {
      std::string key = MemberName(raw_key);
      if (key == h.list_key) {
        list = value;
      } else if (key == "blobs") {
        blobs_text = value;
      } else {
        js[key] = ParseJson(value).value_or(json(json::value_t::discarded));
      }
    });
    if (!object) {
      sink_.Skip(where, "a session must be a JSON object");
      return std::nullopt;
    }
    if (blobs_text && !blobs->Read(*blobs_text)) {
      sink_.Skip(where + ".blobs",
                 "'blobs' must be an object of base64 strings; the images read as missing");
    }
    try {
      Session& s = h.session;
      s.id = js.at("id").get<std::string>();
      if (Status st = ValidateSessionId(s.id); !st.ok()) {
        sink_.Skip(where, st.message());
        return std::nullopt;
      }
      if (const std::string bad = WrongTypedMember(js); !bad.empty()) {
        sink_.Skip(where, "the session is malformed: '" + bad + "' has the wrong type");
        return std::nullopt;
      }
      s.title = MemberOr(js, "title", "");
      s.preview = MemberOr(js, "preview", "");
      s.created_ms = MemberOr(js, "created_ms", int64_t{0});
      s.updated_ms = MemberOr(js, "updated_ms", int64_t{0});
      s.archived = MemberOr(js, "archived", false);
      s.message_count = MemberOr(js, "message_count", int64_t{0});
      s.metadata_json = js.contains("metadata") ? js.at("metadata").dump() : "{}";
      if (version_ >= 1) {
        s.parent_id = MemberOr(js, "parent_id", "");
        s.fork_seq = MemberOr(js, "fork_seq", int64_t{0});
      }
      // Fails as a parsed session without its list would.
      if (!list) (void)js.at(h.list_key);
      if (!ForEachElement(*list, [&h](std::string_view e) { h.events.push_back(e); })) {
        sink_.Skip(where, "'" + h.list_key + "' must be an array");
        return std::nullopt;
      }
      if (!s.parent_id.empty() && !h.events.empty()) {
        json first = ParseJson(h.events.front()).value_or(json());
        if (first.is_object() && MemberOr(first, "seq", int64_t{1}) != 1)
          h.first_seq = s.fork_seq + 1;
      }
      return h;
    } catch (const json::exception& ex) {
      sink_.Skip(where, std::string("the session is malformed: ") + ex.what());
      return std::nullopt;
    }
  }

  // The event of text `text`, which must have seq `want_seq`; nullopt (with
  // a skip) if it cannot come in.
  std::optional<Event> DecodeEvent(std::string_view text, const std::string& session_id,
                                   int64_t want_seq, const std::string& where,
                                   SessionBlobs* blobs) {
    try {
      Result<json> parsed = ParseJson(text);
      json je = parsed.value_or(json());
      if (!je.is_object()) {
        sink_.Skip(where, parsed ? "an event must be a JSON object" : parsed.error().message());
        return std::nullopt;
      }
      Event e;
      e.id = je.at("id").get<std::string>();
      e.seq = je.at("seq").get<int64_t>();
      e.ts_ms = je.at("ts_ms").get<int64_t>();
      e.session_id = MemberOr(je, "session_id", session_id);
      if (e.seq != want_seq) {
        sink_.Skip(where, "seq " + std::to_string(e.seq) + " where " + std::to_string(want_seq) +
                              " was expected");
        return std::nullopt;
      }
      const std::string type = version_ == 0 ? "message" : je.at("type").get<std::string>();
      json body;
      if (type == "message") {
        body = version_ == 0 ? std::move(je) : std::move(je.at("message"));
        if (!body.is_object()) {
          sink_.Skip(where, "'message' must be a JSON object");
          return std::nullopt;
        }
        body.erase("id");
        body.erase("seq");
        body.erase("ts_ms");
        if (!FilterParts(&body, where, blobs)) return std::nullopt;
      } else if (type == "resource_view" || type == "compaction" || type == "rewind") {
        body = std::move(je.at(type));
      } else {
        sink_.Skip(where, "unknown event type '" + type + "'");
        return std::nullopt;
      }
      body["v"] = 1;
      const std::string role = type == "message" ? MemberOr(body, "role", "") : "";
      const std::string body_text = body.dump();
      EventRow row{.id = e.id,
                   .session_id = e.session_id,
                   .seq = e.seq,
                   .ts_ms = e.ts_ms,
                   .type = type,
                   .role = role,
                   .text = "",
                   .body = std::string_view(body_text)};
      Result<Event> decoded = DecodeEventRow(row);
      if (!decoded) {
        sink_.Skip(where, decoded.error().message());
        return std::nullopt;
      }
      return std::move(*decoded);
    } catch (const json::exception& ex) {
      sink_.Skip(where, std::string("the event is malformed: ") + ex.what());
      return std::nullopt;
    }
  }

 private:
  // Drops the parts that cannot come in (unknown type or MIME, bytes that
  // are not what they claim), each with a reason. A message left with no
  // parts keeps its place in the log as a note saying what was left out.
  bool FilterParts(json* body, const std::string& where, SessionBlobs* blobs) {
    auto it = body->find("parts");
    if (it == body->end()) return true;
    if (!it->is_array()) {
      sink_.Skip(where, "'parts' must be an array");
      return false;
    }
    json kept = json::array();
    std::string last_reason;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& pj = (*it)[i];
      const std::string pwhere = where + ".parts[" + std::to_string(i) + "]";
      std::optional<std::string> reason;
      try {
        if (!pj.is_object()) {
          reason = "a part must be a JSON object";
        } else if (auto type = ParsePartType(MemberOr(pj, "type", "")); !type) {
          reason = "unknown part type '" + MemberOr(pj, "type", "") + "'";
        } else if (*type == PartType::kImage || *type == PartType::kFile) {
          if (!pj.contains("resource")) {
            reason = "an attachment part without a resource descriptor";
          } else if (Result<Resource> r = ResourceFromJson(pj.at("resource").dump()); !r) {
            reason = r.error().message();
          } else {
            reason = blobs->Check(*r, *type == PartType::kImage);
          }
        }
      } catch (const json::exception& ex) {
        reason = std::string("the part is malformed: ") + ex.what();
      }
      if (reason) {
        sink_.Skip(pwhere, *reason);
        last_reason = *reason;
        continue;
      }
      kept.push_back(pj);
    }
    if (kept.empty() && !it->empty() && !MemberOr(*body, "pruned", false)) {
      kept.push_back({{"type", "text"}, {"text", "[left out on import: " + last_reason + "]"}});
    }
    *it = std::move(kept);
    return true;
  }

  ImportSink& sink_;
  std::string file_;
  int version_;
};

// The image parts of `events` whose bytes `blobs` carried: a part that only
// names a digest brought no image into the store, whatever its reference.
int64_t CountImages(std::span<const Event> events, const SessionBlobs& blobs) {
  int64_t n = 0;
  for (const Event& e : events) {
    if (e.type != EventType::kMessage) continue;
    for (const Part& p : e.message.parts) {
      n += p.type == PartType::kImage && p.resource && blobs.Carries(p.resource->content_sha256);
    }
  }
  return n;
}

int64_t CountMessages(std::span<const Event> events) {
  return std::count_if(events.begin(), events.end(),
                       [](const Event& e) { return e.type == EventType::kMessage; });
}

// Errors that belong to one session (skip it) rather than to the store.
bool SessionError(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kCorruption ||
         s.code() == StatusCode::kFailedPrecondition || s.code() == StatusCode::kAlreadyExists;
}

// Restores one session of the snapshot a run at a time (the sink's
// RunLimits), so that memory holds a run of decoded events and their blobs,
// not the whole session decoded. A session new to the store comes in by
// RestoreSession and then RestoreEvents; one the store holds already gains
// the events whose ids it does not hold, after its last event in the
// snapshot's order (never judged by their seqs: the store may have gone on
// on its own since the snapshot it came from). A fork whose parent is in
// the store comes in as one run: its message count, inherited messages
// included, is the snapshot's, and RestoreSession takes it whole.
class RunRestore {
 public:
  RunRestore(Session session, SessionBlobs& blobs, ImportSink& sink, std::string where,
             bool rebuild_index)
      : session_(std::move(session)),
        blobs_(blobs),
        sink_(sink),
        where_(std::move(where)),
        rebuild_index_(rebuild_index) {}

  // False once the session is given up (skipped with its reason).
  bool going() const { return mode_ != Mode::kGivenUp; }

  // Takes the next event (`text_bytes`: the size of its text in the file).
  Status Add(Event e, size_t text_bytes) {
    run_.push_back(std::move(e));
    run_text_bytes_ += static_cast<int64_t>(text_bytes);
    const RunLimits& limits = sink_.limits();
    if (run_.size() >= limits.events || run_text_bytes_ >= limits.text_bytes ||
        blobs_.decoded_bytes() >= limits.blob_bytes) {
      return Flush(/*last=*/false);
    }
    return Status::Ok();
  }

  // Restores what is left and counts the session in the report.
  Status Finish() {
    RETURN_IF_ERROR(Flush(/*last=*/true));
    ImportReport& report = sink_.report();
    if (mode_ == Mode::kExtend) {
      ++(restored_ ? report.sessions_extended : report.sessions_unchanged);
    } else if (created_) {
      ++report.sessions_added;
    }
    return Status::Ok();
  }

 private:
  enum class Mode { kUndecided, kNew, kExtend, kForkWhole, kGivenUp };

  // With the first run in hand: how the session comes in.
  Status Decide() {
    Store& store = sink_.store();
    auto existing = store.GetSession(session_.id);
    if (!existing && existing.error().code() != StatusCode::kNotFound) return existing.error();
    if (existing) {
      mode_ = Mode::kExtend;
      next_seq_ = existing->last_seq + 1;
      return LoadStoredIds(store);
    }
    if (session_.parent_id.empty()) {
      mode_ = Mode::kNew;
      return Status::Ok();
    }
    const bool whole = run_.empty() ? session_.fork_seq == 0 : run_.front().seq == 1;
    auto parent = store.GetSession(session_.parent_id);
    if (!parent && parent.error().code() != StatusCode::kNotFound) return parent.error();
    if (parent) {
      mode_ = Mode::kForkWhole;
      in_store_through_ = session_.fork_seq;  // the parent holds those
    } else if (whole) {
      // The parent is neither here nor in the store: the fork comes in whole.
      session_.parent_id.clear();
      session_.fork_seq = 0;
      mode_ = Mode::kNew;
    } else {
      sink_.Skip(where_, "fork of '" + session_.parent_id +
                             "', which is neither in the snapshot nor in the store");
      mode_ = Mode::kGivenUp;
    }
    return Status::Ok();
  }

  Status Flush(bool last) {
    if (mode_ == Mode::kUndecided) RETURN_IF_ERROR(Decide());
    if (mode_ == Mode::kForkWhole && !last) return Status::Ok();  // one run
    if (mode_ == Mode::kGivenUp) {
      run_.clear();
      return Status::Ok();
    }
    if (mode_ == Mode::kExtend) {
      KeepWhatTheStoreLacks();
    } else {
      const int64_t through = in_store_through_;
      std::erase_if(run_, [through](const Event& e) { return e.seq <= through; });
    }
    Store& store = sink_.store();
    Status st = Status::Ok();
    if (mode_ != Mode::kExtend && !created_) {
      if (rebuild_index_) {
        // Version 0 kept no preview; the index entry comes from the
        // messages, as the store's own appends would make it (RestoreEvents
        // goes on from there).
        IndexEntry entry;
        for (const Event& e : run_) {
          if (e.type == EventType::kMessage) {
            ApplyMessageToIndex(e.message.role, e.message.Text(), &entry);
          }
        }
        if (session_.title.empty() && entry.title_fixed) session_.title = entry.title;
        session_.preview = entry.preview;
      }
      st = store.RestoreSession(session_, run_, blobs_.Source());
      created_ = st.ok();
    } else if (!run_.empty()) {
      st = store.RestoreEvents(session_.id, run_, blobs_.Source());
    }
    if (!st.ok()) {
      if (!SessionError(st)) return st;
      sink_.Skip(where_, st.message());
      mode_ = Mode::kGivenUp;
      run_.clear();
      return Status::Ok();
    }
    ImportReport& report = sink_.report();
    report.messages_added += CountMessages(run_);
    report.images_added += CountImages(run_, blobs_);
    restored_ = restored_ || !run_.empty();
    run_.clear();
    run_text_bytes_ = 0;
    blobs_.Forget();
    return Status::Ok();
  }

  // The identities of the ids of the events the store holds of the session
  // (16 bytes each, read a page at a time), with their seqs, sorted.
  Status LoadStoredIds(Store& store) {
    constexpr int64_t kPage = 128;  // few: an event's text may be large
    for (int64_t from = 1;;) {
      ASSIGN_OR_RETURN(std::vector<Event> page, store.ReadEvents(session_.id, from, kPage));
      for (const Event& e : page) stored_.emplace_back(IdentityOf(e.id), e.seq);
      if (std::ssize(page) < kPage) break;
      from = page.back().seq + 1;
    }
    std::sort(stored_.begin(), stored_.end());
    return Status::Ok();
  }

  // Drops from the run the events the store holds, and numbers the others
  // on from the store's last event; the seqs the new ones name (a
  // compaction's range, a viewed message) move onto the store's.
  void KeepWhatTheStoreLacks() {
    std::vector<Event> kept;
    for (Event& e : run_) {
      auto it = std::lower_bound(stored_.begin(), stored_.end(),
                                 std::pair<uint64_t, int64_t>(IdentityOf(e.id), INT64_MIN));
      if (it != stored_.end() && it->first == IdentityOf(e.id)) {
        store_seq_of_[e.seq] = it->second;
        continue;
      }
      const int64_t seq = next_seq_++;
      store_seq_of_[e.seq] = seq;
      if (e.type == EventType::kCompaction) {
        MapRange(&e.compaction.from_seq, &e.compaction.to_seq);
      } else if (e.type == EventType::kResourceView) {
        auto at = store_seq_of_.find(e.resource_view.message_seq);
        if (at != store_seq_of_.end()) e.resource_view.message_seq = at->second;
      } else if (e.type == EventType::kRewind) {
        // Where the snapshot's last event at or before to_seq stands in the store.
        auto after = store_seq_of_.upper_bound(e.rewind.to_seq);
        if (after != store_seq_of_.begin()) e.rewind.to_seq = std::prev(after)->second;
      }
      e.seq = seq;
      e.message.seq = seq;
      kept.push_back(std::move(e));
    }
    run_ = std::move(kept);
  }

  // The store's range for the snapshot's from..to: from the lowest to the
  // highest seq its events hold there (seqs this session never had, such as
  // a fork's inherited ones, stay as they are).
  void MapRange(int64_t* from, int64_t* to) const {
    auto first = store_seq_of_.lower_bound(*from);
    auto last = store_seq_of_.upper_bound(*to);
    if (first == last) return;
    int64_t lo = *from < first->first ? *from : first->second;
    int64_t hi = lo;
    for (auto it = first; it != last; ++it) {
      lo = std::min(lo, it->second);
      hi = std::max(hi, it->second);
    }
    *from = lo;
    *to = hi;
  }

  Session session_;
  SessionBlobs& blobs_;
  ImportSink& sink_;
  std::string where_;
  bool rebuild_index_;
  Mode mode_ = Mode::kUndecided;
  int64_t in_store_through_ = 0;  // a fork's: events at or below this seq are its parent's
  // kExtend: what the store holds, and where the snapshot's events stand in it.
  std::vector<std::pair<uint64_t, int64_t>> stored_;
  std::map<int64_t, int64_t> store_seq_of_;  // the snapshot's seq -> the store's
  int64_t next_seq_ = 1;
  bool created_ = false;   // the session's row is in the store now
  bool restored_ = false;  // some event came in
  std::vector<Event> run_;
  int64_t run_text_bytes_ = 0;
};

// Decodes the session's events in order and hands them to a RunRestore;
// `on_bytes` learns how much of the session's text is done.
Status RestoreSessionText(const SessionHead& head, SnapshotReader& reader, SessionBlobs& blobs,
                          ImportSink& sink, const std::string& where,
                          const std::function<void(int64_t)>& on_bytes) {
  const Session& s = head.session;
  RunRestore restore(s, blobs, sink, where, /*rebuild_index=*/reader.version() == 0);
  const size_t n = head.events.size();
  for (size_t k = 0; k < n && restore.going(); ++k) {
    const std::string ewhere = where + "." + head.list_key + "[" + std::to_string(k) + "]";
    std::optional<Event> e = reader.DecodeEvent(
        head.events[k], s.id, head.first_seq + static_cast<int64_t>(k), ewhere, &blobs);
    if (!e) {
      // The log must stay dense: what follows a bad event cannot come in.
      if (k + 1 < n) {
        sink.Skip(ewhere,
                  "the " + std::to_string(n - k - 1) + " events after it are left out with it");
      }
      break;
    }
    RETURN_IF_ERROR(restore.Add(std::move(*e), head.events[k].size()));
    on_bytes(static_cast<int64_t>(head.events[k].size()));
  }
  return restore.Finish();
}

// Where a session is in the snapshot file, and what orders it.
struct SessionPlace {
  int64_t offset = 0;
  size_t length = 0;
  std::string id;  // "" when it has none (reported when it is read)
  std::string parent_id;
};

// Session indexes in the order to restore them: parents before their forks.
std::vector<size_t> ImportOrder(const std::vector<SessionPlace>& places) {
  std::map<std::string_view, size_t> by_id;
  for (size_t i = 0; i < places.size(); ++i) {
    if (!places[i].id.empty()) by_id.emplace(places[i].id, i);
  }
  std::vector<size_t> order;
  std::vector<bool> placed(places.size(), false);
  std::function<void(size_t, int)> place = [&](size_t i, int depth) {
    if (placed[i]) return;
    placed[i] = true;
    if (depth < 64 && !places[i].parent_id.empty()) {
      if (auto it = by_id.find(places[i].parent_id); it != by_id.end())
        place(it->second, depth + 1);
    }
    order.push_back(i);
  };
  for (size_t i = 0; i < places.size(); ++i) place(i, 0);
  return order;
}

// Pass 1: where each session is, read in blocks. Every session must be
// JSON, so a broken document imports nothing; memory is the largest session.
Result<std::vector<SessionPlace>> PlaceSessions(const fs::path& path, int* version) {
  std::vector<SessionPlace> places;
  auto outline =
      OutlineJsonFile(path, "sessions", [&](int64_t offset, std::string_view text) -> Status {
        if (Status valid = CheckJson(text); !valid.ok()) {
          return Status::InvalidArgument("sessions[" + std::to_string(places.size()) +
                                         "] is not valid JSON: " + valid.message());
        }
        SessionPlace p{offset, text.size(), "", ""};
        ScannedValue v[2];
        if (ScanTopLevel(text, {"id", "parent_id"}, v)) {
          p.id = ScannedString(v[0]).value_or("");
          p.parent_id = ScannedString(v[1]).value_or("");
        }
        places.push_back(std::move(p));
        return Status::Ok();
      });
  if (!outline) {
    if (outline.error().code() != StatusCode::kInvalidArgument) return Err(outline.error());
    return Err(Status::InvalidArgument(path.string() +
                                       " is not a complete JSON document (truncated?), nothing "
                                       "was imported: " +
                                       outline.error().message()));
  }
  auto scalar = [&](const char* name) {
    auto it = outline->scalars.find(name);
    return it == outline->scalars.end() ? json() : ParseJson(it->second).value_or(json());
  };
  const json format = scalar("format");
  if (!format.is_string() || format.get<std::string>() != kFormatName) {
    return Err(Status::InvalidArgument(path.string() +
                                       " is not a sessiondb snapshot (no \"format\": \"" +
                                       std::string(kFormatName) + "\")"));
  }
  const json v = scalar("version");
  if (!v.is_number_integer() || v.get<int64_t>() < 0) {
    return Err(Status::InvalidArgument(path.string() + ": \"version\" must be a whole number"));
  }
  if (v.get<int64_t>() > kSnapshotVersion) {
    return Err(Status::FailedPrecondition(
        path.string() + " is a snapshot of version " + std::to_string(v.get<int64_t>()) +
        "; this build reads versions 0 to " + std::to_string(kSnapshotVersion) +
        ". Upgrade sessiondb; nothing was imported"));
  }
  if (!outline->array_found) {
    return Err(Status::InvalidArgument(path.string() + ": \"sessions\" must be an array"));
  }
  *version = static_cast<int>(v.get<int64_t>());
  return places;
}

// Pass 2: each session read back from its place and restored a run at a
// time, parents before their forks. Progress counts the bytes of sessions
// done, so a single large session shows it too.
Status ImportSnapshot(const fs::path& path, ImportSink& sink) {
  int version = 0;
  ASSIGN_OR_RETURN(std::vector<SessionPlace> places, PlaceSessions(path, &version));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!in) return Status::Io("cannot read " + path.string());
  const std::string file = path.filename().string();
  SnapshotReader reader(sink, file, version);
  const std::vector<size_t> order = ImportOrder(places);
  int64_t total = 0;
  for (const SessionPlace& p : places) total += static_cast<int64_t>(p.length);
  int64_t done = 0;
  std::string text;
  for (size_t i : order) {
    text.resize(places[i].length);
    if (fseeko(in.get(), places[i].offset, SEEK_SET) != 0 ||
        std::fread(text.data(), 1, text.size(), in.get()) != text.size()) {
      return Status::Io("cannot read " + path.string() + " again (did it change?)");
    }
    const std::string where = file + ":sessions[" + std::to_string(i) + "]";
    SessionBlobs blobs;
    std::optional<SessionHead> head = reader.ReadHead(text, i, &blobs);
    const int64_t session_end = done + static_cast<int64_t>(text.size());
    if (head) {
      RETURN_IF_ERROR(RestoreSessionText(*head, reader, blobs, sink, where, [&](int64_t bytes) {
        done += bytes;
        sink.Progress(done, total);
      }));
    }
    done = session_end;
    sink.Progress(done, total);
  }
  return Status::Ok();
}

int DetectSnapshot(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return 0;
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"sessiondb-snapshot\"") != std::string::npos ? 100 : 0;
}

}  // namespace

ImportFormatSpec SnapshotImport() {
  return {ImportFormat::kSnapshot, DetectSnapshot, ImportSnapshot};
}

ExportFormatSpec SnapshotExport() { return {ExportFormat::kSnapshot, ExportSnapshot}; }

}  // namespace sessiondb::interop
