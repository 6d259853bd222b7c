// Forgetting (docs/retention.md: the trash, erasure and its receipts, the
// ledger, retention) and import and export (verbs.h).
#include <string>
#include <vector>

#include "api/json_fields.h"
#include "core/json_parse.h"
#include "core/uuid.h"
#include "sessiondb/forget.h"
#include "sessiondb/interop.h"
#include "verbs.h"

namespace sessiondb::node {

namespace {

constexpr int64_t kMsPerDay = int64_t{24} * 60 * 60 * 1000;

// A receipt as the JSON object it prints as (ErasureReceiptToJson).
Result<Reply> ReceiptReply(const ErasureReceipt& receipt) {
  ASSIGN_OR_RETURN(auto parsed, ParseJson(ErasureReceiptToJson(receipt)));
  return JsonReply(Json(parsed));
}

Result<Reply> TrashSession(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string id, RequiredString(args, "id"));
  RETURN_IF_ERROR(store.RunStatus([&](Store& st) { return st.TrashSession(id); }));
  return NullReply();
}

Result<Reply> RestoreFromTrash(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string id, RequiredString(args, "id"));
  ASSIGN_OR_RETURN(Session s, store.Run([&](Store& st) { return st.RestoreFromTrash(id); }));
  return JsonReply(ToJson(s));
}

Result<Reply> EmptyTrash(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(int64_t days_arg, IntField(args, "olderThanDays", -1));
  if (args.contains("olderThanDays") && !args["olderThanDays"].is_null() && days_arg < 0) {
    return Err(Status::InvalidArgument("olderThanDays is " + std::to_string(days_arg) +
                                       "; it is 0 or more"));
  }
  ASSIGN_OR_RETURN(ErasureReceipt receipt, store.Run([&](Store& st) -> Result<ErasureReceipt> {
    int64_t days = days_arg;
    if (days < 0) {
      ASSIGN_OR_RETURN(RetentionPolicy policy, st.GetRetentionPolicy());
      days = policy.trash_grace_days;
    }
    const int64_t now = SystemNowMs();
    return st.EmptyTrash(days == 0 ? now + 1 : now - days * kMsPerDay);
  }));
  return ReceiptReply(receipt);
}

Result<Reply> Erase(NodeStore& store, const Json& args, const Attachments&) {
  auto request_json = args.find("request");
  if (request_json == args.end() || !request_json->is_object()) {
    return Err(Status::InvalidArgument("erase needs a request object"));
  }
  ASSIGN_OR_RETURN(EraseRequest request, EraseRequestFromJson(*request_json));
  ASSIGN_OR_RETURN(ErasureReceipt receipt, store.Run([&](Store& st) { return st.Erase(request); }));
  return ReceiptReply(receipt);
}

Result<Reply> VerifyErased(NodeStore& store, const Json& args, const Attachments&) {
  auto receipt_json = args.find("receipt");
  if (receipt_json == args.end() || !(receipt_json->is_object() || receipt_json->is_string())) {
    return Err(Status::InvalidArgument("a receipt is the object erase() gave, or its JSON text"));
  }
  const std::string text =
      receipt_json->is_string() ? receipt_json->get<std::string>() : receipt_json->dump();
  ASSIGN_OR_RETURN(ErasureReceipt receipt, ParseErasureReceipt(text));
  ASSIGN_OR_RETURN(ErasureCheck check,
                   store.Run([&](Store& st) { return st.VerifyErased(receipt); }));
  return JsonReply(ToJson(check));
}

Result<Reply> Ledger(NodeStore& store, const Json& args, const Attachments&) {
  LedgerQuery query;
  ASSIGN_OR_RETURN(query.limit, IntField(args, "limit", query.limit));
  ASSIGN_OR_RETURN(query.before_id, IntField(args, "beforeId", 0));
  ASSIGN_OR_RETURN(std::vector<LedgerEntry> entries,
                   store.Run([&](Store& st) { return st.ReadLedger(query); }));
  return JsonReply(ListToJson(entries));
}

Result<Reply> ApplyRetention(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(bool dry_run, BoolField(args, "dryRun", true));
  ASSIGN_OR_RETURN(RetentionRun run,
                   store.Run([&](Store& st) { return st.ApplyRetention(dry_run); }));
  return JsonReply(ToJson(run));
}

Result<Reply> GetRetentionPolicy(NodeStore& store, const Json&, const Attachments&) {
  ASSIGN_OR_RETURN(RetentionPolicy policy,
                   store.Run([&](Store& st) { return st.GetRetentionPolicy(); }));
  return JsonReply(ToJson(policy));
}

Result<Reply> SetRetentionPolicy(NodeStore& store, const Json& args, const Attachments&) {
  auto policy_json = args.find("policy");
  if (policy_json == args.end() || !policy_json->is_object()) {
    return Err(Status::InvalidArgument("a retention policy is an object"));
  }
  ASSIGN_OR_RETURN(RetentionPolicy policy, RetentionPolicyFromJson(*policy_json));
  RETURN_IF_ERROR(store.RunStatus([&](Store& st) { return st.SetRetentionPolicy(policy); }));
  return NullReply();
}

Result<Reply> ImportFrom(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string path, RequiredString(args, "path"));
  ImportOptions options;
  ASSIGN_OR_RETURN(std::string format, StringField(args, "format"));
  if (!format.empty()) {
    ASSIGN_OR_RETURN(options.format, ParseImportFormat(format));
  }
  ASSIGN_OR_RETURN(options.max_attachment_bytes,
                   IntField(args, "maxAttachmentBytes", options.max_attachment_bytes));
  ASSIGN_OR_RETURN(ImportReport r,
                   store.Run([&](Store& st) { return ImportPath(st, path, options); }));
  return JsonReply(ToJson(r));
}

Result<Reply> Export(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string out, RequiredString(args, "out"));
  ExportOptions options;
  ASSIGN_OR_RETURN(std::string format, StringField(args, "format"));
  ASSIGN_OR_RETURN(options.format, ParseExportFormat(format.empty() ? "snapshot" : format));
  ASSIGN_OR_RETURN(options.sessions, StringListField(args, "sessions"));
  ASSIGN_OR_RETURN(options.replace_earlier_export, BoolField(args, "replace", false));
  ASSIGN_OR_RETURN(ExportReport r,
                   store.Run([&](Store& st) { return ExportTo(st, out, options); }));
  return JsonReply({{"sessions", r.sessions},
                    {"messages", r.messages},
                    {"images", r.images},
                    {"files", r.files}});
}

}  // namespace

void AddForgetAndInteropVerbs(VerbTable& table) {
  table.insert({{"trashSession", TrashSession},
                {"restoreFromTrash", RestoreFromTrash},
                {"emptyTrash", EmptyTrash},
                {"erase", Erase},
                {"verifyErased", VerifyErased},
                {"ledger", Ledger},
                {"applyRetention", ApplyRetention},
                {"getRetentionPolicy", GetRetentionPolicy},
                {"setRetentionPolicy", SetRetentionPolicy},
                {"importPath", ImportFrom},
                {"export", Export}});
}

}  // namespace sessiondb::node
