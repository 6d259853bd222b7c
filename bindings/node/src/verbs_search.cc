// Search and the code memory (verbs.h), over the store's own SearchIndex and
// CodeMemory, which NodeStore opens on first use.
#include <string>
#include <vector>

#include "api/json_fields.h"
#include "api/search_args.h"
#include "verbs.h"

namespace sessiondb::node {

namespace {

Result<Reply> Search(NodeStore& store, const Json& args, const Attachments&) {
  SearchRequest request;
  ASSIGN_OR_RETURN(request.query, StringField(args, "query"));
  ASSIGN_OR_RETURN(std::string mode, StringField(args, "mode"));
  if (!mode.empty()) {
    ASSIGN_OR_RETURN(request.mode, ParseSearchMode(mode == "semantic" ? "vector" : mode, "mode"));
  }
  SearchFilter& filter = request.filter;
  ASSIGN_OR_RETURN(filter.session_id, StringField(args, "sessionId"));
  ASSIGN_OR_RETURN(std::string role, StringField(args, "role"));
  if (!role.empty()) {
    ASSIGN_OR_RETURN(filter.role, ParseRole(role));
  }
  ASSIGN_OR_RETURN(filter.since_ms, IntField(args, "sinceMs", 0));
  ASSIGN_OR_RETURN(filter.until_ms, IntField(args, "untilMs", 0));
  ASSIGN_OR_RETURN(filter.project, StringField(args, "project"));
  ASSIGN_OR_RETURN(filter.archived, ArchiveFilterArg(args, "archived", ArchiveFilter::kAll));
  ASSIGN_OR_RETURN(filter.events, BoolField(args, "events", true));
  ASSIGN_OR_RETURN(filter.code_writes, BoolField(args, "codeWrites", true));
  ASSIGN_OR_RETURN(int64_t limit, IntField(args, "limit", request.limit));
  ASSIGN_OR_RETURN(int64_t offset, IntField(args, "offset", 0));
  if (limit < 1 || limit > 1000) {
    return Err(Status::InvalidArgument("limit is " + std::to_string(limit) + "; it is 1..1000"));
  }
  if (offset < 0 || offset > 1'000'000) {
    return Err(
        Status::InvalidArgument("offset is " + std::to_string(offset) + "; it is 0..1000000"));
  }
  request.limit = static_cast<int>(limit);
  request.offset = static_cast<int>(offset);
  ASSIGN_OR_RETURN(request.catch_up_limit, IntField(args, "catchUpLimit", request.catch_up_limit));
  ASSIGN_OR_RETURN(SearchResults r,
                   store.RunSearch([&](SearchIndex& index) { return index.Search(request); }));
  return JsonReply(ToJson(r));
}

Result<Reply> Embed(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(int64_t max_documents, IntField(args, "maxDocuments", -1));
  ASSIGN_OR_RETURN(EmbedReport r,
                   store.RunSearch([&](SearchIndex& index) { return index.Embed(max_documents); }));
  return JsonReply({{"embedded", r.embedded}, {"remaining", r.remaining}, {"model", r.model}});
}

Result<CodeWrite> CodeWriteArg(const Json& args) {
  CodeWrite w;
  ASSIGN_OR_RETURN(w.file_path, RequiredString(args, "filePath"));
  ASSIGN_OR_RETURN(w.new_code, StringField(args, "newCode"));
  ASSIGN_OR_RETURN(w.old_code, StringField(args, "oldCode"));
  ASSIGN_OR_RETURN(w.whole_file, BoolField(args, "wholeFile", true));
  ASSIGN_OR_RETURN(w.file_context, StringField(args, "fileContext"));
  ASSIGN_OR_RETURN(w.language, StringField(args, "language"));
  ASSIGN_OR_RETURN(w.session_id, StringField(args, "sessionId"));
  ASSIGN_OR_RETURN(w.project, StringField(args, "project"));
  ASSIGN_OR_RETURN(w.tool, StringField(args, "tool"));
  ASSIGN_OR_RETURN(w.time_ms, IntField(args, "timeMs", 0));
  return w;
}

Result<Reply> RecordWrite(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(CodeWrite write, CodeWriteArg(args));
  ASSIGN_OR_RETURN(RecordedWrite r,
                   store.RunMemory([&](CodeMemory& memory) { return memory.RecordWrite(write); }));
  return JsonReply({{"recorded", r.recorded}, {"code_id", r.code_id}, {"functions", r.functions}});
}

Result<Reply> ChurnWarnings(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(CodeWrite write, CodeWriteArg(args));
  ASSIGN_OR_RETURN(std::vector<ChurnWarning> warnings,
                   store.RunMemory([&](CodeMemory& memory) { return memory.Warnings(write); }));
  Json out = Json::array();
  for (const ChurnWarning& w : warnings) {
    out.push_back({{"file_path", w.file_path}, {"function", w.function}, {"message", w.message}});
  }
  return JsonReply(std::move(out));
}

Result<Reply> Recall(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string file_path, StringField(args, "filePath"));
  ASSIGN_OR_RETURN(std::string code, StringField(args, "code"));
  ASSIGN_OR_RETURN(int64_t limit, IntField(args, "limit", 3));
  ASSIGN_OR_RETURN(std::vector<RecalledCode> recalled, store.RunMemory([&](CodeMemory& memory) {
    return memory.Recall(file_path, code, static_cast<int>(limit));
  }));
  return JsonReply(ListToJson(recalled));
}

Result<Reply> Hotspots(NodeStore& store, const Json& args, const Attachments&) {
  ChurnQuery query;
  ASSIGN_OR_RETURN(query.path_prefix, StringField(args, "pathPrefix"));
  ASSIGN_OR_RETURN(query.functions, BoolField(args, "functions", false));
  ASSIGN_OR_RETURN(int64_t limit, IntField(args, "limit", query.limit));
  query.limit = static_cast<int>(limit);
  ASSIGN_OR_RETURN(std::vector<ChurnEntry> entries,
                   store.RunMemory([&](CodeMemory& memory) { return memory.Hotspots(query); }));
  return JsonReply(ListToJson(entries));
}

Result<Reply> FileChurn(NodeStore& store, const Json& args, const Attachments&) {
  ASSIGN_OR_RETURN(std::string file_path, RequiredString(args, "filePath"));
  ASSIGN_OR_RETURN(ChurnEntry e, store.RunMemory([&](CodeMemory& memory) {
    return memory.FileChurn(file_path);
  }));
  return JsonReply(ToJson(e));
}

}  // namespace

void AddSearchVerbs(VerbTable& table) {
  table.insert({{"search", Search},
                {"embed", Embed},
                {"recordWrite", RecordWrite},
                {"churnWarnings", ChurnWarnings},
                {"recall", Recall},
                {"hotspots", Hotspots},
                {"fileChurn", FileChurn}});
}

}  // namespace sessiondb::node
