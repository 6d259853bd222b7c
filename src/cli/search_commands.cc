// Verbs of search and the code memory: search, reindex, recall, churn.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "api/json_forms.h"
#include "api/search_args.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"

namespace sessiondb::cli {
namespace {

// Prints the snippet with its matches marked: bold when colour is on (a
// terminal without NO_COLOR), **x** otherwise. The snippet itself is data
// and is escaped on a terminal like any other; only our bold goes through raw.
void PrintMarked(CliContext& ctx, const SearchHit& hit) {
  const bool color = ctx.UseColor();
  size_t at = 0;
  for (const auto& [b, e] : hit.highlights) {
    if (b < at || e > hit.snippet.size()) continue;
    std::cout << hit.snippet.substr(at, b - at);
    color ? ctx.WriteStyle("\033[1m") : void(std::cout << "**");
    std::cout << hit.snippet.substr(b, e - b);
    color ? ctx.WriteStyle("\033[0m") : void(std::cout << "**");
    at = e;
  }
  std::cout << hit.snippet.substr(at);
}

void AddSearch(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string query, mode = "hybrid", session, role, since, until, project, archived = "include",
                       kind = "all";
    int limit = 20, offset = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("search", "Search every message, tool call and code write");
  cmd->add_option("QUERY", args->query, "Words, \"a phrase\", a OR b, -excluded, prefix*")
      ->required();
  OfferValues(cmd->add_option("--mode", args->mode, "keyword, vector or hybrid (default)"),
              {"keyword", "vector", "hybrid"})
      ->option_text("MODE");
  cmd->add_option("--session", args->session,
                  "Only this session (an id, a unique prefix, or - for the active one)")
      ->option_text("SESSION");
  OfferValues(cmd->add_option("--role", args->role, "Only messages of this role"),
              {"system", "user", "assistant", "tool"})
      ->option_text("ROLE");
  cmd->add_option("--since", args->since, "From this time (2026-11-20 or ms)")->option_text("TIME");
  cmd->add_option("--until", args->until, "Before this time")->option_text("TIME");
  cmd->add_option("--project", args->project, "Sessions and writes under this path")
      ->option_text("PATH");
  OfferValues(cmd->add_option("--archived", args->archived, "include (default), exclude or only"),
              {"include", "exclude", "only"})
      ->option_text("WHICH");
  OfferValues(cmd->add_option("--kind", args->kind, "all (default), messages or code"),
              {"all", "messages", "code"})
      ->option_text("KIND");
  cmd->add_option("--limit", args->limit, "Hits per page (default 20)");
  cmd->add_option("--offset", args->offset, "Hits to skip (paging)");
  cmd->footer(
      "\nKeyword ranking is BM25; vector ranking is cosine similarity of embeddings\n"
      "(the built-in offline embedder, or SESSIONDB_EMBED_URL / SESSIONDB_EMBED_MODEL);\n"
      "hybrid fuses the two by reciprocal rank and shows both ranks. A search first\n"
      "puts what was written since the full-text index last caught up into it (up to\n"
      "50,000 documents; imports and `serve` keep it caught up). Vectors come from\n"
      "`sessiondb import` (what it brings, at its end or in the background), a running\n"
      "`sessiondb serve` or `sessiondb mcp`, or `sessiondb reindex`; a document with no\n"
      "vector yet is ranked by keyword alone. A word that matches nothing is searched as\n"
      "the index's nearest spelling, and the result says so.\n"
      "\nExamples:\n  sessiondb search \"token limit\"\n"
      "  sessiondb search 'parse_config' --kind code --mode keyword\n"
      "  sessiondb search retry --role assistant --since 2026-11-01 --json");
  cmd->callback([&ctx, args] {
    SearchRequest request{.query = args->query, .limit = args->limit, .offset = args->offset};
    auto mode = ParseSearchMode(args->mode, "--mode");
    if (!mode) return ctx.Fail(mode.error());
    request.mode = *mode;
    SearchFilter& f = request.filter;
    if (!args->session.empty()) {
      const std::optional<std::string> id = ctx.SessionId(args->session);
      if (!id) return;
      f.session_id = *id;
    }
    if (!args->role.empty()) {
      auto role = ParseRole(args->role);
      if (!role) return ctx.Fail(role.error());
      f.role = *role;
    }
    auto since = ParseSearchTime(args->since, "--since");
    if (!since) return ctx.Fail(since.error());
    auto until = ParseSearchTime(args->until, "--until");
    if (!until) return ctx.Fail(until.error());
    f.since_ms = *since;
    f.until_ms = *until;
    f.project = args->project;
    auto archived = ParseArchivedFilter(args->archived, "--archived");
    if (!archived) return ctx.Fail(archived.error());
    f.archived = *archived;
    if (Status s = ApplySearchKind(args->kind, "--kind", f); !s.ok()) return ctx.Fail(s);
    SearchIndex* index = ctx.OpenSearchIndex();
    if (!index) return;
    auto results = index->Search(request);
    if (!results) return ctx.Fail(results.error());
    ctx.StartPager();
    if (ctx.options.json) {
      Json out = {{"query", args->query}, {"mode", args->mode}};
      out.update(ToJson(*results));
      return ctx.PrintJson(out);
    }
    if (!results->note.empty()) std::cout << results->note << "\n";
    if (!results->corrected_query.empty()) {
      // The words no document held, which the index's nearest ones replaced.
      std::string typed;
      for (const auto& [word, used] : results->corrected_words) {
        typed += (typed.empty() ? "" : ", ") + word;
      }
      std::cout << "Showing results for " << results->corrected_query << " (no match for " << typed
                << ")\n";
    }
    int n = args->offset;
    for (const SearchHit& h : results->hits) {
      std::cout << ++n << ". ";
      if (h.kind == HitKind::kCodeWrite) {
        std::cout << "[code] " << h.file_path;
        if (!h.session_id.empty()) std::cout << " (session " << h.session_id << ")";
      } else {
        std::cout << "[" << HitKindName(h.kind) << "] " << Shorten(h.session_title, 50) << " ("
                  << h.session_id << " #" << h.seq;
        if (h.role) std::cout << ", " << RoleName(*h.role);
        std::cout << ")";
      }
      std::cout << "  " << FormatTime(h.time_ms) << "\n   ";
      PrintMarked(ctx, h);
      std::cout << "\n";
      std::ostringstream why;
      why.precision(4);
      why << "   score " << h.score;
      if (h.keyword_rank > 0)
        why << "  keyword #" << h.keyword_rank << " (bm25 " << h.keyword_score << ")";
      if (h.vector_rank > 0)
        why << "  vector #" << h.vector_rank << " (cosine " << h.vector_score << ")";
      std::cout << why.str() << "\n";
    }
    if (results->hits.empty() && (results->note.empty() || results->pending_documents > 0)) {
      std::cout << "no matches\n";
    }
    if (request.mode != SearchMode::kVector) {
      std::cout << results->keyword_matches << " keyword match"
                << (results->keyword_matches == 1 ? "" : "es")
                << (results->bounded ? " ranked (the newest; the term is very common)" : "")
                << "\n";
    }
    // Documents not embedded yet (an import's background embedding under
    // way) are found by keyword alone, quietly; --json's pending_embeddings
    // counts them.
  });
}

void AddReindex(CLI::App& app, CliContext& ctx) {
  struct Args {
    bool keyword = false, clear = false, hnsw = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "reindex", "Learn code writes from the history, embed what is not, build the vector index");
  cmd->add_flag("--keyword", args->keyword, "Also rebuild the full-text index from the log");
  cmd->add_flag("--clear-embeddings", args->clear,
                "Drop every vector first (after changing the embedding model)");
  cmd->add_flag("--hnsw", args->hnsw, "Build the approximate index whatever the store's size");
  cmd->footer(
      "\nThe full-text index follows the log: writes record their documents, and the\n"
      "index takes them in batches (here, at the end of an import, before a search, and\n"
      "in the background under `serve` and `mcp`). Embeddings are computed here (and by\n"
      "`serve`). Past 250,000 vectors an approximate (HNSW) index is built and saved under\n"
      "the store's index/ folder.");
  cmd->callback([&ctx, args] {
    SearchIndex* index = ctx.OpenSearchIndex();
    if (!index) return;
    CodeMemory* memory = ctx.OpenCodeMemory();
    if (!memory) return;
    const bool tty = isatty(STDERR_FILENO) != 0;
    Json report = Json::object();
    if (args->keyword) {
      if (Status s = index->RebuildKeywordIndex(); !s.ok()) return ctx.Fail(s);
      report["keyword_index"] = "rebuilt";
    }
    Result<HistoryScan> scan;
    {
      Progress progress(tty, "code writes in the history");
      scan = memory->LearnFromHistory(std::ref(progress));
    }
    if (!scan) return ctx.Fail(scan.error());
    report["code_writes_found"] = scan->writes_found;
    report["code_writes_learned"] = scan->writes_recorded;
    report["file_versions_learned"] = scan->file_versions;
    // What writes recorded since the index last caught up (the code writes
    // just learned among them).
    Result<int64_t> indexed = ctx.CatchUpTextIndex();
    if (!indexed) return ctx.Fail(indexed.error());
    report["text_indexed"] = *indexed;
    if (args->clear) {
      if (Status s = index->ClearEmbeddings(); !s.ok()) return ctx.Fail(s);
    }
    Result<EmbedReport> embedded;
    {
      Progress progress(tty, "embedding (" + index->EmbeddingModel() + ")");
      embedded = index->Embed(-1, std::ref(progress));
    }
    if (!embedded) return ctx.Fail(embedded.error());
    report["embedding_model"] = embedded->model;
    report["embedded"] = embedded->embedded;
    auto vectors = index->VectorCount();
    if (!vectors) return ctx.Fail(vectors.error());
    // The approximate index pays off past the threshold only. An encrypted
    // PostgreSQL namespace keeps no HNSW graph: its vectors are always
    // scanned exactly, and the report says so rather than name an index
    // that was not built. A plaintext one keeps it in this machine's cache.
    if (!index->KeepsVectorIndex()) {
      report["vector_index"] = "exact scan";
      if (args->hnsw) {
        report["vector_index_note"] =
            "an encrypted PostgreSQL namespace keeps no HNSW index; its vectors are always "
            "scanned exactly";
      }
    } else if (args->hnsw || *vectors >= SearchOptions{}.approximate_threshold) {
      Progress progress(tty, "vector index (HNSW)");
      if (Status s = index->BuildVectorIndex(std::ref(progress)); !s.ok()) return ctx.Fail(s);
      report["vector_index"] = "hnsw";
    } else {
      report["vector_index"] = "exact scan";
    }
    report["vectors"] = *vectors;
    if (ctx.options.json) return ctx.PrintJson(report);
    std::cout << "full-text index: " << *indexed << " document" << (*indexed == 1 ? "" : "s")
              << " indexed\n";
    std::cout << "code memory: " << scan->writes_recorded << " new write"
              << (scan->writes_recorded == 1 ? "" : "s") << " learned from the history ("
              << scan->writes_found << " found)\n"
              << "embeddings (" << embedded->model << "): " << embedded->embedded << " computed, "
              << *vectors << " in all\n"
              << "vector search: " << report["vector_index"].get<std::string>() << "\n";
    if (report.contains("vector_index_note")) {
      std::cout << "  (" << report["vector_index_note"].get<std::string>() << ")\n";
    }
  });
}

}  // namespace

void AddSearchCommands(CLI::App& app, CliContext& ctx) {
  AddSearch(app, ctx);
  AddReindex(app, ctx);
}

}  // namespace sessiondb::cli
