// Store.search, Store.embed and the code memory (record_write, recall,
// hotspots, file_churn, churn_warnings) over the Store's own SearchIndex and
// CodeMemory (PyStore keeps them). Results are JSON-ready dicts.
#include <pybind11/stl.h>

#include "py_store.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "support.h"

namespace sessiondb::python {

namespace {

SearchMode SearchModeOf(const std::string& name) {
  if (name == "keyword") return SearchMode::kKeyword;
  if (name == "vector") return SearchMode::kVector;
  if (name == "hybrid") return SearchMode::kHybrid;
  ThrowInvalid("unknown search mode '" + name + "'; expected one of: keyword, vector, hybrid");
}

ArchiveFilter SearchArchiveOf(const std::string& name) {
  if (name == "active") return ArchiveFilter::kActive;
  if (name == "archived") return ArchiveFilter::kArchived;
  if (name == "all") return ArchiveFilter::kAll;
  ThrowInvalid("unknown archived filter '" + name + "'; expected one of: active, archived, all");
}

py::dict HitDict(const SearchHit& hit) {
  py::dict d;
  d["kind"] = std::string(HitKindName(hit.kind));
  d["session_id"] = hit.session_id;
  d["session_title"] = hit.session_title;
  d["seq"] = hit.seq;
  d["event_id"] = hit.event_id;
  d["role"] = hit.role ? py::object(py::str(std::string(RoleName(*hit.role)))) : py::none();
  d["time_ms"] = hit.time_ms;
  d["file_path"] = hit.file_path;
  d["code_id"] = hit.code_id;
  d["snippet"] = hit.snippet;
  d["highlights"] = py::cast(hit.highlights);
  d["score"] = hit.score;
  d["keyword_rank"] = hit.keyword_rank;
  d["keyword_score"] = hit.keyword_score;
  d["vector_rank"] = hit.vector_rank;
  d["vector_score"] = hit.vector_score;
  return d;
}

CodeWrite CodeWriteOf(std::string file_path, std::string new_code, std::string old_code,
                      bool whole_file, std::string file_context, std::string language,
                      std::string session_id, std::string project, std::string tool,
                      int64_t time_ms) {
  return CodeWrite{std::move(file_path),    std::move(old_code),
                   std::move(new_code),     whole_file,
                   std::move(file_context), std::move(language),
                   std::move(session_id),   std::move(project),
                   std::move(tool),         time_ms};
}

py::dict ChurnDict(const ChurnEntry& e) {
  py::dict d;
  d["file_path"] = e.file_path;
  d["function"] = e.function;
  d["edits_24h"] = e.edits_24h;
  d["edits_30d"] = e.edits_30d;
  d["tier"] = std::string(ChurnTierName(e.tier));
  return d;
}

#define SESSIONDB_CODE_WRITE_ARGS                                                           \
  py::arg("file_path"), py::arg("new_code"), py::kw_only(),                                 \
      py::arg("old_code") = "", py::arg("whole_file") = true, py::arg("file_context") = "", \
      py::arg("language") = "", py::arg("session_id") = "", py::arg("project") = "",        \
      py::arg("tool") = "", py::arg("time_ms") = 0

}  // namespace

void BindSearch(py::class_<PyStore>& cls) {
  cls.def(
         "search",
         [](PyStore& self, std::string query, const std::string& mode, std::string session_id,
            std::optional<std::string> role, int64_t since_ms, int64_t until_ms,
            std::string project, const std::string& archived, bool events, bool code_writes,
            int limit, int offset, int64_t catch_up_limit) {
           SearchRequest request;
           request.query = std::move(query);
           request.mode = SearchModeOf(mode);
           request.filter.session_id = std::move(session_id);
           if (role) request.filter.role = Unwrap(ParseRole(*role));
           request.filter.since_ms = since_ms;
           request.filter.until_ms = until_ms;
           request.filter.project = std::move(project);
           request.filter.archived = SearchArchiveOf(archived);
           request.filter.events = events;
           request.filter.code_writes = code_writes;
           request.limit = limit;
           request.offset = offset;
           request.catch_up_limit = catch_up_limit;
           SearchResults r =
               self.RunSearch([&](SearchIndex& index) { return Unwrap(index.Search(request)); });
           py::list hits;
           for (const SearchHit& hit : r.hits) hits.append(HitDict(hit));
           py::dict out;
           out["hits"] = hits;
           out["keyword_matches"] = r.keyword_matches;
           out["bounded"] = r.bounded;
           out["match_expression"] = r.match_expression;
           out["pending_embeddings"] = r.pending_embeddings;
           out["pending_documents"] = r.pending_documents;
           out["note"] = r.note;
           // A word no document held, searched as the index's nearest word.
           out["corrected_query"] = r.corrected_query;
           py::list corrected;
           for (const auto& [typed, used] : r.corrected_words) {
             py::dict pair;
             pair["typed"] = typed;
             pair["used"] = used;
             corrected.append(pair);
           }
           out["corrected_words"] = corrected;
           out["did_you_mean"] = r.did_you_mean;
           return out;
         },
         py::arg("query"), py::kw_only(), py::arg("mode") = "hybrid", py::arg("session_id") = "",
         py::arg("role") = py::none(), py::arg("since_ms") = 0, py::arg("until_ms") = 0,
         py::arg("project") = "", py::arg("archived") = "all", py::arg("events") = true,
         py::arg("code_writes") = true, py::arg("limit") = 20, py::arg("offset") = 0,
         py::arg("catch_up_limit") = SearchRequest{}.catch_up_limit,
         "Searches the history and the code memory (keyword, vector or hybrid). First indexes "
         "what was written before it, when at most catch_up_limit documents wait; past that it "
         "answers as of the index and says how many it did not see. Returns "
         "{'hits': [...], 'keyword_matches', 'bounded', 'match_expression', "
         "'pending_embeddings', 'pending_documents', 'note', 'corrected_query', "
         "'corrected_words', 'did_you_mean'}. Never fails on the query's text.")
      .def(
          "embed",
          [](PyStore& self, int64_t max_documents) {
            EmbedReport r = self.RunSearch(
                [&](SearchIndex& index) { return Unwrap(index.Embed(max_documents)); });
            py::dict out;
            out["embedded"] = r.embedded;
            out["remaining"] = r.remaining;
            out["model"] = r.model;
            return out;
          },
          py::arg("max_documents") = -1,
          "Embeds the documents that have no vector yet (vector and hybrid search see them then).")
      .def(
          "record_write",
          [](PyStore& self, std::string file_path, std::string new_code, std::string old_code,
             bool whole_file, std::string file_context, std::string language,
             std::string session_id, std::string project, std::string tool, int64_t time_ms) {
            CodeWrite write =
                CodeWriteOf(std::move(file_path), std::move(new_code), std::move(old_code),
                            whole_file, std::move(file_context), std::move(language),
                            std::move(session_id), std::move(project), std::move(tool), time_ms);
            RecordedWrite r = self.RunMemory(
                [&](CodeMemory& memory) { return Unwrap(memory.RecordWrite(write)); });
            py::dict out;
            out["recorded"] = r.recorded;
            out["code_id"] = r.code_id;
            out["functions"] = py::cast(r.functions);
            return out;
          },
          SESSIONDB_CODE_WRITE_ARGS,
          "Keeps an agent's code write in the code memory (once) and counts the edit.")
      .def(
          "recall",
          [](PyStore& self, const std::string& file_path, const std::string& code, int limit) {
            auto recalled = self.RunMemory(
                [&](CodeMemory& memory) { return Unwrap(memory.Recall(file_path, code, limit)); });
            py::list out;
            for (const RecalledCode& r : recalled) {
              py::dict d;
              d["file_path"] = r.file_path;
              d["preview"] = r.preview;
              d["session_id"] = r.session_id;
              d["project"] = r.project;
              d["time_ms"] = r.time_ms;
              d["code_id"] = r.code_id;
              d["score"] = r.score;
              out.append(d);
            }
            return out;
          },
          py::arg("file_path"), py::arg("code"), py::arg("limit") = 3,
          "Past writes most like `code`, one per file, best first.")
      .def(
          "hotspots",
          [](PyStore& self, const std::string& path_prefix, bool functions, int limit) {
            ChurnQuery query{path_prefix, functions, limit};
            auto entries =
                self.RunMemory([&](CodeMemory& memory) { return Unwrap(memory.Hotspots(query)); });
            py::list out;
            for (const ChurnEntry& e : entries) out.append(ChurnDict(e));
            return out;
          },
          py::arg("path_prefix") = "", py::kw_only(), py::arg("functions") = false,
          py::arg("limit") = 20, "Files (or functions) by edits in the last 30 days, most first.")
      .def(
          "file_churn",
          [](PyStore& self, const std::string& file_path) {
            ChurnEntry e = self.RunMemory(
                [&](CodeMemory& memory) { return Unwrap(memory.FileChurn(file_path)); });
            return ChurnDict(e);
          },
          py::arg("file_path"), "How often the file was rewritten, and its tier.")
      .def(
          "churn_warnings",
          [](PyStore& self, std::string file_path, std::string new_code, std::string old_code,
             bool whole_file, std::string file_context, std::string language,
             std::string session_id, std::string project, std::string tool, int64_t time_ms) {
            CodeWrite write =
                CodeWriteOf(std::move(file_path), std::move(new_code), std::move(old_code),
                            whole_file, std::move(file_context), std::move(language),
                            std::move(session_id), std::move(project), std::move(tool), time_ms);
            auto warnings =
                self.RunMemory([&](CodeMemory& memory) { return Unwrap(memory.Warnings(write)); });
            py::list out;
            for (const ChurnWarning& w : warnings) {
              py::dict d;
              d["file_path"] = w.file_path;
              d["function"] = w.function;
              d["message"] = w.message;
              out.append(d);
            }
            return out;
          },
          SESSIONDB_CODE_WRITE_ARGS,
          "What an agent should hear before making this write: functions edited a 3rd time in "
          "24 hours, a Red file.");
}

}  // namespace sessiondb::python
