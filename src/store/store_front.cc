#include "store/store_front.h"

#include <algorithm>
#include <set>

#include "blob/data_uri.h"
#include "blob/sha256.h"
#include "blob/verified_blob.h"
#include "core/event_codec.h"
#include "core/message_codec.h"
#include "core/project_path.h"
#include "core/text_rules.h"
#include "core/uuid.h"
#include "store/index_backend.h"
#include "store/log_rules.h"
#include "store/secret_redaction.h"
#include "store/session_view.h"
#include "store/store_common.h"
#include "store/usage_rules.h"

namespace sessiondb::store {
namespace {

// How many times a rewind is decided again while appends keep landing first.
constexpr int kRewindAttempts = 16;

}  // namespace

Status Backend::CheckStorable(const PreparedMessage& prepared) {
  RETURN_IF_ERROR(CheckStorableText(prepared.text, "the message text"));
  return CheckStorableText(prepared.id, "the message id");
}

Status DraftNotFound(std::string_view draft_id) {
  return Status::NotFound("draft " + std::string(draft_id) +
                          " does not exist (finished or discarded)");
}

StoreFront::StoreFront(std::unique_ptr<Backend> backend, StoreOptions options)
    : backend_(std::move(backend)), options_(std::move(options)) {}

std::string StoreFront::NewId() const { return NewUuidV7(Now()); }

Status StoreFront::CheckWritable() const {
  const std::string why = backend_->read_only_reason();
  if (why.empty()) return Status::Ok();
  return Status::FailedPrecondition(
      "the store at " + backend_->location() + " is read-only: " + why +
      "; it can be listed, shown, searched and exported, not changed");
}

Result<std::vector<PreparedMessage>> StoreFront::Prepare(std::span<const Message> messages,
                                                         std::vector<Message>* redacted) {
  // Secrets never stored: the messages that hold one are copied and redacted
  // before anything is prepared; the rest are borrowed as they are.
  if (std::shared_ptr<const SecretRedactor> r = ActiveRedactor();
      r &&
      std::ranges::any_of(messages, [&](const Message& m) { return MessageHoldsSecrets(*r, m); })) {
    redacted->assign(messages.begin(), messages.end());
    for (Message& m : *redacted) RedactMessage(*r, &m);
    messages = *redacted;
  }
  return PrepareBatch(
      messages, options_, [this](std::string_view sha) { return backend_->HoldsBlob(sha); },
      [this] { return NewId(); },
      [this](const PreparedMessage& p) { return backend_->CheckStorable(p); },
      [this](std::string_view bytes, size_t ready) { return backend_->StageBlob(bytes, ready); });
}

namespace {

// The digests of the blobs the message's parts name, into `*out`.
void CollectDigests(const Message& m, std::set<std::string>* out) {
  for (const Part& part : m.parts) {
    if (part.resource && !part.resource->content_sha256.empty()) {
      out->insert(part.resource->content_sha256);
    }
  }
}

}  // namespace

Status StoreFront::FlagMissingBlobs(std::vector<Event>* events) {
  std::set<std::string> referenced;
  for (const Event& e : *events) {
    CollectDigests(e.message, &referenced);
    if (e.type == EventType::kResourceView && !e.resource_view.resource.content_sha256.empty()) {
      referenced.insert(e.resource_view.resource.content_sha256);
    }
  }
  if (referenced.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(std::set<std::string> present,
                   backend_->PresentBlobs({referenced.begin(), referenced.end()}));
  for (Event& e : *events) {
    FlagMissingParts(present, &e.message);
    // A view's descriptor reads as missing too; the message it came from warns.
    Resource& viewed = e.resource_view.resource;
    if (e.type == EventType::kResourceView && !viewed.content_sha256.empty() &&
        !present.contains(viewed.content_sha256)) {
      viewed.missing = true;
    }
  }
  return Status::Ok();
}

Status StoreFront::FlagMissingBlobs(std::span<Message> messages) {
  std::set<std::string> referenced;
  for (const Message& m : messages) CollectDigests(m, &referenced);
  if (referenced.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(std::set<std::string> present,
                   backend_->PresentBlobs({referenced.begin(), referenced.end()}));
  for (Message& m : messages) FlagMissingParts(present, &m);
  return Status::Ok();
}

void StoreFront::FlagMissingParts(const std::set<std::string>& present, Message* m) {
  for (size_t i = 0; i < m->parts.size(); ++i) {
    Part& part = m->parts[i];
    if (!part.resource || part.resource->content_sha256.empty()) continue;
    if (present.contains(part.resource->content_sha256)) continue;
    part.resource->missing = true;
    options_.warn(MissingBlobWarning(*m, i));
  }
}

Result<std::string> StoreFront::SessionMetadata(std::string_view metadata) {
  ASSIGN_OR_RETURN(std::string canonical, CanonicalJsonObject(metadata, "session metadata"));
  RedactText(&canonical);  // a marker keeps JSON text JSON: it holds no quote or backslash
  return WithNormalProject(canonical);
}

Result<std::string> StoreFront::StorableTitle(std::string_view title) {
  // Redacted before it is cleaned: a title cut short must not keep half a key.
  std::string redacted(title);
  RedactText(&redacted);
  ASSIGN_OR_RETURN(std::string clean, CleanTitle(redacted));
  RETURN_IF_ERROR(backend_->CheckStorableText(clean, "session title"));
  return clean;
}

// ---- Sessions ---------------------------------------------------------------

Result<Session> StoreFront::CreateSession(const NewSession& request) {
  RETURN_IF_ERROR(CheckWritable());
  SessionRow row;
  row.id = request.id.empty() ? NewId() : request.id;
  RETURN_IF_ERROR(ValidateSessionId(row.id));
  ASSIGN_OR_RETURN(row.metadata_json, SessionMetadata(request.metadata_json));
  ASSIGN_OR_RETURN(row.title, StorableTitle(request.title));
  row.title_fixed = !row.title.empty();
  if (!row.title_fixed) row.title = kDefaultTitle;
  row.created_ms = row.updated_ms = Now();
  return backend_->InsertSession(row);
}

Result<Session> StoreFront::GetSession(std::string_view id) { return backend_->LoadSession(id); }

Result<SessionPage> StoreFront::ListSessions(const ListOptions& options) {
  RETURN_IF_ERROR(ValidateListLimit(options.limit));
  if (options.metadata_key.find_first_of("\"\\") != std::string::npos) {
    return Err(Status::InvalidArgument("metadata key must not contain '\"' or '\\'"));
  }
  SessionQuery query{.archived = options.archived,
                     .metadata_key = options.metadata_key,
                     // Stored normal (SessionMetadata), so asked for normal too.
                     .metadata_value = options.metadata_key == "project"
                                           ? NormalProjectPath(options.metadata_value)
                                           : options.metadata_value,
                     .max_rows = options.limit + int64_t{1},
                     .trash = options.trash};
  if (!options.cursor.empty()) {
    std::pair<int64_t, std::string> after;
    RETURN_IF_ERROR(ParseListCursor(options.cursor, &after.first, &after.second));
    query.after = std::move(after);
  }
  SessionPage page;
  ASSIGN_OR_RETURN(page.sessions, backend_->SelectSessions(query));
  FinishListPage(options.limit, &page);
  return page;
}

Status StoreFront::RenameSession(std::string_view id, std::string_view title) {
  RETURN_IF_ERROR(CheckWritable());
  ASSIGN_OR_RETURN(std::string clean, StorableTitle(title));
  if (clean.empty()) return Status::InvalidArgument("a session title cannot be empty");
  return backend_->UpdateTitle(id, clean);
}

Status StoreFront::SetArchived(std::string_view id, bool archived) {
  RETURN_IF_ERROR(CheckWritable());
  return backend_->UpdateArchived(id, archived);
}

Status StoreFront::DeleteSession(std::string_view id) {
  RETURN_IF_ERROR(CheckWritable());
  const LedgerEntry record{.ts_ms = Now(), .actor = options_.actor, .action = "delete"};
  return RemoveSession(*backend_, id, &record);
}

Result<int64_t> StoreFront::PurgeArchived(int64_t before_ms) {
  RETURN_IF_ERROR(CheckWritable());
  return RemoveArchivedBefore(*backend_, before_ms);
}

Result<std::optional<std::string>> StoreFront::GetActiveSession() {
  return backend_->LoadActiveSession();
}

Status StoreFront::SetActiveSession(std::string_view id) {
  RETURN_IF_ERROR(CheckWritable());
  return backend_->StoreActiveSession(id);
}

// ---- Messages ---------------------------------------------------------------

Result<AppendResult> StoreFront::Append(std::string_view session_id, const Message& message) {
  ASSIGN_OR_RETURN(std::vector<AppendResult> results,
                   AppendBatch(session_id, std::span<const Message>(&message, 1)));
  return std::move(results.front());
}

Result<std::vector<AppendResult>> StoreFront::AppendBatch(std::string_view session_id,
                                                          std::span<const Message> messages) {
  RETURN_IF_ERROR(CheckWritable());
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  if (messages.empty()) return std::vector<AppendResult>();
  std::vector<Message> redacted;
  ASSIGN_OR_RETURN(std::vector<PreparedMessage> prepared, Prepare(messages, &redacted));
  return backend_->InsertMessages(session_id, prepared, /*finishing=*/nullptr);
}

Result<std::vector<Message>> StoreFront::ReadMessages(std::string_view session_id, int64_t from_seq,
                                                      int64_t limit) {
  ASSIGN_OR_RETURN(SessionView view, LoadSessionView(*backend_, session_id));
  ASSIGN_OR_RETURN(std::vector<Message> messages,
                   ReadViewMessages(*backend_, view, from_seq, limit, /*newest_first=*/false));
  RETURN_IF_ERROR(FlagMissingBlobs(messages));
  return messages;
}

Status StoreFront::VisitMessages(std::string_view session_id, const MessageVisitor& visit,
                                 int64_t from_seq) {
  ASSIGN_OR_RETURN(SessionView view, LoadSessionView(*backend_, session_id));
  Status flagged = Status::Ok();
  for (const SeqRange& range : view.ranges) {
    const int64_t lo = std::max(range.from_seq, from_seq);
    if (lo > range.to_seq) continue;
    ASSIGN_OR_RETURN(
        bool went_on,
        backend_->VisitMessages(
            view.session.id,
            {.from_seq = lo, .to_seq = range.to_seq, .filter = HistoryFilter::kMessages},
            [&](const MessageView& message, Message* built) {
              if (built != nullptr) flagged = FlagMissingBlobs(std::span<Message>(built, 1));
              return flagged.ok() && visit(message);
            }));
    RETURN_IF_ERROR(flagged);
    if (!went_on) break;
  }
  return Status::Ok();
}

Result<std::vector<Message>> StoreFront::ReadLastMessages(std::string_view session_id,
                                                          int64_t count) {
  if (count < 0) return Err(Status::InvalidArgument("count must not be negative"));
  ASSIGN_OR_RETURN(SessionView view, LoadSessionView(*backend_, session_id));
  ASSIGN_OR_RETURN(std::vector<Message> messages,
                   ReadViewMessages(*backend_, view, /*from_seq=*/1, count, /*newest_first=*/true));
  RETURN_IF_ERROR(FlagMissingBlobs(messages));
  return messages;
}

// ---- Restores ---------------------------------------------------------------

Status StoreFront::RestoreSession(const Session& session, std::span<const Event> events,
                                  const BlobSourceFn& blob_source) {
  RETURN_IF_ERROR(CheckWritable());
  RETURN_IF_ERROR(ValidateRestore(session, events));
  const bool fork = !session.parent_id.empty();
  SessionRow row;
  row.id = session.id;
  ASSIGN_OR_RETURN(row.metadata_json, SessionMetadata(session.metadata_json));
  ASSIGN_OR_RETURN(row.title, StorableTitle(session.title));
  if (row.title.empty()) row.title = kDefaultTitle;
  row.title_fixed = row.title != kDefaultTitle;
  row.preview = session.preview;
  RedactText(&row.preview);
  RETURN_IF_ERROR(backend_->CheckStorableText(row.preview, "session preview"));
  row.created_ms = session.created_ms;
  row.updated_ms = session.updated_ms;
  // A fork's count includes what it inherits: the source's index entry says.
  // A root's is the messages of its view (rewinds applied).
  if (fork) {
    row.message_count = session.message_count;
  } else {
    std::vector<Event> rewinds;
    for (const Event& e : events) {
      if (e.type == EventType::kRewind) rewinds.push_back(e);
    }
    const std::vector<SeqRange> ranges = ViewRanges(rewinds, std::ssize(events));
    row.message_count = std::ranges::count_if(events, [&](const Event& e) {
      return e.type == EventType::kMessage && InView(ranges, e.seq);
    });
  }
  row.fork_seq = fork ? session.fork_seq : 0;
  row.last_seq = row.fork_seq + static_cast<int64_t>(events.size());
  row.archived = session.archived;
  row.parent_id = session.parent_id;
  std::vector<Event> redacted;
  return backend_->InsertRestoredSession(row, RedactEvents(events, &redacted), blob_source);
}

Status StoreFront::RestoreEvents(std::string_view session_id, std::span<const Event> events,
                                 const BlobSourceFn& blob_source) {
  RETURN_IF_ERROR(CheckWritable());
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  if (events.empty()) return Status::Ok();
  // message_count counts the view, and a run's rewinds take messages out of
  // it: the earlier runs' and the run's own. They are counted over the view
  // as it is before the run; the backend writes the run only if it still
  // continues the log, so the view cannot have changed in between.
  int64_t rewound = 0;
  if (std::ranges::any_of(events, [](const Event& e) { return e.type == EventType::kRewind; })) {
    ASSIGN_OR_RETURN(SessionView view, LoadSessionView(*backend_, session_id));
    RETURN_IF_ERROR(ValidateRestoredRun(view.session.id, view.session.last_seq, events));
    ASSIGN_OR_RETURN(rewound, CountRewoundByRun(*backend_, view, events));
  }
  std::vector<Event> redacted;
  return backend_->InsertRestoredEvents(session_id, RedactEvents(events, &redacted), blob_source,
                                        rewound);
}

// ---- The harness ------------------------------------------------------------

Result<Session> StoreFront::ForkSession(std::string_view parent_id, int64_t at_seq,
                                        const NewSession& child) {
  RETURN_IF_ERROR(CheckWritable());
  ForkRow row;
  row.id = child.id.empty() ? NewId() : child.id;
  RETURN_IF_ERROR(ValidateSessionId(row.id));
  ASSIGN_OR_RETURN(row.title, StorableTitle(child.title));
  if (!child.metadata_json.empty()) {
    ASSIGN_OR_RETURN(row.metadata_json, SessionMetadata(child.metadata_json));
  }
  row.created_ms = Now();
  // The view the fork inherits: the parent's rewinds up to at_seq, which no
  // later write changes (the log is append-only below the parent's last_seq).
  ASSIGN_OR_RETURN(Session parent, backend_->LoadSession(parent_id));
  RETURN_IF_ERROR(ValidateForkPoint(parent, at_seq));
  ASSIGN_OR_RETURN(
      std::vector<Event> rewinds,
      backend_->ReadHistory(parent_id, {.to_seq = at_seq, .filter = HistoryFilter::kRewinds}));
  return InsertFork(*backend_, parent_id, at_seq, row, ViewRanges(rewinds, at_seq));
}

Result<std::vector<Event>> StoreFront::ReadEvents(std::string_view session_id, int64_t from_seq,
                                                  int64_t limit) {
  ASSIGN_OR_RETURN(std::vector<Event> events,
                   backend_->ReadHistory(session_id, {.from_seq = from_seq, .limit = limit}));
  RETURN_IF_ERROR(FlagMissingBlobs(&events));
  return events;
}

Result<PruneReport> StoreFront::PruneCompaction(std::string_view session_id,
                                                int64_t compaction_seq) {
  RETURN_IF_ERROR(CheckWritable());
  // Whether a rewind took the compaction out of the view is checked inside
  // the prune's transaction (log_rules.cc): checked here, a rewind could
  // land before the prune writes.
  return store::PruneCompaction(*backend_, session_id, compaction_seq);
}

Result<Event> StoreFront::Rewind(std::string_view session_id, int64_t to_seq) {
  ASSIGN_OR_RETURN(std::optional<Event> event, RewindGuarded(session_id, to_seq, std::nullopt));
  return std::move(*event);
}

Result<std::optional<Event>> StoreFront::RewindIfUnchanged(std::string_view session_id,
                                                           int64_t to_seq,
                                                           int64_t expected_last_seq) {
  return RewindGuarded(session_id, to_seq, expected_last_seq);
}

Result<std::optional<Event>> StoreFront::RewindGuarded(std::string_view session_id, int64_t to_seq,
                                                       std::optional<int64_t> expected_last_seq) {
  RETURN_IF_ERROR(CheckWritable());
  RETURN_IF_ERROR(ValidateSessionId(session_id));
  const std::string body = EncodeRewindBody({.to_seq = to_seq});
  RETURN_IF_ERROR(backend_->CheckStorableText(body, "the event's body"));
  // Decided on one reading of the view and written only if no other rewind
  // has changed the view since (a guarded record); decided again then. The
  // count is of the view's messages up to to_seq, which appends landing in
  // between do not change. With an expected last_seq, any event landing
  // since the caller read ends it: the caller decides again.
  for (int attempt = 1;; ++attempt) {
    ASSIGN_OR_RETURN(SessionView view, LoadSessionView(*backend_, session_id));
    const Session& session = view.session;
    if (to_seq < 0 || to_seq > session.last_seq) {
      return Err(Status::InvalidArgument(
          "cannot rewind session " + session.id + " to seq " + std::to_string(to_seq) +
          ": its log holds seqs 1.." + std::to_string(session.last_seq) + " (0 empties the view)"));
    }
    if (expected_last_seq && session.last_seq != *expected_last_seq) {
      return std::optional<Event>();
    }
    std::vector<SeqRange> dropped;
    for (const SeqRange& r : view.ranges) {
      if (r.to_seq > to_seq) dropped.push_back({std::max(r.from_seq, to_seq + 1), r.to_seq});
    }
    ASSIGN_OR_RETURN(int64_t dropped_messages, CountMessages(*backend_, session.id, dropped));
    ASSIGN_OR_RETURN(
        std::optional<Event> event,
        backend_->InsertGuardedEventRecord(
            session.id, EventType::kRewind, /*text=*/"", body,
            {.no_rewind_after = session.last_seq,
             .only_at_last_seq = expected_last_seq,
             .message_count = std::max<int64_t>(0, session.message_count - dropped_messages)}));
    if (event) {
      event->rewind.to_seq = to_seq;
      return event;
    }
    if (expected_last_seq) return std::optional<Event>();
    if (attempt >= kRewindAttempts) {
      return Err(Status::Busy("session " + session.id +
                              " was rewound by others while its "
                              "rewind was decided (" +
                              std::to_string(attempt) + " attempts); try again"));
    }
  }
}

Result<std::vector<Event>> StoreFront::ReadRewinds(std::string_view session_id, int64_t upto_seq) {
  return backend_->ReadHistory(session_id, {.to_seq = upto_seq, .filter = HistoryFilter::kRewinds});
}

Result<UsageReport> StoreFront::GetUsage(std::string_view session_id) {
  return backend_->LoadUsage(session_id);
}

Result<UsageSummary> StoreFront::GetUsageSummary(const UsageQuery& query) {
  RETURN_IF_ERROR(CheckUsageQuery(query));
  ASSIGN_OR_RETURN(PriceTable prices, PriceTable::Load(query.prices_path));
  UsageDaysFilter filter{.since = query.since, .until = query.until, .session_ids = {}};
  filter.session_ids = query.session_ids;
  ASSIGN_OR_RETURN(UsageDays days, backend_->LoadUsageDays(filter));
  return SummarizeUsage(days, query, prices);
}

Result<std::vector<TurnUsage>> StoreFront::GetTurnUsage(std::string_view session_id,
                                                        const std::string& prices_path) {
  ASSIGN_OR_RETURN(PriceTable prices, PriceTable::Load(prices_path));
  ASSIGN_OR_RETURN(Session session, GetSession(session_id));
  // The whole log from the fork point on: rewound turns were spent too.
  ASSIGN_OR_RETURN(std::vector<Event> events, ReadEvents(session_id, session.fork_seq + 1, -1));
  std::vector<TurnUsage> turns;
  for (const Event& e : events) {
    if (e.type != EventType::kMessage || !e.message.usage || IsInherited(e, session_id)) continue;
    TurnUsage& t = turns.emplace_back();
    t.seq = e.seq;
    t.ts_ms = e.ts_ms;
    t.provider = e.message.provider;
    t.model = e.message.model;
    t.usage = *e.message.usage;
    if (const Price* p = prices.Find(t.provider, t.model, UtcDay(e.ts_ms))) {
      t.cost_usd = PriceTable::Cost(*p, t.usage);
    }
  }
  return turns;
}

Result<Event> StoreFront::AppendEventRecord(std::string_view session_id, EventType type,
                                            std::string_view text, std::string_view body) {
  RETURN_IF_ERROR(CheckWritable());
  // A summary or a reason, and the body (JSON text) that holds it again.
  std::string redacted_text(text);
  std::string redacted_body(body);
  RedactText(&redacted_text);
  RedactText(&redacted_body);
  RETURN_IF_ERROR(backend_->CheckStorableText(redacted_text, "the event's text"));
  RETURN_IF_ERROR(backend_->CheckStorableText(redacted_body, "the event's body"));
  return backend_->InsertEventRecord(session_id, type, redacted_text, redacted_body);
}

Result<std::optional<Event>> StoreFront::FindLastCompaction(std::string_view session_id,
                                                            int64_t upto_seq) {
  return backend_->FindLastCompaction(session_id, upto_seq);
}

Result<std::optional<Event>> StoreFront::FindResourceMessage(std::string_view session_id,
                                                             std::string_view resource_id) {
  ASSIGN_OR_RETURN(std::optional<Event> found,
                   backend_->FindResourceMessage(session_id, resource_id));
  if (!found) return found;
  std::vector<Event> one;
  one.push_back(std::move(*found));
  RETURN_IF_ERROR(FlagMissingBlobs(&one));
  return std::optional<Event>(std::move(one.front()));
}

// ---- Drafts -----------------------------------------------------------------

Result<Draft> StoreFront::OpenDraft(std::string_view session_id, Role role,
                                    std::string_view model) {
  RETURN_IF_ERROR(CheckWritable());
  if (!IsValidUtf8(model)) return Err(Status::InvalidArgument("the draft's model is not UTF-8"));
  RETURN_IF_ERROR(backend_->CheckStorableText(model, "the draft's model"));
  Draft draft;
  draft.id = "draft_" + NewId();
  draft.session_id = session_id;
  draft.role = role;
  draft.model = model;
  draft.created_ms = draft.updated_ms = Now();
  RETURN_IF_ERROR(backend_->InsertDraft(draft));
  return draft;
}

Status StoreFront::SaveDraft(const Draft& draft) {
  RETURN_IF_ERROR(CheckWritable());
  if (!IsValidUtf8(draft.text) || !IsValidUtf8(draft.reasoning)) {
    return Status::InvalidArgument("draft " + draft.id + " holds text that is not UTF-8");
  }
  if (std::shared_ptr<const SecretRedactor> r = ActiveRedactor()) {
    Draft redacted = draft;
    const bool text = r->Redact(&redacted.text);
    const bool reasoning = r->Redact(&redacted.reasoning);
    if (text || reasoning) {
      RETURN_IF_ERROR(backend_->CheckStorableText(redacted.text, "the draft's text"));
      RETURN_IF_ERROR(backend_->CheckStorableText(redacted.reasoning, "the draft's reasoning"));
      return backend_->UpdateDraft(redacted, Now());
    }
  }
  RETURN_IF_ERROR(backend_->CheckStorableText(draft.text, "the draft's text"));
  RETURN_IF_ERROR(backend_->CheckStorableText(draft.reasoning, "the draft's reasoning"));
  return backend_->UpdateDraft(draft, Now());
}

Result<std::vector<Draft>> StoreFront::ListDrafts(std::string_view session_id) {
  return backend_->SelectDrafts(session_id);
}

Result<AppendResult> StoreFront::FinishDraft(std::string_view draft_id, const Message& message) {
  RETURN_IF_ERROR(CheckWritable());
  ASSIGN_OR_RETURN(Draft draft, backend_->LoadDraft(draft_id));
  const Message final_message = FinalDraftMessage(draft, message);
  std::vector<Message> redacted;
  ASSIGN_OR_RETURN(std::vector<PreparedMessage> prepared,
                   Prepare(std::span<const Message>(&final_message, 1), &redacted));
  // The draft goes in the append's transaction: never both, never neither.
  ASSIGN_OR_RETURN(std::vector<AppendResult> results,
                   backend_->InsertMessages(draft.session_id, prepared, &draft));
  return std::move(results.front());
}

Status StoreFront::DiscardDraft(std::string_view draft_id) {
  RETURN_IF_ERROR(CheckWritable());
  return backend_->RemoveDraft(draft_id);
}

// ---- Blobs ------------------------------------------------------------------

// Every read of blob bytes for a caller is checked against the name: damaged
// bytes never leave the store as sound, whatever face asked (Verify reads the
// backend itself, to report them).
Result<std::string> StoreFront::ReadBlob(std::string_view sha256, bool verify) {
  (void)verify;  // always: see store.h
  ASSIGN_OR_RETURN(std::string bytes, backend_->ReadBlob(sha256));
  if (blob::Sha256Hex(bytes) != sha256) {
    // Warned as well as answered: a caller that degrades (a projection's
    // MISSING descriptor, invariant 5) still gets the blob named.
    Status damaged = blob::CorruptBlob(sha256);
    options_.warn(damaged.message());
    return Err(std::move(damaged));
  }
  return bytes;
}

Result<std::unique_ptr<BlobReader>> StoreFront::OpenBlob(std::string_view sha256, int64_t offset) {
  {
    // The whole blob hashed first, a piece at a time, so a reader that
    // starts past the beginning (a Range) never hands out damaged bytes.
    ASSIGN_OR_RETURN(std::unique_ptr<BlobReader> check, backend_->OpenBlob(sha256));
    RETURN_IF_ERROR(blob::CheckBlobBytes(*check, sha256));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<BlobReader> raw, backend_->OpenBlob(sha256));
  if (offset < 0 || offset > raw->size()) {
    return Err(Status::InvalidArgument("offset " + std::to_string(offset) + " is outside blob " +
                                       std::string(sha256) + " of " + std::to_string(raw->size()) +
                                       " bytes"));
  }
  // Hashed again as it is read: bytes that changed since the check are
  // refused at the end rather than given out whole.
  std::unique_ptr<BlobReader> reader = blob::VerifyingReader(std::move(raw), std::string(sha256));
  if (offset > 0) RETURN_IF_ERROR(reader->Skip(offset));
  return reader;
}

Result<std::string> StoreFront::ReadDataUri(const Resource& resource) {
  if (resource.content_sha256.empty()) {
    return Err(Status::InvalidArgument("resource " + resource.resource_id +
                                       " is a remote link; the store holds no bytes for it"));
  }
  ASSIGN_OR_RETURN(std::string bytes, ReadBlob(resource.content_sha256, /*verify=*/true));
  return blob::MakeDataUri(resource.mime.empty() ? "application/octet-stream" : resource.mime,
                           bytes);
}

// ---- Housekeeping -------------------------------------------------------------

Result<GcReport> StoreFront::CollectGarbage(const GcOptions& options) {
  RETURN_IF_ERROR(CheckWritable());
  GcReport report;
  const int64_t cutoff = Now() - options.grace_ms;
  // Listed without a write transaction; each removal then checks again
  // inside one, so an append naming a blob meanwhile keeps it.
  ASSIGN_OR_RETURN(std::vector<BlobCandidate> candidates,
                   backend_->UnreferencedBlobs(&report.blobs_scanned));
  for (const BlobCandidate& candidate : candidates) {
    ASSIGN_OR_RETURN(RemovedBlob removed,
                     backend_->RemoveBlobIfUnreferenced(candidate.sha256, cutoff, options.dry_run));
    if (removed.outcome == BlobRemoval::kInGrace) ++report.blobs_in_grace;
    if (removed.outcome != BlobRemoval::kRemoved) continue;
    ++report.blobs_deleted;
    report.bytes_freed += removed.size;
  }
  return report;
}

Result<VerifyReport> StoreFront::Verify(const ProgressFn& progress) {
  VerifyReport report;
  backend_->CheckDatabase(&report);
  ASSIGN_OR_RETURN(std::vector<std::string> referenced, backend_->ReferencedBlobs());
  ASSIGN_OR_RETURN(std::vector<std::string> stored, backend_->StoredBlobs());
  // Every stored blob re-hashed, whether or not a message names it.
  std::set<std::string> present;
  const int64_t total = static_cast<int64_t>(stored.size());
  for (const std::string& sha : stored) {
    Result<std::string> bytes = backend_->ReadBlob(sha);
    if (bytes && blob::Sha256Hex(*bytes) == sha) {
      present.insert(sha);
      report.bytes_checked += static_cast<int64_t>(bytes->size());
    } else if (bytes || bytes.error().code() == StatusCode::kCorruption) {
      present.insert(sha);
      report.corrupt.push_back(sha);
    } else if (bytes.error().code() == StatusCode::kNotFound) {
      continue;  // removed since it was listed (gc): a reference to it shows as missing
    } else {
      return Err(bytes.error());
    }
    ++report.blobs_checked;
    if (progress) progress(report.blobs_checked, total);
  }
  for (const std::string& sha : referenced) {
    if (!present.contains(sha)) report.missing.push_back(sha);
  }
  return report;
}

Result<StorageStats> StoreFront::Stats() { return backend_->Stats(); }

Result<std::unique_ptr<IndexBackend>> StoreFront::OpenIndexBackend() {
  return WithActiveRedactor(backend_->OpenIndexBackend());
}

Result<std::unique_ptr<IndexBackend>> StoreFront::OpenIndexBackendOnStoreConnection() {
  return WithActiveRedactor(backend_->OpenIndexBackendOnStoreConnection());
}

Result<std::unique_ptr<IndexBackend>> StoreFront::WithActiveRedactor(
    Result<std::unique_ptr<IndexBackend>> opened) const {
  ASSIGN_OR_RETURN(std::unique_ptr<IndexBackend> index, std::move(opened));
  // The code memory records code writes through it, not through the front.
  index->set_secret_redactor(ActiveRedactor());
  return index;
}

}  // namespace sessiondb::store
