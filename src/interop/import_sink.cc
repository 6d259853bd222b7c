#include "interop/import_sink.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "blob/media_type.h"
#include "blob/sha256.h"
#include "core/json_parse.h"
#include "core/text_rules.h"
#include "core/uuid.h"
#include "store/store_common.h"

namespace sessiondb::interop {
namespace {

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// About what an event takes in memory, and in the log: its texts.
int64_t TextBytes(const Event& e) {
  size_t n = e.compaction.summary.size() + e.message.metadata_json.size();
  for (const Part& p : e.message.parts) n += p.text.size() + p.arguments_json.size();
  return static_cast<int64_t>(n);
}

int ToInt(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

}  // namespace

std::string StableSessionId(std::string_view format, std::string_view source_id) {
  if (ValidateSessionId(source_id).ok()) return std::string(source_id);
  return std::string(format) + "-" + blob::Sha256Hex(source_id).substr(0, 32);
}

std::string StableEventId(std::string_view session_id, std::string_view source_key) {
  std::string key(session_id);
  key += '/';
  key += source_key;
  const std::string h = blob::Sha256Hex(key);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

std::string ImportedEventId(std::string_view session_id, int64_t seq, std::string_view stable_id) {
  char seq_hex[9];
  std::snprintf(seq_hex, sizeof seq_hex, "%08llx",
                static_cast<unsigned long long>(seq) & 0xffffffffULL);
  const std::string key = blob::Sha256Hex(stable_id);
  return blob::Sha256Hex(session_id).substr(0, 8) + "-" + std::string(seq_hex, 4) + "-" +
         std::string(seq_hex + 4, 4) + "-" + key.substr(0, 4) + "-" + key.substr(4, 12);
}

std::optional<int64_t> ParseIsoTime(std::string_view t) {
  // YYYY-MM-DD[THH:MM[:SS[.fff...]]][Z|+HH:MM|-HH:MM]
  if (t.size() < 10 || t[4] != '-' || t[7] != '-') return std::nullopt;
  if (!IsDigits(t.substr(0, 4)) || !IsDigits(t.substr(5, 2)) || !IsDigits(t.substr(8, 2))) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = ToInt(t.substr(0, 4)) - 1900;
  tm.tm_mon = ToInt(t.substr(5, 2)) - 1;
  tm.tm_mday = ToInt(t.substr(8, 2));
  int64_t millis = 0;
  int64_t offset_s = 0;
  size_t i = 10;
  if (i < t.size() && (t[i] == 'T' || t[i] == ' ')) {
    if (t.size() < i + 6 || t[i + 3] != ':' || !IsDigits(t.substr(i + 1, 2)) ||
        !IsDigits(t.substr(i + 4, 2))) {
      return std::nullopt;
    }
    tm.tm_hour = ToInt(t.substr(i + 1, 2));
    tm.tm_min = ToInt(t.substr(i + 4, 2));
    i += 6;
    if (i < t.size() && t[i] == ':') {
      if (t.size() < i + 3 || !IsDigits(t.substr(i + 1, 2))) return std::nullopt;
      tm.tm_sec = ToInt(t.substr(i + 1, 2));
      i += 3;
    }
    if (i < t.size() && t[i] == '.') {
      size_t j = i + 1;
      int64_t scale = 100;
      while (j < t.size() && t[j] >= '0' && t[j] <= '9') {
        millis += (t[j] - '0') * scale;
        scale /= 10;
        ++j;
      }
      i = j;
    }
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
      if (t.size() < i + 6 || !IsDigits(t.substr(i + 1, 2)) || !IsDigits(t.substr(i + 4, 2))) {
        return std::nullopt;
      }
      offset_s = (ToInt(t.substr(i + 1, 2)) * 3600 + ToInt(t.substr(i + 4, 2)) * 60) *
                 (t[i] == '-' ? -1 : 1);
      i += 6;
    } else if (i < t.size() && t[i] == 'Z') {
      ++i;
    }
  }
  if (i != t.size()) return std::nullopt;
  const time_t secs = timegm(&tm);
  if (secs == static_cast<time_t>(-1)) return std::nullopt;
  return (static_cast<int64_t>(secs) - offset_s) * 1000 + millis;
}

ImportSink::ImportSink(Store& store, ImportReport* report, ProgressFn progress, RunLimits limits)
    : store_(store),
      report_(report),
      progress_(std::move(progress)),
      limits_(limits),
      writer_(store) {}

void ImportSink::Skip(std::string where, std::string reason) {
  ++report_->records_skipped;
  if (report_->skipped.size() < kMaxSkippedListed) {
    report_->skipped.push_back({std::move(where), std::move(reason)});
  }
}

void ImportSink::Progress(int64_t done, int64_t total) {
  if (!progress_) return;
  if (!file_frame_) return progress_(done, total);
  const FileFrame& f = *file_frame_;
  const int64_t within = total > 0 ? static_cast<int64_t>(static_cast<double>(done) /
                                                          static_cast<double>(total) *
                                                          static_cast<double>(f.size))
                                   : 0;
  progress_(f.before + std::min(within, f.size), f.overall);
}

void ImportSink::ProgressWithinFile(int64_t before, int64_t size, int64_t overall) {
  file_frame_ = FileFrame{before, size, overall};
}

namespace {

// Why a message cannot be stored as the source gives it: a JSON field that is
// not JSON or nests deeper than a stored value may (json_parse.h). Checked
// here so that one bad record is skipped with its reason, instead of failing
// the whole import when the store refuses its run.
std::optional<std::string> UnstorableField(const Message& m) {
  auto check = [](std::string_view text, const std::string& what) -> std::optional<std::string> {
    if (text.empty()) return std::nullopt;
    Status s = CheckJson(text, kMaxJsonValueDepth);
    if (s.ok()) return std::nullopt;
    return what + ": " + s.message() + "; the message is left out";
  };
  if (auto why = check(m.metadata_json, "message metadata")) return why;
  if (auto why = check(m.edit_results_json, "edit results")) return why;
  for (size_t i = 0; i < m.parts.size(); ++i) {
    const Part& p = m.parts[i];
    if (p.type != PartType::kToolCall) continue;
    if (auto why =
            check(p.arguments_json, "tool call arguments of part " + std::to_string(i + 1))) {
      return why;
    }
  }
  return std::nullopt;
}

}  // namespace

Status ImportSink::BeginSession(const Session& session) {
  if (open_) return Status::Internal("BeginSession while session " + session_.id + " is open");
  RETURN_IF_ERROR(ValidateSessionId(session.id));
  if (!session.parent_id.empty()) {
    return Status::Internal("imported sessions are never forks; say so in metadata");
  }
  session_ = session;
  if (!session_.metadata_json.empty()) {
    if (Status s = CheckJson(session_.metadata_json, kMaxJsonValueDepth); !s.ok()) {
      Skip(session_.id, "session metadata: " + s.message() + "; the metadata is left out");
      session_.metadata_json.clear();
    }
  }
  open_ = true;
  written_ = false;
  next_seq_ = 1;
  last_ts_ = 0;
  added_ = 0;
  pending_.clear();
  pending_blobs_.clear();
  pending_blob_bytes_ = 0;
  pending_text_bytes_ = 0;
  // A run of this session may still be on its way to the store.
  if (writer_.InFlight(session.id)) {
    if (Status s = writer_.Wait(); !s.ok()) {
      open_ = false;
      return s;
    }
  }
  auto existing = store_.GetSession(session.id);
  if (existing) {
    exists_ = true;
    written_ = true;
    stored_last_seq_ = existing->last_seq;
  } else if (existing.error().code() == StatusCode::kNotFound) {
    exists_ = false;
    stored_last_seq_ = 0;
  } else {
    open_ = false;
    return existing.error();
  }
  return Status::Ok();
}

bool ImportSink::WouldKeep(const Message& m) {
  if (UnstorableField(m)) return false;
  if (m.pruned) return true;
  for (const Part& p : m.parts) {
    if (!p.source || p.source->kind != AttachmentSource::Kind::kBytes) return true;
    auto media = blob::SniffMedia(p.source->data);
    if (media && !p.source->data.empty() && (p.type != PartType::kImage || media->is_image)) {
      return true;
    }
  }
  return false;
}

Result<std::optional<Event>> ImportSink::StoredEvent(std::string_view stable_id) {
  if (!open_) return Err(Status::Internal("StoredEvent outside a session"));
  const int64_t seq = next_seq_;
  if (seq > stored_last_seq_) return std::optional<Event>();
  ASSIGN_OR_RETURN(std::vector<Event> events, store_.ReadEvents(session_.id, seq, 1));
  if (events.empty() || events.front().id != ImportedEventId(session_.id, seq, stable_id)) {
    return std::optional<Event>();
  }
  return std::optional<Event>(std::move(events.front()));
}

bool ImportSink::ResolveAttachments(Message* m, std::string_view stable_id,
                                    std::string_view where) {
  std::vector<Part> kept;
  for (Part& p : m->parts) {
    if (!p.source || p.source->kind != AttachmentSource::Kind::kBytes) {
      kept.push_back(std::move(p));
      continue;
    }
    const std::string& bytes = p.source->data;
    auto media = blob::SniffMedia(bytes);
    const bool image_part = p.type == PartType::kImage;
    std::string label = p.source->name.empty() ? "an attachment" : "'" + p.source->name + "'";
    if (!media) {
      Skip(std::string(where), label + " is not a readable image: " + media.error().message());
      continue;
    }
    if (image_part && !media->is_image) {
      Skip(std::string(where), label + " is said to be an image but its bytes are " +
                                   media->mime + "; the part is left out");
      continue;
    }
    if (bytes.empty()) {
      Skip(std::string(where), label + " is empty; the part is left out");
      continue;
    }
    Resource r;
    r.resource_id = "res_" + StableEventId(stable_id, std::to_string(kept.size()));
    r.content_sha256 = blob::Sha256Hex(bytes);
    r.mime = media->is_image ? media->mime
                             : (p.source->declared_mime.empty() ? media->mime
                                                                : p.source->declared_mime);
    r.size = static_cast<int64_t>(bytes.size());
    r.width = media->width;
    r.height = media->height;
    r.origin = Origin::kInline;
    r.name = p.source->name;
    Part stored = p;
    stored.type = media->is_image ? PartType::kImage : PartType::kFile;
    stored.source.reset();
    stored.resource = std::move(r);
    if (!pending_blobs_.contains(stored.resource->content_sha256)) {
      pending_blob_bytes_ += static_cast<int64_t>(bytes.size());
      pending_blobs_.emplace(stored.resource->content_sha256, std::move(p.source->data));
    }
    if (stored.type == PartType::kImage) ++report_->images_added;
    kept.push_back(std::move(stored));
  }
  m->parts = std::move(kept);
  return !m->parts.empty() || m->pruned;
}

Status ImportSink::Add(Event event, std::string_view where) {
  if (!open_) return Status::Internal("Add outside a session");
  const int64_t seq = next_seq_;
  if (seq <= stored_last_seq_) {
    // An earlier import stored this one, unless it was left out then too.
    if (event.type == EventType::kMessage && !WouldKeep(event.message)) return Status::Ok();
    ++next_seq_;
    last_ts_ = std::max(last_ts_, event.ts_ms);
    return Status::Ok();
  }
  if (event.ts_ms == 0) event.ts_ms = last_ts_;
  // Resource ids keep coming from the importer's own id: an importer may
  // name them before it hands the event over (pixir.cc).
  const std::string stable_id = std::move(event.id);
  event.id = ImportedEventId(session_.id, seq, stable_id);
  event.seq = seq;
  event.session_id = session_.id;
  if (event.type == EventType::kMessage) {
    event.message.id = event.id;
    event.message.seq = seq;
    event.message.ts_ms = event.ts_ms;
    if (std::optional<std::string> why = UnstorableField(event.message)) {
      Skip(std::string(where), std::move(*why));
      return Status::Ok();
    }
    const int64_t images_before = report_->images_added;
    if (!ResolveAttachments(&event.message, stable_id, where)) {
      report_->images_added = images_before;
      Skip(std::string(where), "nothing is left of the message once its unusable parts are out");
      return Status::Ok();
    }
    ++report_->messages_added;
  }
  ++next_seq_;
  last_ts_ = std::max(last_ts_, event.ts_ms);
  pending_text_bytes_ += TextBytes(event);
  pending_.push_back(std::move(event));
  ++added_;
  if (pending_.size() >= limits_.events || pending_text_bytes_ >= limits_.text_bytes ||
      pending_blob_bytes_ >= limits_.blob_bytes) {
    return Flush();
  }
  return Status::Ok();
}

Status ImportSink::Flush() {
  if (pending_.empty()) return Status::Ok();
  ImportRun run;
  run.session_id = session_.id;
  if (!written_) {
    Session s = session_;
    IndexEntry entry;
    for (const Event& e : pending_) {
      if (e.type == EventType::kMessage) ApplyMessageToIndex(e.message.role, e.message.Text(), &entry);
    }
    if (s.title.empty()) s.title = entry.title_fixed ? entry.title : std::string(kDefaultTitle);
    if (s.preview.empty()) s.preview = entry.preview;
    if (s.created_ms == 0) s.created_ms = pending_.front().ts_ms;
    if (s.updated_ms == 0) s.updated_ms = pending_.back().ts_ms;
    run.create = std::move(s);
    written_ = true;
  }
  run.events = std::move(pending_);
  run.blobs = std::move(pending_blobs_);
  pending_.clear();
  pending_blobs_.clear();
  pending_blob_bytes_ = 0;
  pending_text_bytes_ = 0;
  return writer_.Submit(std::move(run));
}

Status ImportSink::EndSession() {
  if (!open_) return Status::Internal("EndSession outside a session");
  if (!written_ && pending_.empty()) {
    // A session with no events: still a session (an empty chat).
    ImportRun run;
    run.session_id = session_.id;
    run.create = session_;
    if (run.create->title.empty()) run.create->title = std::string(kDefaultTitle);
    RETURN_IF_ERROR(writer_.Submit(std::move(run)));
    written_ = true;
    ++report_->sessions_added;
    open_ = false;
    return Status::Ok();
  }
  RETURN_IF_ERROR(Flush());
  open_ = false;
  if (!exists_) {
    ++report_->sessions_added;
  } else if (added_ > 0) {
    ++report_->sessions_extended;
  } else {
    ++report_->sessions_unchanged;
  }
  return Status::Ok();
}

Status ImportSink::Finish() { return writer_.Wait(); }

}  // namespace sessiondb::interop
