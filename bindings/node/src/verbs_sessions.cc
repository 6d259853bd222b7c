// Sessions, messages, blobs, housekeeping and projections (verbs.h).
#include <algorithm>
#include <string>
#include <vector>

#include "api/json_fields.h"
#include "core/json_parse.h"
#include "sessiondb/projection.h"
#include "verbs.h"

namespace sessiondb::node {

namespace {

Result<Reply> CreateSession(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(NewSession request, NewSessionFromJson(args));
  ASSIGN_OR_RETURN(Session s, store.Run([&](Store& st) { return st.CreateSession(request); }));
  return JsonReply(ToJson(s));
}

Result<Reply> GetSession(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string id, RequiredString(args, "id"));
  ASSIGN_OR_RETURN(Session s, store.Run([&](Store& st) { return st.GetSession(id); }));
  return JsonReply(ToJson(s));
}

Result<Reply> ListSessions(NodeStore& store, const Json& args, const Attachments&) {
  ListOptions options;
  ASSIGN_OR_RETURN(int64_t limit, IntField(args, "limit", options.limit));
  options.limit = static_cast<int>(std::clamp<int64_t>(limit, -1, 1'000'000));
  ASSIGN_OR_RETURN(options.cursor, StringField(args, "cursor"));
  ASSIGN_OR_RETURN(options.archived, ArchiveFilterArg(args, "archived", ArchiveFilter::kActive));
  ASSIGN_OR_RETURN(options.metadata_key, StringField(args, "metadataKey"));
  ASSIGN_OR_RETURN(options.metadata_value, StringField(args, "metadataValue"));
  ASSIGN_OR_RETURN(options.trash, BoolField(args, "trash", false));
  ASSIGN_OR_RETURN(SessionPage page,
                   store.Run([&](Store& st) { return st.ListSessions(options); }));
  if (!options.trash) return JsonReply(ToJson(page));
  Json sessions = Json::array();
  for (const Session& s : page.sessions) sessions.push_back(TrashedSessionToJson(s));
  return JsonReply({{"sessions", std::move(sessions)},
                    {"next_cursor", page.next_cursor.empty() ? Json() : Json(page.next_cursor)}});
}

Result<Reply> RenameSession(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string id, RequiredString(args, "id"));
  ASSIGN_OR_RETURN(std::string title, StringField(args, "title"));
  RETURN_IF_ERROR(store.RunStatus([&](Store& st) { return st.RenameSession(id, title); }));
  return NullReply();
}

Result<Reply> ArchiveSession(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string id, RequiredString(args, "id"));
  ASSIGN_OR_RETURN(bool archived, BoolField(args, "archived", true));
  RETURN_IF_ERROR(store.RunStatus([&](Store& st) { return st.SetArchived(id, archived); }));
  return NullReply();
}

Result<Reply> DeleteSession(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string id, RequiredString(args, "id"));
  RETURN_IF_ERROR(store.RunStatus([&](Store& st) { return st.DeleteSession(id); }));
  return NullReply();
}

Result<Reply> PurgeArchived(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(int64_t before_ms, IntField(args, "beforeMs", 0));
  ASSIGN_OR_RETURN(int64_t n, store.Run([&](Store& st) { return st.PurgeArchived(before_ms); }));
  return JsonReply(n);
}

Result<Reply> Append(NodeStore& store, const Json& args, const Attachments& attachments) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  auto message = args.find("message");
  if (message == args.end()) return Err(Status::InvalidArgument("message is required"));
  ASSIGN_OR_RETURN(Message m, MessageArg(*message, attachments));
  ASSIGN_OR_RETURN(AppendResult r, store.Run([&](Store& st) { return st.Append(session_id, m); }));
  return JsonReply(ToJson(r));
}

Result<Reply> AppendBatch(NodeStore& store, const Json& args, const Attachments& attachments) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  auto list = args.find("messages");
  if (list == args.end() || !list->is_array()) {
    return Err(Status::InvalidArgument("messages must be a list of messages"));
  }
  std::vector<Message> messages;
  messages.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    auto m = MessageArg((*list)[i], attachments);
    if (!m) {
      return Err(
          Status(m.error().code(), "messages[" + std::to_string(i) + "]: " + m.error().message()));
    }
    messages.push_back(std::move(*m));
  }
  ASSIGN_OR_RETURN(std::vector<AppendResult> results,
                   store.Run([&](Store& st) { return st.AppendBatch(session_id, messages); }));
  return JsonReply(ListToJson(results));
}

Result<Reply> Read(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(int64_t from_seq, IntField(args, "fromSeq", 1));
  ASSIGN_OR_RETURN(int64_t limit, IntField(args, "limit", -1));
  ASSIGN_OR_RETURN(std::vector<Message> messages, store.Run([&](Store& st) {
    return st.ReadMessages(session_id, from_seq, limit);
  }));
  return MessagesReply(messages);
}

Result<Reply> ReadLast(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(int64_t count, IntField(args, "count", 0));
  ASSIGN_OR_RETURN(std::vector<Message> messages,
                   store.Run([&](Store& st) { return st.ReadLastMessages(session_id, count); }));
  return MessagesReply(messages);
}

Result<Reply> ReadEvents(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(int64_t from_seq, IntField(args, "fromSeq", 1));
  ASSIGN_OR_RETURN(int64_t limit, IntField(args, "limit", -1));
  ASSIGN_OR_RETURN(std::vector<Event> events, store.Run([&](Store& st) {
    return st.ReadEvents(session_id, from_seq, limit);
  }));
  return JsonReply(ListToJson(events));
}

Result<Reply> ReadForProjection(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(std::vector<Event> events,
                   store.Run([&](Store& st) { return st.ReadForProjection(session_id); }));
  return JsonReply(ListToJson(events));
}

Result<Reply> ReadBlob(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string sha256, RequiredString(args, "sha256"));
  ASSIGN_OR_RETURN(bool verify, BoolField(args, "verify", false));
  ASSIGN_OR_RETURN(std::string bytes,
                   store.Run([&](Store& st) { return st.ReadBlob(sha256, verify); }));
  return Reply{.has_bytes = true, .bytes = std::move(bytes)};
}

Result<Reply> CollectGarbage(NodeStore& store, const Json& args, const Attachments&) {
  GcOptions options;
  ASSIGN_OR_RETURN(options.grace_ms, IntField(args, "graceMs", options.grace_ms));
  ASSIGN_OR_RETURN(options.dry_run, BoolField(args, "dryRun", false));
  ASSIGN_OR_RETURN(GcReport r, store.Run([&](Store& st) { return st.CollectGarbage(options); }));
  return JsonReply(ToJson(r));
}

Result<Reply> Verify(NodeStore& store, const Json&, const Attachments&) {
  ASSIGN_OR_RETURN(VerifyReport r, store.Run([&](Store& st) { return st.Verify(); }));
  return JsonReply(ToJson(r));
}

Result<Reply> Stats(NodeStore& store, const Json&, const Attachments&) {
  ASSIGN_OR_RETURN(StorageStats r, store.Run([&](Store& st) { return st.Stats(); }));
  return JsonReply(ToJson(r));
}

Result<Reply> Project(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(std::string format, StringField(args, "format"));
  ASSIGN_OR_RETURN(ProviderFormat parsed,
                   ParseProviderFormat(format.empty() ? "openai-chat" : format));
  ASSIGN_OR_RETURN(std::string body, store.Run([&](Store& st) {
    return ProjectSession(st, session_id, {.format = parsed});
  }));
  // The body is JSON text already: parsed here, once, so JavaScript gets an object.
  ASSIGN_OR_RETURN(auto parsed_body, ParseJson(body));
  return JsonReply(Json(parsed_body));
}

}  // namespace

void AddSessionVerbs(VerbTable& table) {
  table.insert({{"createSession", CreateSession},
                {"getSession", GetSession},
                {"listSessions", ListSessions},
                {"renameSession", RenameSession},
                {"archiveSession", ArchiveSession},
                {"deleteSession", DeleteSession},
                {"purgeArchived", PurgeArchived},
                {"append", Append},
                {"appendBatch", AppendBatch},
                {"read", Read},
                {"readLast", ReadLast},
                {"readEvents", ReadEvents},
                {"readForProjection", ReadForProjection},
                {"readBlob", ReadBlob},
                {"collectGarbage", CollectGarbage},
                {"verify", Verify},
                {"stats", Stats},
                {"project", Project}});
}

}  // namespace sessiondb::node
