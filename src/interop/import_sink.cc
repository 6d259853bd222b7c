#include "interop/import_sink.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "blob/media_type.h"
#include "blob/sha256.h"
#include "core/json_parse.h"
#include "core/text_rules.h"
#include "core/uuid.h"
#include "store/message_preparer.h"
#include "store/store_common.h"

namespace sessiondb::interop {
namespace {

// About what an event takes in memory, and in the log: its texts.
int64_t TextBytes(const Event& e) {
  size_t n = e.compaction.summary.size() + e.message.metadata_json.size();
  for (const Part& p : e.message.parts) n += p.text.size() + p.arguments_json.size();
  return static_cast<int64_t>(n);
}

// How many stored events a re-import reads at a time to learn their
// identities: few, since an event's text may be large.
constexpr int64_t kIdentityPageEvents = 128;

// 16 hex digits as a number, or nullopt.
std::optional<uint64_t> ParseHex64(std::string_view hex) {
  if (hex.size() != 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : hex) {
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

// The record identity an id made by ImportedEventId for the session whose
// hash begins `session_prefix` carries, or nullopt for any other id.
std::optional<uint64_t> ImportedIdentity(std::string_view id, std::string_view session_prefix) {
  if (id.size() != 36 || !id.starts_with(session_prefix) || id[23] != '-') return std::nullopt;
  return ParseHex64(std::string(id.substr(19, 4)) + std::string(id.substr(24, 12)));
}

}  // namespace

uint64_t IdentityOf(std::string_view id) {
  return *ParseHex64(std::string_view(blob::Sha256Hex(id)).substr(0, 16));
}

std::string StableSessionId(std::string_view format, std::string_view source_id) {
  if (ValidateSessionId(source_id).ok()) return std::string(source_id);
  return std::string(format) + "-" + blob::Sha256Hex(source_id).substr(0, 32);
}

std::string StableEventId(std::string_view session_id, std::string_view source_key) {
  return StableEventId(session_id, source_key, "");
}

std::string StableEventId(std::string_view session_id, std::string_view key_head,
                          std::string_view key_tail) {
  const std::string h = blob::Sha256Hex({session_id, "/", key_head, key_tail});
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

ImportSink::ImportSink(Store& store, ImportReport* report, ProgressFn progress, RunLimits limits,
                       int64_t max_attachment_bytes)
    : store_(store),
      report_(report),
      progress_(std::move(progress)),
      limits_(limits),
      max_attachment_bytes_(max_attachment_bytes),
      writer_(store) {}

void ImportSink::Skip(std::string where, std::string reason) {
  ++report_->records_skipped;
  if (report_->skipped.size() < kMaxSkippedListed) {
    report_->skipped.push_back({std::move(where), std::move(reason)});
  }
}

void ImportSink::SkipFile(std::string path, std::string reason) {
  report_->files_skipped.push_back({std::move(path), std::move(reason)});
}

std::string ImportSink::OverLimitReason(int64_t size) const {
  return "it is " + FormatBytes(size) + "; an import stores attachments up to " +
         FormatBytes(max_attachment_bytes_) +
         " (--max-attachment-bytes), so only its descriptor is kept";
}

std::optional<Part> ImportSink::NotStoredPart(PartType type, std::string_view head, int64_t size,
                                              std::string_view declared_mime, std::string name,
                                              std::string_view where, std::string reason) {
  Part p;
  p.type = type;
  Resource r;
  r.mime = blob::NormalizeMime(declared_mime);
  auto media = blob::SniffMedia(head);
  if (media && !head.empty() && media->is_image) {
    p.type = PartType::kImage;  // as a stored file that is an image would be
    r.mime = media->mime;
    r.width = media->width;
    r.height = media->height;
  } else if (!media && type == PartType::kImage && blob::IsSupportedImageMime(r.mime)) {
    // An image signature whose header runs past the head: described as declared.
  } else if (type == PartType::kImage) {
    const std::string label = name.empty() ? "an attachment" : "'" + name + "'";
    Skip(std::string(where), label + " is said to be an image but its first bytes are " +
                                 (media ? media->mime : "not an image's") +
                                 "; the part is left out");
    return std::nullopt;
  } else if (media && r.mime.empty()) {
    r.mime = media->mime;
  }
  r.size = size;
  r.origin = Origin::kInline;
  r.name = std::move(name);
  r.not_stored = reason.empty() ? OverLimitReason(size) : std::move(reason);
  p.resource = std::move(r);
  return p;
}

void ImportSink::NoteNotStored(std::string_view where, const Resource& r) {
  ++report_->attachments_not_stored;
  if (report_->not_stored.size() < kMaxSkippedListed) {
    const std::string label = r.name.empty() ? "an attachment" : "'" + r.name + "'";
    report_->not_stored.push_back({std::string(where), label + ": " + r.not_stored});
  }
}

void ImportSink::Progress(int64_t done, int64_t total) {
  if (!progress_) return;
  if (!file_frame_) return progress_(done, total);
  const FileFrame& f = *file_frame_;
  const int64_t within =
      total > 0 ? static_cast<int64_t>(static_cast<double>(done) / static_cast<double>(total) *
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

// Whether message `m` has parts, all of them text or reasoning of nothing
// but whitespace: the store refuses it (PartHasContent).
bool OnlyWhitespace(const Message& m) {
  if (m.parts.empty()) return false;  // ResolveAttachments says why
  for (const Part& p : m.parts) {
    if (p.source || PartHasContent(p)) return false;
  }
  return true;
}

}  // namespace

Status ImportSink::BeginSession(const Session& session, MessageFingerprint fingerprint) {
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
  fingerprint_ = std::move(fingerprint);
  source_fingerprints_.clear();
  store_seq_of_source_.clear();
  stored_.clear();
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
    next_seq_ = existing->last_seq + 1;
    if (Status s = LoadStoredIdentities(); !s.ok()) {
      open_ = false;
      return s;
    }
  } else if (existing.error().code() == StatusCode::kNotFound) {
    exists_ = false;
  } else {
    open_ = false;
    return existing.error();
  }
  return Status::Ok();
}

std::string ImportSink::FingerprintId(const Message& m,
                                      std::unordered_map<std::string, int64_t>* seen) const {
  const std::string print = blob::Sha256Hex(fingerprint_(m));
  const int64_t occurrence = ++(*seen)[print];
  return StableEventId(session_.id, "fingerprint/" + print + "/" + std::to_string(occurrence));
}

Status ImportSink::LoadStoredIdentities() {
  const std::string prefix = blob::Sha256Hex(session_.id).substr(0, 8);
  std::unordered_map<std::string, int64_t> fingerprints;
  for (int64_t from = 1;;) {
    ASSIGN_OR_RETURN(std::vector<Event> page,
                     store_.ReadEvents(session_.id, from, kIdentityPageEvents));
    for (const Event& e : page) {
      // An event an import stored carries its record's identity in its id;
      // one an export wrote out comes back under that id as the record's.
      if (std::optional<uint64_t> imported = ImportedIdentity(e.id, prefix)) {
        stored_.emplace_back(*imported, e.seq);
      }
      stored_.emplace_back(IdentityOf(StableEventId(session_.id, e.id)), e.seq);
      if (fingerprint_ && e.type == EventType::kMessage && !e.message.pruned) {
        stored_.emplace_back(IdentityOf(FingerprintId(e.message, &fingerprints)), e.seq);
      }
    }
    if (std::ssize(page) < kIdentityPageEvents) break;
    from = page.back().seq + 1;
  }
  std::sort(stored_.begin(), stored_.end());
  return Status::Ok();
}

std::optional<int64_t> ImportSink::StoredSeq(uint64_t identity) const {
  auto it = std::lower_bound(stored_.begin(), stored_.end(),
                             std::pair<uint64_t, int64_t>(identity, INT64_MIN));
  if (it == stored_.end() || it->first != identity) return std::nullopt;
  return it->second;
}

void ImportSink::MapSourceSeqs(Event* e) const {
  const auto& map = store_seq_of_source_;
  const auto known = static_cast<int64_t>(map.size());
  if (e->type == EventType::kCompaction) {
    Compaction& c = e->compaction;
    if (c.from_seq < 1 || c.to_seq < c.from_seq || c.to_seq > known) return;
    // The range the covered records hold in the store: a record that came
    // in after the ones around it in the source stands later in the log.
    const auto first = map.begin() + (c.from_seq - 1);
    const auto last = map.begin() + c.to_seq;
    c.from_seq = *std::min_element(first, last);
    c.to_seq = *std::max_element(first, last);
  } else if (e->type == EventType::kResourceView) {
    int64_t& seq = e->resource_view.message_seq;
    if (seq >= 1 && seq <= known) seq = map[static_cast<size_t>(seq - 1)];
  }
}

bool ImportSink::WouldKeep(const Message& m) {
  if (UnstorableField(m)) return false;
  if (m.pruned) return true;
  if (OnlyWhitespace(m)) return false;
  for (const Part& p : m.parts) {
    if (!p.source || p.source->kind != AttachmentSource::Kind::kBytes) return true;
    auto media = blob::SniffMedia(p.source->data);
    if (media && !p.source->data.empty() && (p.type != PartType::kImage || media->is_image)) {
      return true;
    }
  }
  return false;
}

std::optional<std::string> ImportSink::AttachmentDropReason(const Part& p,
                                                            const Result<blob::MediaInfo>& media) {
  if (!p.source || p.source->kind != AttachmentSource::Kind::kBytes) return std::nullopt;
  const std::string label = p.source->name.empty() ? "an attachment" : "'" + p.source->name + "'";
  if (!media) return label + " is not a readable image: " + media.error().message();
  if (p.type == PartType::kImage && !media->is_image) {
    return label + " is said to be an image but its bytes are " + media->mime +
           "; the part is left out";
  }
  if (p.source->data.empty()) return label + " is empty; the part is left out";
  return std::nullopt;
}

Result<std::optional<Event>> ImportSink::StoredEvent(std::string_view stable_id) {
  if (!open_) return Err(Status::Internal("StoredEvent outside a session"));
  const std::optional<int64_t> seq = StoredSeq(IdentityOf(stable_id));
  if (!seq) return std::optional<Event>();
  ASSIGN_OR_RETURN(std::vector<Event> events, store_.ReadEvents(session_.id, *seq, 1));
  if (events.empty() || events.front().seq != *seq) return std::optional<Event>();
  return std::optional<Event>(std::move(events.front()));
}

bool ImportSink::ResolveAttachments(Message* m, std::string_view stable_id,
                                    std::string_view where) {
  std::vector<Part> kept;
  for (Part& p : m->parts) {
    if (!p.source || p.source->kind != AttachmentSource::Kind::kBytes) {
      if (p.resource && !p.resource->not_stored.empty()) {
        // An importer's NotStoredPart: named like the stored ones.
        if (p.resource->resource_id.empty()) {
          p.resource->resource_id = "res_" + StableEventId(stable_id, std::to_string(kept.size()));
        }
        NoteNotStored(where, *p.resource);
      }
      kept.push_back(std::move(p));
      continue;
    }
    const std::string& bytes = p.source->data;
    auto media = blob::SniffMedia(bytes);
    if (auto why = AttachmentDropReason(p, media)) {
      Skip(std::string(where), std::move(*why));
      continue;
    }
    const std::string resource_id = "res_" + StableEventId(stable_id, std::to_string(kept.size()));
    if (static_cast<int64_t>(bytes.size()) > max_attachment_bytes_) {
      // History is kept whole: the message comes in, the bytes do not.
      std::optional<Part> described =
          NotStoredPart(p.type, bytes, static_cast<int64_t>(bytes.size()), p.source->declared_mime,
                        p.source->name, where);
      if (!described) continue;
      described->resource->resource_id = resource_id;
      NoteNotStored(where, *described->resource);
      kept.push_back(*std::move(described));
      continue;
    }
    Resource r;
    r.resource_id = resource_id;
    r.content_sha256 = blob::Sha256Hex(bytes);
    r.mime = media->is_image
                 ? media->mime
                 : (p.source->declared_mime.empty() ? media->mime : p.source->declared_mime);
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
  // Importers number the events they expect kept from 1, as if the session
  // were new; so does the sink, to place them (MapSourceSeqs).
  const bool keeps = event.type != EventType::kMessage || WouldKeep(event.message);
  // Before the fingerprint: the time it is stored with is the one it sees.
  if (event.ts_ms == 0) event.ts_ms = last_ts_;
  event.message.ts_ms = event.ts_ms;
  std::string stable_id = std::move(event.id);
  if (fingerprint_ && keeps && event.type == EventType::kMessage) {
    std::string by_content = FingerprintId(event.message, &source_fingerprints_);
    if (stable_id.empty()) stable_id = std::move(by_content);
  }
  if (stable_id.empty()) {
    return Status::Internal(std::string(where) +
                            ": an event without an id in a session begun without a fingerprint");
  }
  if (keeps && exists_) {
    if (std::optional<int64_t> stored = StoredSeq(IdentityOf(stable_id))) {
      // The store holds this record already (an earlier import, or the
      // export the source was continued from), wherever it stands there.
      store_seq_of_source_.push_back(*stored);
      last_ts_ = std::max(last_ts_, event.ts_ms);
      return Status::Ok();
    }
  }
  const int64_t seq = next_seq_;
  MapSourceSeqs(&event);
  // Resource ids keep coming from the importer's own id: an importer may
  // name them before it hands the event over (pixir.cc).
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
    if (!event.message.pruned && OnlyWhitespace(event.message)) {
      // The store refuses an empty message; a source may hold one (a prompt
      // sent with a stray Enter), and the rest of its history still counts.
      Skip(std::string(where), "the message holds only whitespace; nothing to import");
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
  if (keeps) store_seq_of_source_.push_back(seq);
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
      if (e.type == EventType::kMessage)
        ApplyMessageToIndex(e.message.role, e.message.Text(), &entry);
    }
    if (s.title.empty()) s.title = entry.title_fixed ? entry.title : std::string(kDefaultTitle);
    if (s.preview.empty()) s.preview = entry.preview;
    if (s.created_ms == 0) s.created_ms = pending_.front().ts_ms;
    if (s.updated_ms == 0) s.updated_ms = pending_.back().ts_ms;
    // A source whose events are older than the session it names (a Codex
    // sub-agent's rollout starts with the history it was given) must not
    // give a session updated before it was created.
    s.updated_ms = std::max(s.updated_ms, s.created_ms);
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
    report_->sessions_written.push_back(session_.id);
    open_ = false;
    return Status::Ok();
  }
  RETURN_IF_ERROR(Flush());
  open_ = false;
  if (!exists_) {
    ++report_->sessions_added;
    report_->sessions_written.push_back(session_.id);
  } else if (added_ > 0) {
    ++report_->sessions_extended;
    report_->sessions_written.push_back(session_.id);
  } else {
    ++report_->sessions_unchanged;
  }
  return Status::Ok();
}

Status ImportSink::Finish() { return writer_.Wait(); }

}  // namespace sessiondb::interop
