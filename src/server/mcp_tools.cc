// The MCP tools' calls: each reads through the Store, the SearchIndex or the
// CodeMemory and words the answer (mcp_text.h) next to the JSON forms.
// view_resource and the resources are in mcp_resources.cc.
#include "server/mcp_tools.h"

#include <algorithm>
#include <string>
#include <vector>

#include "api/search_args.h"
#include "api/session_ref.h"
#include "core/iso_time.h"
#include "server/mcp_text.h"

namespace sessiondb::server {
namespace {

// The typed words a corrected search replaced: "deadlok, tiktokn".
std::string CorrectedWordsText(const std::vector<std::pair<std::string, std::string>>& words) {
  std::string out;
  for (const auto& [typed, used] : words) out += (out.empty() ? "" : ", ") + typed;
  return out;
}

// A page of read_session stops once its text passes this many bytes
// (clients cap what they hand a model; Claude Code at about 25,000 tokens).
constexpr size_t kPageBytes = 100'000;
// How long a search waits for the background embedding of a short backlog.
constexpr int kCatchUpWaitMs = 2000;

// The snippet with its matches in **bold**.
std::string Marked(const SearchHit& hit) {
  std::string out;
  size_t at = 0;
  for (const auto& [b, e] : hit.highlights) {
    if (b < at || e > hit.snippet.size()) continue;
    out += hit.snippet.substr(at, b - at) + "**" + hit.snippet.substr(b, e - b) + "**";
    at = e;
  }
  return OneLine(out + hit.snippet.substr(at), 400);
}

// json_forms has no form for a warning: its fields, as the forms name them.
Json WarningJson(const ChurnWarning& w) {
  return {{"file_path", w.file_path}, {"function", w.function}, {"message", w.message}};
}

}  // namespace

ToolResult StoreError(const Status& status) {
  std::string text = status.message();
  if (status.code() == StatusCode::kNotFound && text.starts_with("session ")) {
    text += ". list_sessions and search_history give the ids of existing sessions.";
  }
  return ToolResult::Error(std::move(text));
}

ToolResult McpTools::Call(const ToolSpec& spec, ToolArgs args) {
  for (const ToolParam& param : spec.params) {
    // "" for an optional one is the argument left out (search_history's filter).
    if (!param.names_session || args.String(param.name).empty()) continue;
    auto id = ResolveSessionRef(store_, args.String(param.name));
    if (!id) return StoreError(id.error());
    args.Set(param.name, std::move(*id));
  }
  const std::string_view name = spec.name;
  if (name == "list_sessions") return ListSessions(args);
  if (name == "read_session") return ReadSession(args);
  if (name == "search_history") return SearchHistory(args);
  if (name == "search_code_memory") return SearchCodeMemory(args);
  if (name == "code_churn") return CodeChurn(args);
  if (name == "view_resource") return ViewResource(args);
  if (name == "rewind_session") return RewindSession(args);
  return ToolResult::Error("no tool named '" + std::string(name) + "'");
}

ToolResult McpTools::RewindSession(const ToolArgs& args) {
  const std::string id = args.String("session_id");
  auto event = store_.Rewind(id, args.Int("to_seq"));
  if (!event) return StoreError(event.error());
  auto session = store_.GetSession(id);
  if (!session) return StoreError(session.error());
  std::string text =
      "Rewound session " + session->id + " to seq " + std::to_string(event->rewind.to_seq) +
      " (rewind event #" + std::to_string(event->seq) + "); its view now holds " +
      std::to_string(session->message_count) + " message" +
      (session->message_count == 1 ? "" : "s") + ". Messages appended from now on follow it.\n";
  return ToolResult::Text(std::move(text),
                          Json{{"event", ToJson(*event)}, {"session", ToJson(*session)}});
}

ToolResult McpTools::ListSessions(const ToolArgs& args) {
  ListOptions options{.limit = static_cast<int>(args.Int("limit", 20)),
                      .cursor = args.String("cursor")};
  const std::string which = args.String("archived", "active");
  options.archived = which == "archived" ? ArchiveFilter::kArchived
                     : which == "all"    ? ArchiveFilter::kAll
                                         : ArchiveFilter::kActive;
  if (args.Has("project")) {
    options.metadata_key = "project";
    options.metadata_value = args.String("project");
  }
  auto page = store_.ListSessions(options);
  if (!page) return StoreError(page.error());

  std::string text;
  if (page->sessions.empty()) {
    text = options.cursor.empty()
               ? "No " + (which == "all" ? std::string() : which + " ") + "sessions" +
                     (args.Has("project") ? " of that project" : "") + ".\n"
               : "No more sessions.\n";
  } else {
    text = std::to_string(page->sessions.size()) + " session" +
           (page->sessions.size() == 1 ? "" : "s") + " (" + which +
           "), most recently updated first:\n";
  }
  for (const Session& s : page->sessions) text += DescribeSession(s);
  if (!page->next_cursor.empty()) {
    Json next = {{"cursor", page->next_cursor}};
    if (which != "active") next["archived"] = which;
    if (args.Has("project")) next["project"] = options.metadata_value;
    if (options.limit != 20) next["limit"] = options.limit;
    text += "More: list_sessions " + CallArgs(next) + "\n";
  }
  return ToolResult::Text(std::move(text), ToJson(*page));
}

ToolResult McpTools::ReadSession(const ToolArgs& args) {
  const std::string id = args.String("session_id");
  if (args.Has("last") && args.Has("from_seq")) {
    return ToolResult::Error("give from_seq (and limit) or last, not both");
  }
  auto session = store_.GetSession(id);
  if (!session) return StoreError(session.error());
  const bool from_end = args.Has("last");
  const int64_t from_seq = args.Int("from_seq", 1);
  const int64_t limit = args.Int("limit", 50);
  auto messages = from_end ? store_.ReadLastMessages(id, args.Int("last"))
                           : store_.ReadMessages(id, from_seq, limit);
  if (!messages) return StoreError(messages.error());
  SessionPageText page =
      RenderMessages(*session, *messages, static_cast<size_t>(args.Int("max_text_chars", 8000)),
                     kPageBytes, from_end);

  std::string text = "Session " + DescribeSession(*session);
  // Where the next page starts, when there may be one.
  int64_t next = 0;
  if (page.shown == 0) {
    text += from_end || from_seq <= 1
                ? "\nNo messages.\n"
                : "\nNo messages from seq " + std::to_string(from_seq) + " on (the last seq is " +
                      std::to_string(session->last_seq) + ").\n";
  } else {
    text += "\nMessages " + std::to_string(page.first_seq) + " to " +
            std::to_string(page.last_seq) + " (" + std::to_string(page.shown) + " shown):\n\n" +
            page.text;
    if (from_end) {
      if (page.first_seq > 1) {
        text += "\nEarlier messages: read_session " +
                CallArgs({{"session_id", id},
                          {"from_seq", std::max<int64_t>(1, page.first_seq - limit)},
                          {"limit", std::min<int64_t>(limit, page.first_seq - 1)}}) +
                "\n";
      }
    } else if (page.left_out > 0 || (static_cast<int64_t>(messages->size()) == limit &&
                                     page.last_seq < session->last_seq)) {
      next = page.last_seq + 1;
      text += "\nMore: read_session " +
              CallArgs({{"session_id", id}, {"from_seq", next}, {"limit", limit}}) +
              (page.left_out > 0 ? " (this page stopped at about " +
                                       std::to_string(kPageBytes / 1000) + " KB of text)"
                                 : "") +
              "\n";
    }
  }
  Json structured = {{"session", ToJson(*session)},
                     {"messages", std::move(page.messages)},
                     {"next_from_seq", next > 0 ? Json(next) : Json()}};
  return ToolResult::Text(std::move(text), std::move(structured));
}

McpTools::McpTools(Store& store, const McpOptions& options) : store_(store), options_(options) {
  if (!options_.background_embedding) return;
  Result<std::unique_ptr<EmbeddingWorker>> worker = EmbeddingWorker::Start(store_);
  if (!worker) {
    Log("new documents will not be embedded (vector search sees only what `sessiondb reindex` "
        "embedded): " +
        worker.error().message());
    return;
  }
  worker_ = std::move(*worker);
}

Result<SearchIndex*> McpTools::Index() {
  if (!index_) {
    ASSIGN_OR_RETURN(index_, SearchIndex::Open(store_));
  }
  return index_.get();
}

Result<CodeMemory*> McpTools::Memory() {
  if (!memory_) {
    ASSIGN_OR_RETURN(memory_, CodeMemory::Open(store_));
  }
  return memory_.get();
}

ToolResult McpTools::SearchHistory(const ToolArgs& args) {
  // The schema's enums were checked; the shared parsers (as the CLI and the
  // HTTP API spell these) do the rest.
  const std::string mode_name = args.String("mode", "hybrid");
  auto mode = ParseSearchMode(mode_name, "mode");
  if (!mode) return ToolResult::Error(mode.error().message());
  SearchRequest request{.query = args.String("query"),
                        .mode = *mode,
                        .limit = static_cast<int>(args.Int("limit", 10)),
                        .offset = static_cast<int>(args.Int("offset", 0))};
  SearchFilter& filter = request.filter;
  filter.session_id = args.String("session_id");
  if (args.Has("role")) {
    auto role = ParseRole(args.String("role"));
    if (!role) return ToolResult::Error(role.error().message());
    filter.role = *role;
  }
  filter.project = args.String("project");
  if (Status s = ApplySearchKind(args.String("kind", "all"), "kind", filter); !s.ok()) {
    return ToolResult::Error(s.message());
  }
  auto since = ParseSearchTime(args.String("since"), "since");
  if (!since) return ToolResult::Error(since.error().message());
  auto until = ParseSearchTime(args.String("until"), "until");
  if (!until) return ToolResult::Error(until.error().message());
  filter.since_ms = *since;
  filter.until_ms = *until;
  if (!filter.session_id.empty()) {
    auto session = store_.GetSession(filter.session_id);
    if (!session) return StoreError(session.error());
  }

  auto index = Index();
  if (!index) return ToolResult::Error(index.error().message());
  if (request.mode != SearchMode::kKeyword && options_.embed_limit > 0 && worker_) {
    // Vector ranking sees only embedded documents: give the background
    // embedding a moment to reach what was just written (the search itself
    // never writes).
    worker_->WaitUntilCaughtUp(options_.embed_limit, kCatchUpWaitMs);
  }
  auto results = (*index)->Search(request);
  if (!results) return ToolResult::Error("search failed: " + results.error().message());

  std::string text;
  if (!results->note.empty()) text += results->note + "\n";
  if (!results->corrected_query.empty()) {
    text += "Showing results for " + CallArgs(results->corrected_query) + " (no match for " +
            CorrectedWordsText(results->corrected_words) + ").\n";
  }
  if (results->hits.empty()) {
    text += "No hits for " + CallArgs(request.query) + " (" + mode_name + ").\n";
  } else {
    text += std::to_string(results->hits.size()) + " hit" + (results->hits.size() == 1 ? "" : "s") +
            " for " + CallArgs(request.query) + " (" + mode_name + "), best first:\n";
  }
  int n = request.offset;
  for (const SearchHit& h : results->hits) {
    text += std::to_string(++n) + ". ";
    if (h.kind == HitKind::kCodeWrite) {
      text += "code write " + h.file_path;
      if (!h.session_id.empty()) text += ", session " + h.session_id;
    } else {
      text += "session " + h.session_id + " \"" + OneLine(h.session_title, 60) + "\" seq " +
              std::to_string(h.seq);
      if (h.role) text += ", " + std::string(RoleName(*h.role));
      if (h.kind != HitKind::kMessage) text += " (" + std::string(HitKindName(h.kind)) + ")";
    }
    text += ", " + FormatUtcTime(h.time_ms, UtcTimeForm::kIsoSeconds) + "\n   " + Marked(h) + "\n";
  }
  if (!results->hits.empty()) {
    if (static_cast<int>(results->hits.size()) == request.limit) {
      text += "More hits: the same call with offset " + std::to_string(n) + ".\n";
    }
    // A concrete call to copy, for the first hit that is in a session's log.
    for (const SearchHit& h : results->hits) {
      if (h.kind == HitKind::kCodeWrite || h.session_id.empty()) continue;
      text += "Read around a hit, e.g. the first: read_session " +
              CallArgs({{"session_id", h.session_id},
                        {"from_seq", std::max<int64_t>(1, h.seq - 2)},
                        {"limit", 5}}) +
              "\n";
      break;
    }
  }
  if (request.mode != SearchMode::kKeyword && results->pending_embeddings > 0) {
    text += std::to_string(results->pending_embeddings) +
            " documents have no vector yet, so only keyword ranking sees them (`sessiondb "
            "reindex` embeds them).\n";
  }
  Json structured = {{"query", request.query}, {"mode", mode_name}};
  structured.update(ToJson(*results));
  return ToolResult::Text(std::move(text), std::move(structured));
}

ToolResult McpTools::SearchCodeMemory(const ToolArgs& args) {
  const std::string path = args.String("path");
  const std::string code = args.String("code");
  auto memory = Memory();
  if (!memory) return ToolResult::Error(memory.error().message());
  auto recalled = (*memory)->Recall(path, code, static_cast<int>(args.Int("limit", 3)));
  if (!recalled) return ToolResult::Error(recalled.error().message());
  auto churn = (*memory)->FileChurn(path);
  if (!churn) return ToolResult::Error(churn.error().message());
  std::vector<ChurnWarning> warnings;
  if (!code.empty()) {
    auto found = (*memory)->Warnings({.file_path = path, .new_code = code, .whole_file = false});
    if (!found) return ToolResult::Error(found.error().message());
    warnings = std::move(*found);
  }

  std::string text;
  Json recalled_json = Json::array();
  if (recalled->empty()) {
    text = "Nothing like " + path + " in the code memory.\n";
  } else {
    text = "Past writes like " + path + ", best first:\n";
  }
  int n = 0;
  for (const RecalledCode& r : *recalled) {
    text += std::to_string(++n) + ". " + r.file_path + ", " +
            FormatUtcTime(r.time_ms, UtcTimeForm::kIsoSeconds);
    if (!r.session_id.empty()) text += ", session " + r.session_id;
    if (!r.project.empty()) text += ", project " + r.project;
    text += "\n```\n" + r.preview + (r.preview.ends_with('\n') ? "" : "\n") + "```\n";
    recalled_json.push_back(ToJson(r));
  }
  text += "Churn of " + path + ": tier " + std::string(ChurnTierName(churn->tier)) + ", " +
          std::to_string(churn->edits_30d) + (churn->edits_30d == 1 ? " edit" : " edits") +
          " in 30 days, " + std::to_string(churn->edits_24h) + " in the last 24 hours.\n";
  Json warnings_json = Json::array();
  for (const ChurnWarning& w : warnings) {
    text += "Warning: " + w.message + "\n";
    warnings_json.push_back(WarningJson(w));
  }
  Json structured = {{"path", path},
                     {"recalled", std::move(recalled_json)},
                     {"churn", ToJson(*churn)},
                     {"warnings", std::move(warnings_json)}};
  return ToolResult::Text(std::move(text), std::move(structured));
}

ToolResult McpTools::CodeChurn(const ToolArgs& args) {
  auto memory = Memory();
  if (!memory) return ToolResult::Error(memory.error().message());
  const ChurnQuery query{.path_prefix = args.String("path_prefix"),
                         .functions = args.Bool("functions"),
                         .limit = static_cast<int>(args.Int("limit", 20))};
  auto hot = (*memory)->Hotspots(query);
  if (!hot) return ToolResult::Error(hot.error().message());
  std::string text =
      hot->empty()
          ? "No edits in the last 30 days" +
                (query.path_prefix.empty() ? std::string() : " under " + query.path_prefix) + ".\n"
          : std::string("tier, edits in 30 days, in 24 hours, ") +
                (query.functions ? "file: function" : "file") + ":\n";
  Json entries = Json::array();
  for (const ChurnEntry& e : *hot) {
    text += std::string(ChurnTierName(e.tier)) + "  " + std::to_string(e.edits_30d) + "  " +
            std::to_string(e.edits_24h) + "  " + e.file_path +
            (query.functions ? ": " + e.function : "") + "\n";
    entries.push_back(ToJson(e));
  }
  return ToolResult::Text(std::move(text), {{"entries", std::move(entries)}});
}

void McpTools::Log(std::string_view line) const {
  if (options_.log) options_.log(line);
}

}  // namespace sessiondb::server
