// The harness (docs/harness.md): forks, compaction, prune, rewind, resource
// views, usage and drafts (verbs.h).
#include <optional>
#include <string>
#include <vector>

#include "api/json_fields.h"
#include "verbs.h"

namespace sessiondb::node {

namespace {

Result<Reply> Fork(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string parent_id, RequiredString(args, "parentId"));
  ASSIGN_OR_RETURN(NewSession child, NewSessionFromJson(args));
  ASSIGN_OR_RETURN(int64_t at_seq, IntField(args, "atSeq", -1));
  ASSIGN_OR_RETURN(Session s, store.Run([&](Store& st) -> Result<Session> {
    int64_t seq = at_seq;
    if (seq < 0) {
      ASSIGN_OR_RETURN(Session parent, st.GetSession(parent_id));
      seq = parent.last_seq;
    }
    return st.ForkSession(parent_id, seq, child);
  }));
  return JsonReply(ToJson(s));
}

Result<Reply> Compact(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  CompactionRequest request;
  ASSIGN_OR_RETURN(request.from_seq, IntField(args, "fromSeq", 0));
  ASSIGN_OR_RETURN(request.to_seq, IntField(args, "toSeq", 0));
  ASSIGN_OR_RETURN(request.summary, StringField(args, "summary"));
  ASSIGN_OR_RETURN(request.strategy, StringField(args, "strategy"));
  ASSIGN_OR_RETURN(request.model, StringField(args, "model"));
  ASSIGN_OR_RETURN(request.limitations, StringField(args, "limitations"));
  ASSIGN_OR_RETURN(Event e, store.Run([&](Store& st) { return st.Compact(session_id, request); }));
  return JsonReply(ToJson(e));
}

Result<Reply> Prune(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(int64_t seq, IntField(args, "compactionSeq", 0));
  ASSIGN_OR_RETURN(PruneReport r,
                   store.Run([&](Store& st) { return st.PruneCompaction(session_id, seq); }));
  return JsonReply(ToJson(r));
}

Result<Reply> Rewind(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(int64_t to_seq, IntField(args, "toSeq", -1));
  ASSIGN_OR_RETURN(Event e, store.Run([&](Store& st) { return st.Rewind(session_id, to_seq); }));
  return JsonReply(ToJson(e));
}

Result<Reply> RewindIfUnchanged(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(int64_t to_seq, IntField(args, "toSeq", -1));
  ASSIGN_OR_RETURN(int64_t expected, IntField(args, "expectedLastSeq", -1));
  ASSIGN_OR_RETURN(std::optional<Event> e, store.Run([&](Store& st) {
    return st.RewindIfUnchanged(session_id, to_seq, expected);
  }));
  return JsonReply(e ? ToJson(*e) : Json());
}

Result<Reply> ViewResource(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(std::string resource_id, RequiredString(args, "resourceId"));
  ASSIGN_OR_RETURN(std::string reason, StringField(args, "reason"));
  ASSIGN_OR_RETURN(Event e, store.Run([&](Store& st) {
    return st.RecordResourceView(session_id, resource_id, reason);
  }));
  return JsonReply(ToJson(e));
}

Result<Reply> UsageOf(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(UsageReport r, store.Run([&](Store& st) { return st.GetUsage(session_id); }));
  return JsonReply(ToJson(r));
}

Result<Reply> OpenDraft(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(std::string role_name, StringField(args, "role"));
  ASSIGN_OR_RETURN(Role role, ParseRole(role_name.empty() ? "assistant" : role_name));
  ASSIGN_OR_RETURN(std::string model, StringField(args, "model"));
  ASSIGN_OR_RETURN(Draft d,
                   store.Run([&](Store& st) { return st.OpenDraft(session_id, role, model); }));
  return JsonReply(ToJson(d));
}

// A draft as ToJson wrote it (the JavaScript layer sends back what it got).
Result<Draft> DraftArg(const Json& args) {
  auto it = args.find("draft");
  if (it == args.end() || !it->is_object()) {
    return Err(Status::InvalidArgument("draft must be the object openDraft gave"));
  }
  Draft d;
  ASSIGN_OR_RETURN(d.id, RequiredString(*it, "id"));
  ASSIGN_OR_RETURN(d.session_id, StringField(*it, "session_id"));
  ASSIGN_OR_RETURN(std::string role, StringField(*it, "role"));
  ASSIGN_OR_RETURN(d.role, ParseRole(role.empty() ? "assistant" : role));
  ASSIGN_OR_RETURN(d.text, StringField(*it, "text"));
  ASSIGN_OR_RETURN(d.reasoning, StringField(*it, "reasoning"));
  ASSIGN_OR_RETURN(d.model, StringField(*it, "model"));
  ASSIGN_OR_RETURN(d.created_ms, IntField(*it, "created_ms", 0));
  ASSIGN_OR_RETURN(d.updated_ms, IntField(*it, "updated_ms", 0));
  return d;
}

Result<Reply> SaveDraft(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(Draft d, DraftArg(args));
  RETURN_IF_ERROR(store.RunStatus([&](Store& st) { return st.SaveDraft(d); }));
  return NullReply();
}

Result<Reply> ListDrafts(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string session_id, RequiredString(args, "sessionId"));
  ASSIGN_OR_RETURN(std::vector<Draft> drafts,
                   store.Run([&](Store& st) { return st.ListDrafts(session_id); }));
  return JsonReply(ListToJson(drafts));
}

Result<Reply> FinishDraft(NodeStore& store, const Json& args, const Attachments& attachments) {
  ASSIGN_OR_RETURN(std::string draft_id, RequiredString(args, "draftId"));
  Message m{.role = Role::kAssistant};
  if (auto it = args.find("message"); it != args.end() && !it->is_null()) {
    ASSIGN_OR_RETURN(m, MessageArg(*it, attachments));
  }
  ASSIGN_OR_RETURN(AppendResult r,
                   store.Run([&](Store& st) { return st.FinishDraft(draft_id, m); }));
  return JsonReply(ToJson(r));
}

Result<Reply> DiscardDraft(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string draft_id, RequiredString(args, "draftId"));
  RETURN_IF_ERROR(store.RunStatus([&](Store& st) { return st.DiscardDraft(draft_id); }));
  return NullReply();
}

}  // namespace

void AddHarnessVerbs(VerbTable& table) {
  table.insert({{"fork", Fork},
                {"compact", Compact},
                {"prune", Prune},
                {"rewind", Rewind},
                {"rewindIfUnchanged", RewindIfUnchanged},
                {"viewResource", ViewResource},
                {"usage", UsageOf},
                {"openDraft", OpenDraft},
                {"saveDraft", SaveDraft},
                {"listDrafts", ListDrafts},
                {"finishDraft", FinishDraft},
                {"discardDraft", DiscardDraft}});
}

}  // namespace sessiondb::node
