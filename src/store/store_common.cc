#include "store/store_common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/event_codec.h"
#include "core/key_file.h"
#include "core/message_codec.h"
#include "core/text_rules.h"
#include "core/uuid.h"

namespace sessiondb {

std::string DefaultActor() {
  const char* user = std::getenv("USER");
  if (user == nullptr || *user == '\0') user = std::getenv("LOGNAME");
  char host[256] = {};
  if (user == nullptr || *user == '\0' || gethostname(host, sizeof(host) - 1) != 0 ||
      host[0] == '\0') {
    return "sessiondb";
  }
  return std::string(user) + "@" + host;
}

Result<StoreOptions> WithDefaults(const StoreOptions& given) {
  StoreOptions options = given;
  if (!options.clock) options.clock = SystemNowMs;
  if (options.actor.empty()) options.actor = DefaultActor();
  if (options.key_file.empty()) {
    // Every face (CLI, hook, serve, MCP, Python) takes the key the same way.
    if (const char* env = std::getenv(cipher::kKeyFileEnv.data()); env != nullptr) {
      options.key_file = env;
    }
  }
  if (!options.warn) {
    options.warn = [](std::string_view m) {
      std::fprintf(stderr, "sessiondb: warning: %.*s\n", static_cast<int>(m.size()), m.data());
    };
  }
  if (options.max_image_bytes <= 0 || options.max_images_per_message < 0 ||
      options.max_file_bytes <= 0) {
    return Err(Status::InvalidArgument("store limits must be positive"));
  }
  return options;
}

Result<std::string> ResolveNamespace(std::string_view name) {
  if (name.empty()) return std::string(kDefaultNamespace);
  if (Status s = ValidateSessionId(name); !s.ok()) {
    return Err(Status::InvalidArgument("namespace '" + std::string(name.substr(0, 64)) +
                                       "' is not valid: use 1 to 128 characters of "
                                       "[A-Za-z0-9._-], not starting with '.'"));
  }
  return std::string(name);
}

Status ValidateListLimit(int limit) {
  if (limit >= 1 && limit <= kMaxListLimit) return Status::Ok();
  return Status::InvalidArgument("list limit " + std::to_string(limit) +
                                 " is out of range; use 1 to " + std::to_string(kMaxListLimit));
}

Result<std::string> CleanTitle(std::string_view title) {
  if (!IsValidUtf8(title)) return Err(Status::InvalidArgument("session title is not valid UTF-8"));
  return SanitizeTitle(title);
}

void FinishListPage(int limit, SessionPage* page) {
  if (static_cast<int>(page->sessions.size()) <= limit) return;
  page->sessions.pop_back();
  page->next_cursor = ListCursor(page->sessions.back());
}

std::string ListCursor(const Session& last) {
  return std::to_string(last.updated_ms) + ":" + last.id;
}

Status ParseListCursor(const std::string& cursor, int64_t* updated_ms, std::string* id) {
  const size_t colon = cursor.find(':');
  Status bad = Status::InvalidArgument("cursor '" + cursor.substr(0, 64) +
                                       "' is not one this store handed out; pass the "
                                       "next_cursor of the previous page unchanged");
  // At most 18 digits: always fits in an int64_t.
  if (colon == std::string::npos || colon == 0 || colon > 18) return bad;
  for (size_t i = 0; i < colon; ++i) {
    if (cursor[i] < '0' || cursor[i] > '9') return bad;
  }
  *updated_ms = std::stoll(cursor.substr(0, colon));
  *id = cursor.substr(colon + 1);
  if (!ValidateSessionId(*id).ok()) return bad;
  return Status::Ok();
}

Result<std::vector<PreparedMessage>> PrepareBatch(
    std::span<const Message> messages, const StoreOptions& options, const BlobExistsFn& blob_exists,
    const std::function<std::string()>& new_id,
    const std::function<Status(const PreparedMessage&)>& check, const BlobStageFn& stage) {
  std::vector<PreparedMessage> prepared;
  prepared.reserve(messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    // Borrowed: the caller's messages outlive the append (see the header).
    auto p = PrepareMessage(messages[i], options, Admission::kAppend, blob_exists, new_id, stage,
                            /*may_borrow=*/true);
    Status s = !p ? p.error() : check ? check(*p) : Status::Ok();
    if (!s.ok()) {
      if (messages.size() == 1) return Err(s);
      return Err(
          Status(s.code(), "message " + std::to_string(i + 1) + " of the batch: " + s.message()));
    }
    prepared.push_back(std::move(*p));
  }
  return prepared;
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::numeric_limits<int64_t>::max();
  return sum;
}

Usage SaturatingAdd(const Usage& a, const Usage& b) {
  return {.input_tokens = SaturatingAdd(a.input_tokens, b.input_tokens),
          .output_tokens = SaturatingAdd(a.output_tokens, b.output_tokens),
          .cached_tokens = SaturatingAdd(a.cached_tokens, b.cached_tokens),
          .reasoning_tokens = SaturatingAdd(a.reasoning_tokens, b.reasoning_tokens),
          .cache_write_tokens = SaturatingAdd(a.cache_write_tokens, b.cache_write_tokens)};
}

Status SessionNotFound(std::string_view id) {
  return Status::NotFound("session '" + std::string(id) + "' does not exist");
}

void ApplyMessageToIndex(Role role, std::string_view text, IndexEntry* entry) {
  ApplyMessageText(role, text, entry);
  ++entry->message_count;
  ++entry->last_seq;
}

Status ValidateRestore(const Session& session, std::span<const Event> events) {
  RETURN_IF_ERROR(ValidateSessionId(session.id));
  const int64_t first = session.parent_id.empty() ? 1 : session.fork_seq + 1;
  if (!session.parent_id.empty()) RETURN_IF_ERROR(ValidateSessionId(session.parent_id));
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].seq != first + static_cast<int64_t>(i)) {
      return Status::InvalidArgument(
          "session '" + session.id + "': event " + std::to_string(i + 1) + " has seq " +
          std::to_string(events[i].seq) + "; a restored log must be numbered " +
          std::to_string(first) + ", " + std::to_string(first + 1) + ", " +
          std::to_string(first + 2) + "...");
    }
    RETURN_IF_ERROR(ValidateRestoredRewind(session.id, events[i]));
  }
  return Status::Ok();
}

Status ValidateRestoredRewind(std::string_view session_id, const Event& event) {
  if (event.type != EventType::kRewind) return Status::Ok();
  if (event.rewind.to_seq >= 0 && event.rewind.to_seq < event.seq) return Status::Ok();
  return Status::InvalidArgument("session '" + std::string(session_id) + "': the rewind at seq " +
                                 std::to_string(event.seq) + " goes to seq " +
                                 std::to_string(event.rewind.to_seq) +
                                 "; a rewind goes to a seq from 0 to the one before it");
}

bool IsInherited(const Event& event, std::string_view session_id) {
  return !event.session_id.empty() && event.session_id != session_id;
}

Event RestoredCopy(const Event& event, std::string_view session_id) {
  Event out = event;
  if (IsInherited(event, session_id)) {
    out.id.clear();
    out.message.id.clear();
  }
  return out;
}

Status ValidateRestoredRun(std::string_view session_id, int64_t last_seq,
                           std::span<const Event> events) {
  for (size_t i = 0; i < events.size(); ++i) {
    const int64_t want = last_seq + 1 + static_cast<int64_t>(i);
    if (events[i].seq != want) {
      return Status::InvalidArgument(
          "session '" + std::string(session_id) + "' ends at seq " + std::to_string(last_seq) +
          "; restored event " + std::to_string(i + 1) + " has seq " +
          std::to_string(events[i].seq) + " where " + std::to_string(want) + " was expected");
    }
    RETURN_IF_ERROR(ValidateRestoredRewind(session_id, events[i]));
  }
  return Status::Ok();
}

void ApplyRestoredToIndex(std::span<const Event> events, int64_t message_count, IndexEntry* entry,
                          int64_t* updated_ms) {
  const int64_t count_before = entry->message_count;
  const int64_t last_before = entry->last_seq;
  for (const Event& e : events) {
    if (e.type == EventType::kMessage) ApplyMessageToIndex(e.message.role, e.message.Text(), entry);
    *updated_ms = std::max(*updated_ms, e.ts_ms);
  }
  entry->message_count = count_before + message_count;
  entry->last_seq = last_before + static_cast<int64_t>(events.size());
}

bool RestoresAsStored(const Event& event) {
  return event.type != EventType::kMessage || event.message.pruned;
}

Result<StoredEventColumns> EncodeRestoredEvent(const Event& event) {
  switch (event.type) {
    case EventType::kMessage: {
      Message stub;
      stub.role = event.message.role;
      stub.pruned = true;
      ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(stub));
      return StoredEventColumns{"", std::move(body)};
    }
    case EventType::kResourceView:
      return StoredEventColumns{event.resource_view.reason,
                                EncodeResourceViewBody(event.resource_view)};
    case EventType::kCompaction:
      return StoredEventColumns{event.compaction.summary, EncodeCompactionBody(event.compaction)};
    case EventType::kRewind:
      return StoredEventColumns{"", EncodeRewindBody(event.rewind)};
  }
  return Err(Status::Internal("unknown event type"));
}

std::string MissingBlobWarning(const Message& message, size_t part_index) {
  return "session " + message.session_id + " message " + std::to_string(message.seq) + " part " +
         std::to_string(part_index + 1) + ": blob " +
         message.parts[part_index].resource->content_sha256 +
         " is missing; the message loads without it (run `sessiondb verify`)";
}

std::vector<Segment> HistorySegments(std::span<const ChainLink> chain) {
  std::vector<Segment> out;
  if (chain.empty()) return out;
  int64_t upper = chain[0].last_seq;
  for (const ChainLink& link : chain) {
    out.push_back({link.id, link.fork_seq + 1, upper});
    upper = link.fork_seq;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<Segment> SegmentsUpTo(std::vector<Segment> segments, int64_t upto_seq) {
  std::vector<Segment> out;
  for (Segment& s : segments) {
    if (s.from_seq > upto_seq) break;
    s.to_seq = std::min(s.to_seq, upto_seq);
    out.push_back(std::move(s));
  }
  return out;
}

Message FinalDraftMessage(const Draft& draft, const Message& message) {
  Message out = message;
  out.role = draft.role;
  if (out.parts.empty()) {
    if (!draft.reasoning.empty()) out.parts.push_back(Part::Reasoning(draft.reasoning));
    out.parts.push_back(Part::Text(draft.text));
  }
  if (out.model.empty()) out.model = draft.model;
  return out;
}

Status ValidateForkPoint(const Session& parent, int64_t at_seq) {
  if (at_seq < 0 || at_seq > parent.last_seq) {
    return Status::InvalidArgument("cannot fork session " + parent.id + " at seq " +
                                   std::to_string(at_seq) + ": its log holds seqs 1.." +
                                   std::to_string(parent.last_seq) +
                                   " (0 forks before the first event)");
  }
  return Status::Ok();
}

Status MissingForkParent(std::string_view id, std::string_view parent_id, int64_t fork_seq) {
  return Status::FailedPrecondition(
      "session '" + std::string(id) + "' is a fork of '" + std::string(parent_id) + "' at seq " +
      std::to_string(fork_seq) + ", which this store does not hold; restore the parent first");
}

bool BeforeSaysNothingNew(const FileVersion& before, const FileVersion& latest) {
  return before.phase == FileVersionPhase::kBefore && latest.phase == FileVersionPhase::kAfter &&
         latest.source != kCheckpointRestoreSource &&
         latest.agent_session == before.agent_session && latest.exists == before.exists &&
         (!before.exists || latest.sha256 == before.sha256);
}

Status SessionIdTaken(std::string_view id) {
  return Status::AlreadyExists("session '" + std::string(id) + "' already exists");
}

}  // namespace sessiondb
