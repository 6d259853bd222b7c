// ImportSink: where every importer puts what it reads. An importer calls
// BeginSession, Add for each event in order, EndSession; records it cannot
// use go to Skip. The sink
//  - numbers the events (seq 1, 2, 3...) and, when the session is already
//    in the store (an earlier import, or the export a source was continued
//    from), recognises the records it holds by their identity, never by
//    their place or count: an event whose id the store holds is left out,
//    the others are appended after the store's last event in source order,
//    so a re-import adds nothing and a continued source adds what is new
//    wherever it stands in the source (see LoadStoredIdentities);
//  - turns image and file bytes (Part::ImageFromBytes / FileFromBytes) into
//    stored resources: sniffed, hashed, checked; an image whose bytes are not
//    an image is dropped from its message with a reason; one over the
//    import's byte limit is kept as a descriptor without its bytes, with
//    the reason (Resource::not_stored), and its message comes in whole;
//  - writes in runs (RestoreSession, then RestoreEvents) no longer than
//    its RunLimits, so memory stays bounded whatever the size of the source,
//    on a thread of its own (RunWriter) while the importer reads on;
//  - fills the title and preview from the first messages when the importer
//    gives none, and counts everything into the ImportReport.
//
// Ids: importers derive session ids with StableSessionId and event ids with
// StableEventId from the source's own ids, so that the same source always
// gives the same ids. A format without record ids leaves a message's id
// empty and gives BeginSession a MessageFingerprint: the sink names the
// message from it and from how many earlier messages had the same one. The
// sink stores an event under ImportedEventId, which keeps that id's hash
// (the record's identity) but sorts by session and seq.
//
// Thread-safety: single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "blob/media_type.h"
#include "core/iso_time.h"
#include "interop/run_writer.h"
#include "sessiondb/interop.h"
#include "sessiondb/store.h"

namespace sessiondb::interop {

// Where a run ends: at whichever limit comes first. Long runs make an
// import fast (a commit, and a full-text segment, per run); these keep the
// two runs in memory (one written, one filling) to tens of MiB.
struct RunLimits {
  size_t events = 5000;
  int64_t text_bytes = int64_t{4} * 1024 * 1024;   // of the events' texts
  int64_t blob_bytes = int64_t{32} * 1024 * 1024;  // of new blob bytes
};
inline constexpr size_t kMaxSkippedListed = 100;

// A session id for `source_id` of `format`: the source id itself when it is
// a valid session id (1-128 of [A-Za-z0-9._-]), else "<format>-" and the
// first 32 hex digits of its SHA-256.
std::string StableSessionId(std::string_view format, std::string_view source_id);

// An event id for the record `source_key` (its own id, or a hash of its
// bytes) of session `session_id`: the UUID-shaped first 128 bits of
// SHA-256(session_id + "/" + source_key), so the same record always gets the
// same id and different sessions never share one.
std::string StableEventId(std::string_view session_id, std::string_view source_key);
// The same for the key key_head + key_tail, without putting them together
// (the tail may be a line of tens of MiB).
std::string StableEventId(std::string_view session_id, std::string_view key_head,
                          std::string_view key_tail);

// The id an imported event is stored under: 8 hex digits of SHA-256 of
// `session_id`, the seq as 8 hex digits, then 16 hex digits of SHA-256 of
// `stable_id` (the importer's StableEventId), UUID-shaped. The same record
// at the same place still always gets the same id, and ids sort in the
// order an import writes them, so the store's id index grows at its end
// instead of taking a write to a random page of it per event (at 1 GiB,
// that cost a third of an import's time; docs/benchmarks.md).
std::string ImportedEventId(std::string_view session_id, int64_t seq, std::string_view stable_id);

// A record's identity: 64 bits of the SHA-256 of its id (for the sink, the
// importer's stable id: the bits ImportedEventId keeps in the last 16 hex
// digits of the stored id). Re-imports compare these, never places.
uint64_t IdentityOf(std::string_view id);

// What tells the records of a format without ids apart: the text a message
// is known by in that format, the same for the message its importer decodes
// and for the stored message its exporter wrote out (say, role and text:
// what an export writes and a re-import reads back). Equal fingerprints are
// told apart by their order (the first, the second...).
using MessageFingerprint = std::function<std::string(const Message&)>;

class ImportSink {
 public:
  ImportSink(Store& store, ImportReport* report, ProgressFn progress = {}, RunLimits limits = {},
             int64_t max_attachment_bytes = kDefaultImportAttachmentBytes);
  ImportSink(const ImportSink&) = delete;
  ImportSink& operator=(const ImportSink&) = delete;

  // Starts a session. session.id: from StableSessionId. An empty title is
  // taken from the first message with text; created_ms / updated_ms of 0
  // from the first / last event. parent_id must be empty (forks from a
  // source are imported as sessions of their own, with metadata saying so).
  // When the store holds the session, reads the identities of its events
  // (a few bytes each; the events a page at a time). `fingerprint`: for a
  // format whose messages may have no id (see Add).
  Status BeginSession(const Session& session, MessageFingerprint fingerprint = {});
  // Adds the next event of the current session. event.id from
  // StableEventId (stored as ImportedEventId of it, message.id the same), or
  // empty for a message the source gives no id, in a session begun with a
  // fingerprint. event.ts_ms as the source says (0: the previous event's
  // time). A compaction's from_seq..to_seq and a resource view's message_seq
  // count the events the sink keeps from 1, as if the session were new
  // (WouldKeep); the sink turns them into the store's seqs. `where` names
  // the record for skip reasons.
  Status Add(Event event, std::string_view where);
  // Hands what is pending to the writer and closes the session.
  Status EndSession();
  // Waits until everything handed over is written: the first error of the
  // writer, if any. Call once the importer is done; until then, a write's
  // error reaches the importer at its next Add or EndSession.
  Status Finish();

  // Whether Add would keep anything of message `m` (checks only): importers
  // that count the sink's events (to place a compaction) ask this.
  static bool WouldKeep(const Message& m);

  // The event an earlier import stored for the importer's id `stable_id`
  // (StableEventId) in the open session, or nullopt when the store held no
  // event of that identity before this import (StoredSeq: re-imports match
  // by identity, wherever the event stands). For importers that gather
  // several source records into one event (claude-code: the records of one
  // response): the stored event says how many of them the store already
  // holds, so records the source gained since can come in as an event of
  // their own. kInternal outside a session.
  Result<std::optional<Event>> StoredEvent(std::string_view stable_id);

  // Records a skipped record (counted; the first kMaxSkippedListed listed).
  void Skip(std::string where, std::string reason);
  // Records a file (or folder) of a folder import left out whole, because it
  // cannot be read (ImportReport::files_skipped).
  void SkipFile(std::string path, std::string reason);
  // Why the sink leaves out byte part `p` (its bytes, sniffed as `media`,
  // are no readable type, not an image for an image part, or nothing), in
  // the words of its skip; nullopt if it keeps the part. For an importer
  // that drops a message before its session begins, where the sink cannot
  // say it (Pixir).
  static std::optional<std::string> AttachmentDropReason(const Part& p,
                                                         const Result<blob::MediaInfo>& media);

  // The largest attachment whose bytes the import stores
  // (ImportOptions::max_attachment_bytes). An importer that reads an
  // attachment from a file of its own checks the file's size first, and for
  // a larger one reads only its head and hands over NotStoredPart instead.
  int64_t max_attachment_bytes() const { return max_attachment_bytes_; }
  // The part for an attachment of `size` bytes kept only as a descriptor:
  // its type and dimensions sniffed from `head` (its first bytes; for a file
  // that is no image, the declared MIME type first), the reason in
  // resource->not_stored: `reason`, or when it is empty that the size is
  // over max_attachment_bytes(). nullopt, with a skip naming `where`, for an
  // image part whose head is not an image's, as for one whose bytes are at
  // hand.
  std::optional<Part> NotStoredPart(PartType type, std::string_view head, int64_t size,
                                    std::string_view declared_mime, std::string name,
                                    std::string_view where, std::string reason = {});
  // Reports input progress (bytes read of total) to the caller's ProgressFn.
  void Progress(int64_t done, int64_t total);
  // For an importer of many files: from now on Progress(done, total) is the
  // progress within one file of `size` bytes, which starts `before` bytes
  // into all the files' `overall` bytes, so that the caller's bar crosses
  // once for them all instead of once per file.
  void ProgressWithinFile(int64_t before, int64_t size, int64_t overall);

  // For sessions the importer wants to mark as archived or active after
  // import (Extremis): the store, as-is, once what was handed over is
  // written (a write's error is kept for Finish).
  Store& store() {
    (void)writer_.Wait();
    return store_;
  }
  // For importers that restore sessions themselves (snapshot: ids, forks
  // and descriptors kept as they are): the report to count into.
  ImportReport& report() { return *report_; }
  // How large such an importer's own runs may grow.
  const RunLimits& limits() const { return limits_; }

 private:
  // Sniffs, hashes and checks the byte attachments of `m` (named after
  // `stable_id`, the importer's id for it); false if nothing is left of the
  // message.
  bool ResolveAttachments(Message* m, std::string_view stable_id, std::string_view where);
  // Reads the identities of the stored session's events into stored_: for
  // each, the one its ImportedEventId carries (an import stored it), the one
  // of a record whose id is the event's own id (an export wrote it out under
  // that id), and with a fingerprint, its fingerprint's.
  Status LoadStoredIdentities();
  // The seq of the stored event with this identity, or nullopt.
  std::optional<int64_t> StoredSeq(uint64_t identity) const;
  // The stable id of message `m` from the session's fingerprint, counting
  // its occurrences in `seen`.
  std::string FingerprintId(const Message& m, std::unordered_map<std::string, int64_t>* seen) const;
  // Turns the importer's seqs in `e` (compaction range, viewed message) into
  // the store's.
  void MapSourceSeqs(Event* e) const;
  // Counts and lists a descriptor kept without its bytes.
  void NoteNotStored(std::string_view where, const Resource& r);
  // Why an attachment of `size` bytes is kept only as a descriptor.
  std::string OverLimitReason(int64_t size) const;
  Status Flush();

  Store& store_;
  ImportReport* report_;
  ProgressFn progress_;
  struct FileFrame {
    int64_t before = 0, size = 0, overall = 0;
  };
  std::optional<FileFrame> file_frame_;
  RunLimits limits_;
  int64_t max_attachment_bytes_;

  bool open_ = false;
  Session session_;
  bool exists_ = false;   // the store had the session before this import
  bool written_ = false;  // the session's row exists now
  MessageFingerprint fingerprint_;
  // (identity, seq) of the events the store held before, sorted.
  std::vector<std::pair<uint64_t, int64_t>> stored_;
  std::unordered_map<std::string, int64_t> source_fingerprints_;  // seen so far
  // The store's seq of each event the sink kept or found stored, in source
  // order: where the importer's seq n stands in the store.
  std::vector<int64_t> store_seq_of_source_;
  int64_t next_seq_ = 1;
  int64_t last_ts_ = 0;
  int64_t added_ = 0;  // events added in this import
  std::vector<Event> pending_;
  std::map<std::string, std::string> pending_blobs_;  // sha256 -> bytes
  int64_t pending_blob_bytes_ = 0;
  int64_t pending_text_bytes_ = 0;
  RunWriter writer_;  // last: it is stopped (and waited for) first
};

}  // namespace sessiondb::interop
